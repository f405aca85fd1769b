// The task registry (tasks/registry.hpp) with a task kind the library does not know:
// the copy task of tests/tasks/copy_task.hpp, registered in one line, trains, evaluates,
// checkpoints and resumes through the unchanged trainer, and `liegrad eval` reads its
// checkpoint through the same task loaded as a plugin. Also the registry's own rules.
#include <doctest/doctest.h>

#include "core/errors.hpp"
#include "tasks/registry.hpp"
#include "tests/tasks/copy_task.hpp"
#include "tests/train_test_utils.hpp"
#include "train/checkpoint.hpp"
#include "train/run_config.hpp"
#include "train/trainer.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {

// The one registration line, once per process.
const bool copy_registered = [] {
  tasks::register_task(test::copy_task_spec());
  return true;
}();

json copy_config(int64_t steps) {
  json train = test::tiny_train(steps, 8);
  train["eval_interval"] = 10;
  return {{"model", {{"type", "lstm"}, {"hidden", 16}}},
          {"data", {{"dataset", "copy:4"}, {"length", 8}}},
          {"train", train}};
}

}  // namespace

TEST_CASE("a registered toy task trains, checkpoints, resumes and is evaluated by liegrad eval") {
  REQUIRE(copy_registered);
  test::TempDir tmp("copy_task");
  train::TrainOptions a;
  a.out_dir = tmp / "full";
  const train::TrainResult r = train::run_training(copy_config(60), a);
  // It learns to copy, and the run directory holds the task's own books.
  const json result = json::parse(test::read_text(tmp / "full/result.json"));
  CHECK(result["val_acc"].get<double>() > 0.95);
  CHECK(r.headline.rfind("copy_acc ", 0) == 0);
  CHECK(result["tokens_seen"] == 60 * 8 * 8);
  CHECK(result["config"]["data"] == json{{"dataset", "copy:4"}, {"length", 8}, {"val_sequences", 32}, {"loss_scale", 1.0}});
  CHECK_FALSE(result["config"]["train"].contains("seq_len"));  // the task says it has no use for it
  CHECK(test::metrics_lines(tmp / "full", "acc").size() == 60);
  CHECK(test::metrics_lines(tmp / "full", "val_loss").size() == 6);  // steps 10..50 and the end
  const json last = train::read_checkpoint(tmp / "full/last.json");
  CHECK(last["vocab"] == json{{"task", "copy:4"}, {"symbols", 4}});
  CHECK(last["data_position"]["copy_drawn"] == 60);
  CHECK(last["progress"].contains("best_val_loss"));

  // Interrupted at step 25 and resumed: the same losses, step for step.
  train::TrainOptions b;
  b.out_dir = tmp / "split";
  b.stop_at = 25;
  CHECK(train::run_training(copy_config(60), b).interrupted);
  b.stop_at = 0;
  b.resume = true;
  train::run_training(json(), b);
  const auto full = test::metrics_lines(tmp / "full", "loss"), split = test::metrics_lines(tmp / "split", "loss");
  REQUIRE(full.size() == split.size());
  for (size_t i = 0; i < full.size(); ++i) CHECK(split[i]["loss"] == full[i]["loss"]);
  CHECK(json::parse(test::read_text(tmp / "split/result.json"))["val_acc"] == result["val_acc"]);

  // The checkpoint reloads with its task; `liegrad eval` loads the task as a plugin.
  const train::LoadedModel m = train::load_model(tmp / "full/last.json");
  CHECK(m.task->dataset() == "copy:4");
  CHECK(m.task->text_vocab() == nullptr);
  const test::Proc e = test::run_liegrad(
      {"eval", "--plugin", LIEGRAD_COPY_TASK_PLUGIN, "--checkpoint", tmp / "full/last.json", "--json"}, tmp.path.string());
  INFO("stderr: " << e.err);
  REQUIRE(e.exit_code == 0);
  const json ev = json::parse(e.out);
  CHECK(ev["length"] == 8);
  CHECK(ev["accuracy"].get<double>() == doctest::Approx(result["val_acc"].get<double>()));
  CHECK(ev["step"] == 60);
  // Its own option, and another kind's refused in one line.
  const test::Proc e2 = test::run_liegrad(
      {"eval", "--plugin", LIEGRAD_COPY_TASK_PLUGIN, "--checkpoint", tmp / "full/last.json", "--length", "32"},
      tmp.path.string());
  CHECK(e2.exit_code == 0);
  CHECK(e2.out.find("copy at length 32") != std::string::npos);
  const test::Proc e3 = test::run_liegrad(
      {"eval", "--plugin", LIEGRAD_COPY_TASK_PLUGIN, "--checkpoint", tmp / "full/last.json", "--lengths", "64"},
      tmp.path.string());
  CHECK(e3.exit_code == 2);
  CHECK(e3.err.find("--lengths applies to \"words:<group>\" runs, not to copy:4") != std::string::npos);
  CHECK(std::count(e3.err.begin(), e3.err.end(), '\n') == 1);
  // Without the plugin the tool does not know the task, and says so in one line.
  const test::Proc e4 = test::run_liegrad({"eval", "--checkpoint", tmp / "full/last.json"}, tmp.path.string());
  CHECK(e4.exit_code == 1);
  CHECK(e4.err.find("unknown dataset 'copy:4'") != std::string::npos);
}

