// A live run directory is locked (train/run_directory.hpp): a second writer — a second
// training with --resume, with --force, or a fresh one — is refused in one line naming
// the process that holds it, and nothing of the live run changes; a lock whose holder
// is gone is taken over.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/errors.hpp"
#include "tests/train_test_utils.hpp"
#include "train/run_directory.hpp"
#include "train/trainer.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {

json lock_config(const std::string& text, int64_t steps) {
  return test::tiny_config(text, {{"type", "lstm"}, {"hidden", 8}}, steps);
}

}  // namespace

TEST_CASE("a second writer on a live run directory is refused and the live run is untouched") {
  test::TempDir tmp("run_lock");
  test::write_text(tmp / "text.txt", test::small_corpus());
  const json cfg = lock_config(tmp / "text.txt", 20);
  // The first run pauses after step 10 (last.json written at its evaluation) until the
  // second writers have tried.
  std::mutex mu;
  std::condition_variable cv;
  bool paused = false, go_on = false;
  train::TrainOptions first;
  first.out_dir = tmp / "run";
  first.on_step = [&](const train::StepReport& r) {
    if (r.step != 10) return;
    std::unique_lock<std::mutex> lock(mu);
    paused = true;
    cv.notify_all();
    cv.wait(lock, [&] { return go_on; });
  };
  train::TrainResult first_result;
  std::thread runner([&] { first_result = train::run_training(cfg, first); });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return paused; });
  }
  const std::string metrics_before = test::read_text(tmp / "run/metrics.jsonl");
  const std::string last_before = test::read_text(tmp / "run/last.json");
  const std::string expected = "is in use by a running training (process " + std::to_string(getpid()) + ")";
  for (const char* mode : {"resume", "force", "plain"}) {
    CAPTURE(mode);
    train::TrainOptions second;
    second.out_dir = tmp / "run";
    second.resume = std::string(mode) == "resume";
    second.force = std::string(mode) == "force";
    try {
      train::run_training(second.resume ? json() : cfg, second);
      FAIL("a second writer was let in");
    } catch (const IoError& e) {
      const std::string m = e.what();
      CHECK(m.find(expected) != std::string::npos);
      CHECK(m.find('\n') == std::string::npos);
    }
  }
  CHECK(test::read_text(tmp / "run/metrics.jsonl") == metrics_before);
  CHECK(test::read_text(tmp / "run/last.json") == last_before);
  {
    std::lock_guard<std::mutex> lock(mu);
    go_on = true;
  }
  cv.notify_all();
  runner.join();
  // The first run ended normally, its steps in order, each once.
  CHECK(first_result.steps_done == 20);
  int64_t previous = 0;
  for (const json& line : test::metrics_lines(tmp / "run", "loss")) {
    CHECK(line["step"].get<int64_t>() == previous + 1);
    previous = line["step"].get<int64_t>();
  }
  CHECK(previous == 20);
  // Its lock went with it: resuming the finished run is allowed again (it trains no further).
  train::TrainOptions again;
  again.out_dir = tmp / "run";
  again.resume = true;
  CHECK(train::run_training(json(), again).steps_done == 20);
}

TEST_CASE("the command line refuses a locked run directory in one line; a stale lock is taken over") {
  test::TempDir tmp("run_lock_cli");
  test::write_text(tmp / "text.txt", test::small_corpus());
  test::write_text(tmp / "c.json", lock_config(tmp / "text.txt", 4).dump());
  // A crashed run leaves .lock with its process id but holds no lock: it is stale.
  std::filesystem::create_directories(tmp / "run");
  test::write_text(tmp / "run/.lock", "999999\n");
  const test::Proc t = test::run_liegrad({"train", "--config", tmp / "c.json", "--out", tmp / "run", "--quiet"},
                                         tmp.path.string());
  INFO("stderr: " << t.err);
  REQUIRE(t.exit_code == 0);
  {
    // This process holds the directory, as a live `liegrad train` would.
    const train::RunLock held(tmp / "run");
    for (const char* flag : {"--resume", "--force"}) {
      const test::Proc q =
          test::run_liegrad({"train", "--config", tmp / "c.json", "--out", tmp / "run", flag}, tmp.path.string());
      CAPTURE(flag);
      CHECK(q.exit_code == 1);
      CHECK(std::count(q.err.begin(), q.err.end(), '\n') == 1);
      CHECK(q.err.find("(process " + std::to_string(getpid()) + ")") != std::string::npos);
    }
    // Readers take no lock.
    const test::Proc e = test::run_liegrad({"eval", "--checkpoint", tmp / "run/last.json", "--text", tmp / "text.txt"},
                                           tmp.path.string());
    CHECK(e.exit_code == 0);
  }
  const test::Proc f = test::run_liegrad({"train", "--config", tmp / "c.json", "--out", tmp / "run", "--force", "--quiet"},
                                         tmp.path.string());
  CHECK(f.exit_code == 0);
}
