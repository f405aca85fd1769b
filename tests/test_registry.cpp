// The library API that code outside liegrad builds on: the model registry
// (models/registry.hpp: a toy type added by its class and one registration works with
// make_model, --match and the FLOP count; an unknown type is one error everywhere; the
// built-in entries list the keys their constructors read and keep their --match
// results), plugin loading errors (models/plugin.hpp), checkpoints from any training
// loop (train::write_checkpoint) and the trainer's per-step callback
// (TrainOptions::on_step). The plugin path itself is exercised end to end by the
// install test (tests/install_test.sh) with examples/external.
#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "autograd/linear.hpp"
#include "autograd/nn_ops.hpp"
#include "core/config.hpp"
#include "core/errors.hpp"
#include "core/rng.hpp"
#include "data/datasets.hpp"
#include "models/osm_rnn.hpp"
#include "models/param_search.hpp"
#include "models/plugin.hpp"
#include "models/registry.hpp"
#include "tests/train_test_utils.hpp"
#include "measure/bench.hpp"
#include "train/checkpoint.hpp"
#include "tasks/evaluate.hpp"
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

// A new model type: embedding (V,h), then a linear head (h,C) with bias. Count
// V h + h C + C.
template <class T>
class ToyBigram : public models::ModelBase<T> {
 public:
  ToyBigram(const json& config, int64_t vocab, uint64_t seed, int64_t classes)
      : models::ModelBase<T>(config, vocab, classes) {
    ConfigReader c(config, "model");
    c.allow({"type", "comment"});
    const int64_t h = c.get_int("hidden", 4, 1);
    c.finish();
    this->config_ = {{"type", "test_toy_bigram"}, {"hidden", h}};
    Rng rng(seed);
    embed_ = this->add_param("embed", rng.normal_array<T>(Shape{vocab, h}), ag::ParamRole::Weight);
    head_w_ = this->add_param("head.weight", rng.normal_array<T>(Shape{h, this->C_}, 0.1), ag::ParamRole::Weight);
    head_b_ = this->add_param("head.bias", Array<T>(Shape{this->C_}), ag::ParamRole::Bias);
  }
  std::string type() const override { return "test_toy_bigram"; }
  ag::Var<T> forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, models::RecurrentState<T>*) override {
    return ag::linear(ag::embedding(embed_, inputs, {B, T_}), head_w_, head_b_);
  }

 private:
  ag::Var<T> embed_, head_w_, head_b_;
};

// 6 h V: the head's product, forward and backward (the embedding is a gather).
double toy_flops(const json& m, int64_t V, int64_t, double) {
  return 6.0 * models::resolved_key(m, "hidden").get<double>() * static_cast<double>(V);
}

void register_toy_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The one registration line.
    models::register_model(models::model_spec<ToyBigram>(
        "test_toy_bigram",
        {.knob = models::integer_knob("hidden", 1, 1000), .flops_per_token = toy_flops}));
  });
}

// The message of the ConfigError `f` throws ("" when none).
template <class F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a model type added by its class and one registration works with make_model, --match and FLOPs") {
  register_toy_once();
  const auto types = models::model_types();
  CHECK(std::find(types.begin(), types.end(), "test_toy_bigram") != types.end());
  // Its keys are recorded from what its constructor reads, not listed by hand.
  CHECK(models::config_keys(models::find_model_spec("test_toy_bigram")) == std::vector<std::string>{"hidden"});

  auto lm = models::make_model<double>({{"type", "test_toy_bigram"}, {"hidden", 3}}, 7, 1);
  CHECK(lm->type() == "test_toy_bigram");
  CHECK(lm->parameter_count() == 7 * 3 + 3 * 7 + 7);
  // The class takes the class count, so the type serves classification tasks too.
  auto clf = models::make_model<float>({{"type", "test_toy_bigram"}, {"hidden", 3}}, 7, 1, 5);
  CHECK(clf->parameter_count() == 7 * 3 + 3 * 5 + 5);
  CHECK(clf->forward({0, 1, 2, 3, 4, 5}, 2, 3).shape() == Shape{2, 3, 5});
  CHECK_THROWS_WITH_AS(models::make_model<float>({{"type", "test_toy_bigram"}, {"hiden", 3}}, 7, 1),
                       doctest::Contains("did you mean 'hidden'"), ConfigError);

  // --match: V = 10 gives 20 h + 10, so 505 is nearest at h = 25 (510).
  const json matched = models::match_parameter_count({{"type", "test_toy_bigram"}, {"comment", "kept"}}, 10, 505);
  CHECK(matched == json{{"type", "test_toy_bigram"}, {"comment", "kept"}, {"hidden", 25}});
  CHECK(models::count_parameters(matched, 10) == 510);
  // With 4 classes: 10 h + 4 h + 4 nearest 505 at h = 36 (508).
  CHECK(models::match_parameter_count({{"type", "test_toy_bigram"}}, 10, 505, 4).at("hidden") == 36);

  // FLOPs per token of the resolved config.
  auto built = models::make_model<float>(matched, 10, 1);
  CHECK(measure::training_flops_per_token(built->config(), 10, 8, 0.0) == 6.0 * 25 * 10);
}

