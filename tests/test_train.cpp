// End-to-end tests of the trainer on a small generated corpus: a run that learns
// and leaves its files, bit-identical resumption (transformer, OSMFormer and a
// recurrent model carrying state, with and without dropout), a non-finite loss that stops without damaging the last
// good checkpoints, and refusal to overwrite another run.
#include <doctest/doctest.h>

#include <cmath>

#include "core/errors.hpp"
#include "data/datasets.hpp"
#include "tests/resume_test_utils.hpp"
#include "tests/train_test_utils.hpp"
#include "train/checkpoint.hpp"
#include "tasks/evaluate.hpp"
#include "train/trainer.hpp"

using namespace liegrad;
using nlohmann::json;

TEST_CASE("a short run learns and writes config, metrics, checkpoints and result") {
  test::TempDir tmp("train_e2e");
  test::write_text(tmp / "text.txt", test::small_corpus());
  const json cfg = test::tiny_config(tmp / "text.txt", {{"type", "transformer"}, {"D", 16}, {"layers", 1}, {"heads", 2}}, 60);
  train::TrainOptions opt;
  opt.out_dir = tmp / "run";
  const train::TrainResult r = train::run_training(cfg, opt);
  CHECK(r.steps_done == 60);
  CHECK_FALSE(r.interrupted);
  for (const char* f : {"config.json", "metrics.jsonl", "best.json", "last.json", "result.json"})
    CHECK(test::fs::exists(tmp / ("run/" + std::string(f))));
  const auto losses = test::metrics_lines(tmp / "run", "loss");
  REQUIRE(losses.size() == 60);
  CHECK(losses.back()["loss"].get<double>() < 0.7 * losses.front()["loss"].get<double>());
  const json result = json::parse(test::read_text(tmp / "run/result.json"));
  CHECK(result["val_bpc"].get<double>() == doctest::Approx(r.scores["val_bpc"].get<double>()));
  CHECK(std::isfinite(result["test_bpc"].get<double>()));
  CHECK(result["val_bpc"].get<double>() < std::log2(20.0));  // better than uniform over the alphabet
  // The checkpoint reloads to the same evaluation: last.json holds the final weights, so
  // it scores the run's own validation and test splits at the run's BPC.
  train::LoadedModel m = train::load_model(tmp / "run/last.json");
  CHECK(m.step == 60);
  const data::Corpus corpus = data::load_text_file(tmp / "text.txt", 0.1, 0.1);
  REQUIRE(*m.task->text_vocab() == corpus.vocab);
  CHECK(tasks::evaluate_bpc(*m.model, corpus.val, 16).bpc == doctest::Approx(r.scores["val_bpc"].get<double>()).epsilon(1e-6));
  CHECK(tasks::evaluate_bpc(*m.model, corpus.test, 16).bpc == doctest::Approx(r.scores["test_bpc"].get<double>()).epsilon(1e-6));
  CHECK(r.headline.find("val_bpc") == 0);
}

TEST_CASE("resuming reproduces the uninterrupted run's losses exactly") {
  test::TempDir tmp("train_resume");
  test::write_text(tmp / "text.txt", test::small_corpus());
  for (const json& model : {json{{"type", "transformer"}, {"D", 16}, {"layers", 1}, {"heads", 2}},
                           json{{"type", "transformer"}, {"D", 16}, {"layers", 1}, {"heads", 2}, {"dropout", 0.2}},
                           json{{"type", "osm_rnn"}, {"group", "SO(4)"}},
                           json{{"type", "osm_rnn"}, {"group", "SO(4)"}, {"dropout", 0.2}},
                           json{{"type", "osmformer"}, {"group", "U(2)"}, {"layers", 1}, {"heads", 2},
                                {"group_param", "manifold"}},
                           json{{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 1}, {"heads", 2},
                                {"dropout", 0.2}}}) {
    CAPTURE(model.dump());
    const json cfg = test::tiny_config(tmp / "text.txt", model, 16);
    const std::string tag = model["type"].get<std::string>() + (model.contains("dropout") ? "_dropout" : "");
    const std::string full = tmp / ("full_" + tag);
    const std::string split = tmp / ("split_" + tag);
    train::TrainOptions a;
    a.out_dir = full;
    train::run_training(cfg, a);
    // Cut at step 7: between evaluations, mid-way through the schedule.
    CHECK(test::train_cut_and_resumed(cfg, split, 7).steps_done == 16);
    test::check_same_losses(full, split);
    const json ra = json::parse(test::read_text(full + "/result.json"));
    const json rb = json::parse(test::read_text(split + "/result.json"));
    CHECK(ra["val_bpc"].get<double>() == rb["val_bpc"].get<double>());
  }
}

