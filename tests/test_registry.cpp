// The library API that code outside liegrad builds on: the model registry
// (models/registry.hpp), plugin loading errors (models/plugin.hpp), checkpoints from
// any training loop (train::write_checkpoint) and the trainer's per-step callback
// (TrainOptions::on_step). The plugin path itself is exercised end to end by the
// install test (tests/install_test.sh) with examples/external.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "data/datasets.hpp"
#include "models/osm_rnn.hpp"
#include "models/plugin.hpp"
#include "models/registry.hpp"
#include "tests/train_test_utils.hpp"
#include "train/checkpoint.hpp"
#include "train/evaluate.hpp"
#include "train/trainer.hpp"

using namespace liegrad;
using json = nlohmann::json;

namespace {

// A model type defined outside models/: the OSM-RNN under another name.
template <class T>
class RenamedRnn : public models::OsmRnn<T> {
 public:
  RenamedRnn(const json& config, int64_t vocab, uint64_t seed)
      : models::OsmRnn<T>(with_type(config, "osm_rnn"), vocab, seed) {
    this->config_["type"] = "test_renamed_rnn";
  }
  std::string type() const override { return "test_renamed_rnn"; }

 private:
  static json with_type(json c, const char* type) {
    c["type"] = type;
    return c;
  }
};

void register_once() {
  if (!models::is_registered_model("test_renamed_rnn")) models::register_model<RenamedRnn>("test_renamed_rnn");
}

const json kModel = {{"type", "test_renamed_rnn"}, {"group", "SO(3)"}};

}  // namespace

TEST_CASE("register_model makes a model type known to make_model, once") {
  register_once();
  auto types = models::model_types();
  CHECK(std::find(types.begin(), types.end(), "test_renamed_rnn") != types.end());
  CHECK(models::is_registered_model("test_renamed_rnn"));
  auto m = models::make_model<double>(kModel, 7, 1);
  CHECK(m->type() == "test_renamed_rnn");
  CHECK(m->config().at("type") == "test_renamed_rnn");
  CHECK(m->config().at("group") == "SO(3)");
  CHECK(m->recurrent());
  CHECK_THROWS_AS(models::register_model<RenamedRnn>("test_renamed_rnn"), ValueError);
  CHECK_THROWS_AS(models::register_model<RenamedRnn>("osm_rnn"), ValueError);
  CHECK_THROWS_AS(models::register_model<RenamedRnn>(""), ValueError);
}

TEST_CASE("an unknown model type names the plugin route") {
  try {
    models::make_model<float>({{"type", "no_such_model"}}, 5, 1);
    FAIL("no exception");
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("no_such_model") != std::string::npos);
    CHECK(msg.find("--plugin") != std::string::npos);
  }
}

TEST_CASE("load_plugin refuses missing files and libraries that are not plugins") {
  test::TempDir tmp("plugin");
  CHECK_THROWS_AS(models::load_plugin(tmp / "missing.so"), IoError);
  test::write_text(tmp / "text.so", "not a library");
  CHECK_THROWS_AS(models::load_plugin(tmp / "text.so"), IoError);
  try {
    models::load_plugin(std::string(LIEGRAD_BINARY_DIR) + "/core/libliegrad_core.so");
    FAIL("no exception");
  } catch (const IoError& e) {
    CHECK(std::string(e.what()).find("not a liegrad model plugin") != std::string::npos);
  }
}

TEST_CASE("the trainer trains a registered model and reports every step to on_step") {
  register_once();
  test::TempDir tmp("registry_train");
  test::write_text(tmp / "text.txt", test::small_corpus());
  std::vector<train::StepReport> seen;
  train::TrainOptions opt;
  opt.out_dir = tmp / "run";
  opt.on_step = [&](const train::StepReport& r) { seen.push_back(r); };
  const train::TrainResult r = train::run_training(test::tiny_config(tmp / "text.txt", kModel, 7), opt);
  CHECK(r.steps_done == 7);
  REQUIRE(seen.size() == 7);
  for (size_t i = 0; i < seen.size(); ++i) {
    CHECK(seen[i].step == static_cast<int64_t>(i) + 1);
    CHECK(seen[i].total_steps == 7);
    CHECK(std::isfinite(seen[i].loss));
    CHECK(seen[i].lr > 0);
    CHECK((seen[i].val_bpc > 0) == (seen[i].step == 5));  // eval_interval 5
  }
  // The checkpoint rebuilds the registered type.
  train::LoadedModel m = train::load_model(tmp / "run/best.json");
  CHECK(m.model->type() == "test_renamed_rnn");

  // Setting the stop flag from the callback ends the run cleanly at that step.
  std::atomic<bool> stop{false};
  train::TrainOptions o2;
  o2.out_dir = tmp / "stopped";
  o2.stop = &stop;
  o2.on_step = [&](const train::StepReport& s) {
    if (s.step == 3) stop = true;
  };
  const train::TrainResult r2 = train::run_training(test::tiny_config(tmp / "text.txt", kModel, 7), o2);
  CHECK(r2.interrupted);
  CHECK(r2.steps_done == 3);
  CHECK(train::read_checkpoint(tmp / "stopped/last.json").at("step") == 3);
}

TEST_CASE("write_checkpoint writes what load_model reads, from any training loop") {
  test::TempDir tmp("write_checkpoint");
  test::write_text(tmp / "text.txt", test::small_corpus());
  const data::Corpus corpus = data::load_text_file(tmp / "text.txt", 0.1, 0.1);
  json config = test::tiny_config(tmp / "text.txt", {{"type", "osm_rnn"}, {"group", "SO(3)"}});
  auto model = models::make_model<float>(config["model"], corpus.vocab.size(), 5);
  train::write_checkpoint(tmp / "ck.json", config, corpus.vocab, *model, 42);
  train::LoadedModel m = train::load_model(tmp / "ck.json");
  CHECK(m.step == 42);
  CHECK(m.vocab == corpus.vocab);
  CHECK(m.config.at("model") == model->config());        // complete, defaults filled in
  CHECK(m.config.at("train").at("seq_len") == 16);
  CHECK(m.config.at("train").contains("optimizer"));      // the resolved run configuration
  const auto& a = model->parameters();
  const auto& b = m.model->parameters();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].var.value().to_vector() == b[i].var.value().to_vector());
  CHECK(train::evaluate_bpc(*model, corpus.test, 16).bpc == train::evaluate_bpc(*m.model, corpus.test, 16).bpc);

  auto other = models::make_model<float>(config["model"], corpus.vocab.size() + 1, 5);
  CHECK_THROWS_AS(train::write_checkpoint(tmp / "bad.json", config, corpus.vocab, *other, 1), ValueError);
  json bad = config;
  bad["train"]["stpes"] = 1;
  CHECK_THROWS_AS(train::write_checkpoint(tmp / "bad.json", bad, corpus.vocab, *model, 1), ConfigError);
}