TEST_CASE("the trainer trains on the task's own loss") {
  REQUIRE(copy_registered);
  test::TempDir tmp("copy_loss");
  json one = copy_config(1), two = copy_config(1);
  two["data"]["loss_scale"] = 2.0;
  train::TrainOptions a, b;
  a.out_dir = tmp / "one";
  b.out_dir = tmp / "two";
  train::run_training(one, a);
  train::run_training(two, b);
  // The same weights and batch at step 1: the logged loss doubles.
  const double l1 = test::metrics_lines(tmp / "one", "loss").at(0)["loss"].get<double>();
  const double l2 = test::metrics_lines(tmp / "two", "loss").at(0)["loss"].get<double>();
  CHECK(l2 == doctest::Approx(2 * l1).epsilon(1e-6));
}

TEST_CASE("the task registry: every kind's names in the unknown-dataset error, no duplicate kinds") {
  REQUIRE(copy_registered);
  try {
    train::parse_run_config({{"model", {{"type", "lstm"}}}, {"data", {{"dataset", "tinyshakespear"}}}});
    FAIL("an unknown dataset was accepted");
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    CHECK(m.find("\"tinyshakespeare\", \"ptb_char\", \"text:<path>\"") != std::string::npos);
    CHECK(m.find("\"words:<group>\"") != std::string::npos);
    CHECK(m.find("\"rotations:SO3\"") != std::string::npos);
    CHECK(m.find("\"copy:<K>\"") != std::string::npos);
    CHECK(m.find("did you mean 'tinyshakespeare'") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(tasks::register_task(test::copy_task_spec()), doctest::Contains("registered already"),
                       ValueError);
  tasks::TaskSpec incomplete;
  incomplete.name = "half";
  CHECK_THROWS_WITH_AS(tasks::register_task(incomplete), doctest::Contains("needs claims"), ValueError);
  // A task's unused train key is refused with its hint.
  CHECK_THROWS_WITH_AS(train::parse_run_config({{"model", {{"type", "lstm"}}},
                                                {"data", {{"dataset", "copy:4"}}},
                                                {"train", {{"seq_len", 8}}}}),
                       doctest::Contains("train.seq_len: not used by copy:4"), ConfigError);
  std::vector<std::string> names;
  for (const tasks::TaskSpec* s : tasks::task_specs()) names.push_back(s->name);
  CHECK(names == std::vector<std::string>{"text", "words", "rotations", "copy"});
}

TEST_CASE("eval options: --sequences and comma-separated lengths, bad text in the caller's one-line message") {
  const tasks::EvalRequest none;
  CHECK(none.option("lengths").empty());
  CHECK(none.sequences_option(7) == 7);
  const tasks::EvalRequest given{"val", {{"sequences", "12"}, {"lengths", "8,16"}}};
  CHECK(given.option("lengths") == "8,16");
  CHECK(given.sequences_option(7) == 12);
  for (const std::string bad : {"0", "-2", "12x", "x", " "}) {
    CAPTURE(bad);
    const tasks::EvalRequest r{"test", {{"sequences", bad}}};
    CHECK_THROWS_WITH_AS(r.sequences_option(7), ("--sequences must be an integer >= 1, got '" + bad + "'").c_str(),
                         ValueError);
  }
  std::vector<int64_t> seen;
  const auto note = [&](int64_t v) { seen.push_back(v); };
  CHECK(tasks::parse_length_list("64,128,256", "bad", "none", note) == std::vector<int64_t>{64, 128, 256});
  CHECK(seen == std::vector<int64_t>{64, 128, 256});
  CHECK(tasks::parse_length_list("64,", "bad", "none", note) == std::vector<int64_t>{64});
  for (const std::string bad : {"64,,8", "64,x", "8.5", ","}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(tasks::parse_length_list(bad, "bad", "none", note), "bad", ValueError);
  }
  CHECK_THROWS_WITH_AS(tasks::parse_length_list("", "bad", "none", note), "none", ValueError);
  // The range check is the caller's: its exception passes through.
  const auto at_most_100 = [](int64_t v) {
    if (v > 100) throw ValueError("over 100: " + std::to_string(v));
  };
  CHECK_THROWS_WITH_AS(tasks::parse_length_list("8,101", "bad", "none", at_most_100), "over 100: 101", ValueError);
}
