// TempDir: a fresh directory under the system temp dir for one test, removed with
// its contents when the test ends. Shared by every test that writes files.
#pragma once
#include <filesystem>
#include <random>
#include <string>

namespace liegrad::test {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed by the destructor.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag = "test") {
    std::random_device rd;
    path = fs::temp_directory_path() / ("liegrad_" + tag + "_" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}  // namespace liegrad::test