TEST_CASE("a type registered with factories only has no --match knob and no FLOP count") {
  register_once();
  const std::string msg = config_error([] { models::match_parameter_count(kModel, 7, 1000); });
  CHECK(msg.find("test_renamed_rnn") != std::string::npos);
  CHECK(msg.find("no size knob") != std::string::npos);
  auto m = models::make_model<float>(kModel, 7, 1);
  CHECK(measure::training_flops_per_token(m->config(), 7, 8, 1.0) == 0);
  // Its keys are the ones the OSM-RNN constructor it calls reads.
  CHECK(models::config_keys(models::find_model_spec("test_renamed_rnn")) ==
        models::config_keys(models::find_model_spec("osm_rnn")));
  // Its class has no class count: a language model only.
  CHECK(config_error([] { models::make_model<float>(kModel, 7, 1, 3); }).find("language model") != std::string::npos);
}

TEST_CASE("an unknown model type is the same one-line ConfigError from make_model, --match and FLOPs") {
  register_toy_once();
  const json bad = {{"type", "no_such_model"}};
  const std::string from_make = config_error([&] { models::make_model<float>(bad, 5, 1); });
  const std::string from_match = config_error([&] { models::match_parameter_count(bad, 5, 1000); });
  const std::string from_flops = config_error([&] { measure::training_flops_per_token(bad, 5, 8, 0.0); });
  CHECK(from_make.find("unknown model type 'no_such_model'") != std::string::npos);
  CHECK(from_make.find("osmformer, osm_rnn, transformer, lstm, exprnn") != std::string::npos);
  CHECK(from_make.find("test_toy_bigram") != std::string::npos);  // registered types are known too
  CHECK(from_make.find("--plugin") != std::string::npos);
  CHECK(from_make.find('\n') == std::string::npos);
  CHECK(from_match == from_make);
  CHECK(from_flops == from_make);
  // A near miss is suggested; a missing or non-string type is a ConfigError too.
  CHECK(config_error([] { models::make_model<float>({{"type", "osmformr"}}, 5, 1); }).find("did you mean 'osmformer'") !=
        std::string::npos);
  for (const json& c : {json{{"group", "SO(3)"}}, json{{"type", 3}}, json{{"type", ""}}, json::array()}) {
    INFO(c.dump());
    CHECK(!config_error([&] { models::make_model<float>(c, 5, 1); }).empty());
    CHECK(!config_error([&] { models::match_parameter_count(c, 5, 1000); }).empty());
    CHECK(!config_error([&] { measure::training_flops_per_token(c, 5, 8, 0.0); }).empty());
  }
}

TEST_CASE("ConfigKeyRecorder records the keys a section's readers read, once each, in order") {
  const json section = {{"b", 1}, {"comment", "x"}};
  ConfigKeyRecorder outer("model");
  {
    ConfigReader c(section, "model");
    c.allow({"type", "comment"});  // allowed, not read: not recorded
    c.get_int("b", 0);
    c.get_string("a", "x");
    c.get_int("b", 0);
    ConfigReader other(json::object(), "train");
    other.get_int("steps", 1);  // another section
    {
      ConfigKeyRecorder inner("model");  // the innermost recorder records
      ConfigReader d(json::object(), "model");
      d.get_double("c", 0.5);
      CHECK(inner.keys() == std::vector<std::string>{"c"});
    }
    c.get_bool("d", false);
  }
  CHECK(outer.keys() == std::vector<std::string>{"b", "a", "d"});
}

