// Early stopping and best-validation selection (train.patience): a run whose
// validation stops improving stops after `patience` evaluations without a new best;
// result.json holds the best checkpoint's test BPC, equal to `liegrad eval` of
// best.json; an interrupted early-stopping run resumes to the same stop, and a
// finished one trains no further when resumed.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <utility>

#include "data/datasets.hpp"
#include "tests/train_test_utils.hpp"
#include "train/checkpoint.hpp"
#include "tasks/evaluate.hpp"
#include "train/trainer.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {

// 80% learnable training text, then validation and test splits of uniformly random
// symbols of the same alphabet: the best prediction of those is uniform, so the more the
// model learns the training text the worse its validation BPC, and the run overfits at once.
std::string overfitting_corpus() {
  const std::string train = test::small_corpus().substr(0, 4800);
  const std::set<char> chars(train.begin(), train.end());
  const std::string alphabet(chars.begin(), chars.end());
  std::string held_out;
  uint32_t x = 777;
  while (held_out.size() < 1200) {
    x = x * 1103515245u + 12345u;
    held_out += alphabet[(x >> 16) % alphabet.size()];
  }
  return train + held_out;  // val_frac = test_frac = 0.1: the last 1200 symbols, 600 each
}

json early_stop_config(const std::string& text, int64_t patience) {
  json cfg = test::tiny_config(text, {{"type", "transformer"}, {"D", 16}, {"layers", 1}, {"heads", 2}}, 200);
  cfg["train"]["patience"] = patience;
  return cfg;
}

// Writes the overfitting corpus to tmp/text.txt and trains it with patience 3 into
// tmp/<run>; returns the config and the result.
std::pair<json, train::TrainResult> overfitting_run(const test::TempDir& tmp, const std::string& run) {
  test::write_text(tmp / "text.txt", overfitting_corpus());
  const json cfg = early_stop_config(tmp / "text.txt", 3);
  train::TrainOptions opt;
  opt.out_dir = tmp / run;
  return {cfg, train::run_training(cfg, opt)};
}

}  // namespace

TEST_CASE("train.patience stops a run whose validation BPC stops improving") {
  test::TempDir tmp("early_stop_frozen");
  test::write_text(tmp / "text.txt", test::small_corpus());
  // lr 1e-30 leaves every float weight unchanged: every evaluation gives the same
  // validation BPC, so only the first (step 5) is a new best and the run stops at the
  // third evaluation after it, step 5 + 3 x 5.
  json cfg = early_stop_config(tmp / "text.txt", 3);
  cfg["train"]["lr"] = 1e-30;
  train::TrainOptions opt;
  opt.out_dir = tmp / "run";
  const train::TrainResult r = train::run_training(cfg, opt);
  CHECK(r.stopped_early);
  CHECK_FALSE(r.interrupted);
  CHECK(r.steps_done == 20);
  CHECK(r.best_step == 5);
  const json result = json::parse(test::read_text(tmp / "run/result.json"));
  CHECK(result["steps"] == 20);
  CHECK(result["stopped_early"] == true);
  CHECK(result["best_step"] == 5);
  CHECK(result["config"]["train"]["patience"] == 3);
  CHECK(result["test_bpc_at_best"].get<double>() == result["test_bpc"].get<double>());  // the same weights
  CHECK(test::metrics_lines(tmp / "run", "loss").size() == 20);
  // Without patience the same run goes the distance.
  cfg["train"]["patience"] = 0;
  cfg["train"]["steps"] = 30;
  opt.out_dir = tmp / "no_patience";
  const train::TrainResult full = train::run_training(cfg, opt);
  CHECK_FALSE(full.stopped_early);
  CHECK(full.steps_done == 30);
  CHECK_FALSE(json::parse(test::read_text(tmp / "no_patience/result.json"))["config"]["train"].contains("patience"));
}