TEST_CASE("a non-finite loss stops the run and keeps the last good checkpoints") {
  test::TempDir tmp("train_nan");
  test::write_text(tmp / "text.txt", test::small_corpus());
  json cfg = test::tiny_config(tmp / "text.txt", {{"type", "transformer"}, {"D", 8}, {"layers", 1}, {"heads", 2}}, 200);
  cfg["train"]["lr"] = 1e37;  // weights overflow float within a few steps
  cfg["train"]["clip"] = "none";
  cfg["train"]["optimizer"] = "sgd";
  cfg["train"]["eval_interval"] = 1;
  cfg["train"]["warmup"] = 0;
  train::TrainOptions opt;
  opt.out_dir = tmp / "run";
  try {
    train::run_training(cfg, opt);
    FAIL("the run should have stopped");
  } catch (const NumericError& e) {
    const std::string m = e.what();
    CHECK(m.find("non-finite") != std::string::npos);
    CHECK(m.find("best.json") != std::string::npos);
  }
  // last.json parses and holds finite parameters from a good step.
  const json last = train::read_checkpoint(tmp / "run/last.json");
  for (const auto& p : last["parameters"])
    for (const auto& v : p["values"]) REQUIRE(v.is_number());
  CHECK_NOTHROW(train::load_model(tmp / "run/best.json"));
}

TEST_CASE("an output directory holding another run is refused unless --resume or --force") {
  test::TempDir tmp("train_dir");
  test::write_text(tmp / "text.txt", test::small_corpus());
  const json cfg = test::tiny_config(tmp / "text.txt", {{"type", "lstm"}, {"hidden", 8}}, 3);
  train::TrainOptions opt;
  opt.out_dir = tmp / "run";
  train::run_training(cfg, opt);
  try {
    train::run_training(cfg, opt);
    FAIL("expected a refusal");
  } catch (const IoError& e) {
    CHECK(std::string(e.what()).find("--resume") != std::string::npos);
  }
  opt.force = true;
  CHECK(train::run_training(cfg, opt).steps_done == 3);
  train::TrainOptions r;
  r.out_dir = tmp / "empty";
  r.resume = true;
  CHECK_THROWS_AS(train::run_training(json(), r), IoError);
}

TEST_CASE("train.time_budget_s stops the run on time and decays the lr to its floor as the time runs out") {
  test::TempDir tmp("train_time_budget");
  test::write_text(tmp / "text.txt", test::small_corpus());
  json cfg = test::tiny_config(tmp / "text.txt", {{"type", "transformer"}, {"D", 16}, {"layers", 1}, {"heads", 2}}, 1000000);
  const double budget = 1.0, peak = cfg["train"]["lr"].get<double>();
  cfg["train"]["time_budget_s"] = budget;
  cfg["train"]["eval_interval"] = 1000000;  // only the final evaluation
  train::TrainOptions opt;
  opt.out_dir = tmp / "run";
  const train::TrainResult r = train::run_training(cfg, opt);
  CHECK_FALSE(r.interrupted);
  CHECK(r.steps_done > 2);          // warm-up and then some
  CHECK(r.steps_done < 1000000);    // stopped by the clock, not the step cap
  const json result = json::parse(test::read_text(tmp / "run/result.json"));
  CHECK(result["steps"].get<int64_t>() == r.steps_done);
  CHECK(result["train_seconds"].get<double>() >= budget);
  CHECK(result["config"]["train"]["time_budget_s"].get<double>() == budget);
  CHECK(result["tokens_seen"].get<int64_t>() == r.steps_done * 4 * 16);
  // Every step is logged (log_interval 1): warm-up rises to the peak, then the lr only
  // falls, and the last step runs near the floor, 0.1 x peak.
  const auto lines = test::metrics_lines(tmp / "run", "lr");
  REQUIRE(static_cast<int64_t>(lines.size()) == r.steps_done);
  const int64_t warmup = cfg["train"]["warmup"].get<int64_t>();
  CHECK(lines[static_cast<size_t>(warmup - 1)]["lr"].get<double>() == doctest::Approx(peak));
  for (size_t i = static_cast<size_t>(warmup) + 1; i < lines.size(); ++i)
    CHECK(lines[i]["lr"].get<double>() <= lines[i - 1]["lr"].get<double>());
  const double last = lines.back()["lr"].get<double>();
  CHECK(last < 0.3 * peak);  // f > 0.77 unless the last step alone took a quarter of the budget
  CHECK(last >= 0.1 * peak * (1 - 1e-12));
  // The budget is part of the stored configuration; a negative one is refused by name.
  cfg["train"]["time_budget_s"] = -1;
  opt.out_dir = tmp / "bad";
  try {
    train::run_training(cfg, opt);
    FAIL("a negative time budget was accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("time_budget_s") != std::string::npos);
  }
}