TEST_CASE("the built-in entries list exactly the keys their constructors read") {
  CHECK(models::config_keys(models::find_model_spec("lstm")) == std::vector<std::string>{"hidden", "layers", "head"});
  CHECK(models::config_keys(models::find_model_spec("exprnn")) == std::vector<std::string>{"hidden"});
  for (const models::ModelSpec& spec : models::builtin_model_specs()) {
    INFO(spec.name);
    CHECK(static_cast<bool>(spec.info.knob));
    CHECK(static_cast<bool>(spec.info.flops_per_token));
    const std::vector<std::string> listed = models::config_keys(spec);
    CHECK(!listed.empty());
    const std::set<std::string> keys(listed.begin(), listed.end());
    CHECK(keys.size() == listed.size());
    // Each listed key is read: a value of the wrong type is rejected by name, not as unknown.
    for (const std::string& key : listed) {
      INFO(key);
      const std::string msg = config_error([&] {
        models::make_model<float>({{"type", spec.name}, {key, json{{"x", 1}}}}, 5, 1);
      });
      CHECK(msg.rfind("model." + key + ": expected", 0) == 0);
    }
    CHECK(config_error([&] { models::make_model<float>({{"type", spec.name}, {"zz_unlisted", 1}}, 5, 1); })
              .find("unknown key 'zz_unlisted'") != std::string::npos);
    // Every key of the resolved configuration is listed (the FLOP count reads only
    // those), also of configs setting the keys resolved only when not at their default.
    const std::map<std::string, std::vector<json>> optional = {
        {"osmformer",
         {{{"mixing", "lowrank"}, {"rank", 4}, {"dropout", 0.1}, {"grounding_mixing", "shared"}},
          {{"grounding_init", "zero"}}}},
        {"osm_rnn", {{{"mixing", "lowrank"}, {"rank", 4}, {"dropout", 0.1}}}},
        {"transformer", {{{"head", "tied"}}}}};
    std::vector<json> configs = {json::object()};
    if (optional.count(spec.name))
      for (const json& c : optional.at(spec.name)) configs.push_back(c);
    for (json c : configs) {
      c["type"] = spec.name;
      auto m = models::make_model<float>(c, 5, 1);
      for (const auto& item : m->config().items())
        if (item.key() != "type") CHECK_MESSAGE(keys.count(item.key()) == 1, item.key());
      CHECK(measure::training_flops_per_token(m->config(), 5, 8, 1.0) > 0);
    }
  }
}

TEST_CASE("--match on the built-in types: the knobs' results at 100K (V = 65)") {
  // The counts docs/models.md quotes, and what the type switch found before the registry.
  struct Case {
    json model, knob;
    int64_t count;
  };
  const std::vector<Case> cases = {
      {{{"type", "osm_rnn"}, {"group", "SO(16)"}, {"mixing", "linear"}}, {{"group", "SO(23)"}}, 96965},
      {{{"type", "osmformer"}, {"group", "SO(16)"}, {"layers", 3}, {"heads", 4}, {"mixing", "linear"}},
       {{"group", "SO(16)"}, {"layers", 3}},
       102078},
      {{{"type", "osmformer"}, {"group", "SO(16)"}, {"layers", 3}, {"heads", 4}, {"mixing", "identity"}},
       {{"group", "SO(40)"}, {"layers", 1}},
       101470},
      {{{"type", "transformer"}, {"D", 64}, {"layers", 2}, {"heads", 4}}, {{"D", 60}}, 95945},
      {{{"type", "lstm"}, {"hidden", 50}, {"layers", 1}}, {{"hidden", 104}}, 100529},
      {{{"type", "exprnn"}, {"hidden", 128}}, {{"hidden", 335}}, 99895},
  };
  for (const Case& c : cases) {
    INFO(c.model.dump());
    json want = c.model;
    want.update(c.knob);
    const json got = models::match_parameter_count(c.model, 65, 100000);
    CHECK(got == want);
    CHECK(models::count_parameters(got, 65) == c.count);
  }
  // The group's kind and smallest d come from the group-kinds table: U from d = 1, and a
  // lower-case spelling is read like any other (it comes back canonical).
  CHECK(models::match_parameter_count({{"type", "osm_rnn"}, {"group", "U(4)"}}, 65, 50000).at("group") == "U(13)");
  CHECK(models::match_parameter_count({{"type", "osm_rnn"}, {"group", "so(4)"}}, 65, 10000).at("group") ==
        models::match_parameter_count({{"type", "osm_rnn"}, {"group", "SO(4)"}}, 65, 10000).at("group"));
  // Without a group the default one's kind is searched.
  CHECK(models::match_parameter_count({{"type", "osm_rnn"}}, 65, 100000).at("group") == "SO(23)");
  CHECK_THROWS_WITH_AS(models::match_parameter_count({{"type", "osm_rnn"}, {"group", "SO(3)xU(2)"}}, 65, 5000),
                       doctest::Contains("not a single group"), ConfigError);
  CHECK_THROWS_AS(models::match_parameter_count({{"type", "lstm"}}, 65, 0), ValueError);
}

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
  CHECK(*m.task->text_vocab() == corpus.vocab);
  CHECK(m.config.at("model") == model->config());        // complete, defaults filled in
  CHECK(m.config.at("train").at("seq_len") == 16);
  CHECK(m.config.at("train").contains("optimizer"));      // the resolved run configuration
  const auto& a = model->parameters();
  const auto& b = m.model->parameters();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].var.value().to_vector() == b[i].var.value().to_vector());
  CHECK(tasks::evaluate_bpc(*model, corpus.test, 16).bpc == tasks::evaluate_bpc(*m.model, corpus.test, 16).bpc);

  auto other = models::make_model<float>(config["model"], corpus.vocab.size() + 1, 5);
  CHECK_THROWS_AS(train::write_checkpoint(tmp / "bad.json", config, corpus.vocab, *other, 1), ValueError);
  json bad = config;
  bad["train"]["stpes"] = 1;
  CHECK_THROWS_AS(train::write_checkpoint(tmp / "bad.json", bad, corpus.vocab, *model, 1), ConfigError);
}