TEST_CASE("result.json's test BPC at the best checkpoint is liegrad eval of best.json") {
  test::TempDir tmp("early_stop_best");
  const train::TrainResult r = overfitting_run(tmp, "run").second;
  REQUIRE(r.stopped_early);
  CHECK(r.steps_done < 200);
  CHECK(r.steps_done == r.best_step + 3 * 5);
  const json result = json::parse(test::read_text(tmp / "run/result.json"));
  CHECK(result["best_step"] == r.best_step);
  const train::LoadedModel best = train::load_model(tmp / "run/best.json");
  CHECK(best.step == r.best_step);
  const data::Corpus corpus = data::load_corpus("text:" + tmp / "text.txt", "", 0.1, 0.1);
  const double test_at_best = tasks::evaluate_bpc(*best.model, corpus.test, 16).bpc;
  const double val_at_best = tasks::evaluate_bpc(*best.model, corpus.val, 16).bpc;
  CHECK(result["test_bpc_at_best"].get<double>() == test_at_best);
  CHECK(result["best_val_bpc"].get<double>() == val_at_best);
  // The final model is another one, worse on validation.
  CHECK(result["test_bpc"].get<double>() != test_at_best);
  CHECK(result["val_bpc"].get<double>() > val_at_best);
  // The command line says the same.
  const test::Proc p =
      test::run_liegrad({"eval", "--checkpoint", tmp / "run/best.json", "--split", "test", "--json"}, tmp.path.string());
  REQUIRE(p.exit_code == 0);
  CHECK(json::parse(p.out)["bpc"].get<double>() == doctest::Approx(test_at_best).epsilon(1e-6));
}

TEST_CASE("an early-stopping run resumes to the same stop, and a finished one trains no further") {
  test::TempDir tmp("early_stop_resume");
  const auto [cfg, full] = overfitting_run(tmp, "full");
  REQUIRE(full.stopped_early);
  REQUIRE(full.steps_done - full.best_step == 15);
  // Interrupted between the second and third evaluation without a new best: the count
  // of evaluations since the best must survive the resume.
  train::TrainOptions b;
  b.out_dir = tmp / "split";
  b.stop_at = full.steps_done - 3;
  CHECK(train::run_training(cfg, b).interrupted);
  train::TrainOptions c;
  c.out_dir = tmp / "split";
  c.resume = true;
  const train::TrainResult rest = train::run_training(json(), c);
  CHECK(rest.stopped_early);
  CHECK(rest.steps_done == full.steps_done);
  CHECK(rest.best_step == full.best_step);
  const auto la = test::metrics_lines(tmp / "full", "loss"), lb = test::metrics_lines(tmp / "split", "loss");
  REQUIRE(la.size() == lb.size());
  for (size_t i = 0; i < la.size(); ++i) CHECK(la[i]["loss"].get<double>() == lb[i]["loss"].get<double>());
  const json ra = json::parse(test::read_text(tmp / "full/result.json"));
  const json rb = json::parse(test::read_text(tmp / "split/result.json"));
  for (const char* k : {"val_bpc", "test_bpc", "best_val_bpc", "test_bpc_at_best"}) {
    CAPTURE(k);
    CHECK(ra[k].get<double>() == rb[k].get<double>());
  }
  // Resuming the finished run, even with a larger step budget, only re-reports it.
  json more = cfg;
  more["train"]["steps"] = 400;
  train::TrainOptions d;
  d.out_dir = tmp / "full";
  d.resume = true;
  const train::TrainResult again = train::run_training(more, d);
  CHECK(again.stopped_early);
  CHECK(again.steps_done == full.steps_done);
  CHECK(test::metrics_lines(tmp / "full", "loss").size() == la.size());
  CHECK(test::metrics_lines(tmp / "full", "test_bpc").size() == 1);  // the final line is rewritten, not repeated
  const json rc = json::parse(test::read_text(tmp / "full/result.json"));
  CHECK(rc["test_bpc_at_best"].get<double>() == ra["test_bpc_at_best"].get<double>());
  CHECK(rc["steps"] == ra["steps"]);
}
