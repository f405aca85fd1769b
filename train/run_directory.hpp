// A run's output directory: the checks before a run takes it (a file in the way, another
// run in it without --resume or --force) and the advisory lock held for the run's life,
// so that two writers never share one directory.
//
// The lock is flock(2) on DIR/.lock, taken without waiting: a second `liegrad train`
// (with --resume, --force or neither) fails at once with one line naming the process
// that holds it, before it changes anything. The kernel releases the lock when its
// holder exits in any way, a crash or SIGKILL included, so a lock is never stale; the
// file stays, holding the last holder's process id. Readers (`liegrad eval`, `sample`)
// take no lock: checkpoints are replaced atomically.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

namespace liegrad::train {

// The files that mark a directory as holding a run.
bool holds_run(const std::filesystem::path& dir);
// Deletes those files (--force).
void clear_run(const std::filesystem::path& dir);

// Keeps only metrics lines up to `step` (after a resume, later lines belong to the lost
// part of the interrupted run and are recomputed) and drops final-evaluation lines
// (those with "test_bpc"), which the resumed run writes again.
void truncate_metrics(const std::filesystem::path& file, int64_t step);

class RunLock {
 public:
  RunLock() = default;
  // Creates `dir` when missing and locks it; IoError "output directory 'DIR' is in use by
  // process PID ..." when another process holds it, or naming the failure.
  explicit RunLock(const std::filesystem::path& dir);
  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();  // releases the lock

  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace liegrad::train
