// The run directory's checks and lock (see run_directory.hpp).
#include "train/run_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "train/checkpoint.hpp"

namespace liegrad::train {

namespace fs = std::filesystem;

namespace {
constexpr const char* kRunFiles[] = {"config.json", "metrics.jsonl", "last.json", "best.json", "result.json"};
}

bool holds_run(const fs::path& dir) {
  for (const char* f : kRunFiles)
    if (fs::exists(dir / f)) return true;
  return false;
}

void clear_run(const fs::path& dir) {
  for (const char* f : kRunFiles) fs::remove(dir / f);
}

void truncate_metrics(const fs::path& file, int64_t step) {
  if (!fs::exists(file)) return;
  std::ifstream in(file);
  std::string line, kept;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("step")) continue;
    if (j.at("step").get<int64_t>() <= step && !j.contains("test_bpc")) kept += line + "\n";
  }
  write_file_atomic(file.string(), kept);
}

RunLock::RunLock(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create output directory '" + dir.string() + "': " + ec.message());
  const fs::path file = dir / ".lock";
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError("cannot open '" + file.string() + "' to lock the run: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char pid[32] = {0};
    const ssize_t n = ::pread(fd_, pid, sizeof pid - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK)
      throw IoError("cannot lock '" + file.string() + "': " + std::strerror(err));
    std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "unknown";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    throw IoError("output directory '" + dir.string() + "' is in use by a running training (process " + holder +
                  "); wait for it to end or stop it (SIGTERM writes last.json) before training there again");
  }
  // The holder's process id, for the message a second writer gets.
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    // The lock holds without the note; only the second writer's message loses the id.
  }
}

RunLock::RunLock(RunLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace liegrad::train
