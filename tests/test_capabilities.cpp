// Optional model capabilities (models/capabilities.hpp): which built-in types offer the
// layer probe and the group-state readout, and a model registered from outside models/
// (as a plugin would) that offers the group-state readout and so gets the word
// diagnosis (tasks/word_diagnosis.hpp) with no change to the diagnosis; `liegrad probe`
// on a model without a layer probe says so in one line, and probes one with it.
#include <doctest/doctest.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "data/group_words.hpp"
#include "models/capabilities.hpp"
#include "models/model_base.hpp"
#include "models/registry.hpp"
#include "tests/train_test_utils.hpp"
#include "tasks/word_diagnosis.hpp"

using namespace liegrad;
using json = nlohmann::json;

namespace {

// A word model registered outside models/: the right-regular representation of S3 as
// 6 x 6 permutation matrices, (N_g)_{h,k} = [k = h.g], so N_a N_b = N_{a.b}. The state
// after x_1..x_t is N of their product; the prototypes are P_c = N_c, and the logits
// Re tr(H^T P_c) are 6 for the true class and 0 for the others (a permutation h -> h.g
// fixes no h unless g is the identity). It has no parameters: an exact solution.
template <class T>
class RegularS3 : public models::ModelBase<T>, public models::GroupStateReadout<T> {
 public:
  RegularS3(const json& config, int64_t vocab, uint64_t /*seed*/, int64_t classes)
      : models::ModelBase<T>(config, vocab, classes), task_("S3") {
    if (vocab != task_.input_vocab() || classes != task_.classes())
      throw ConfigError("regular_s3: the S3 word task with all inputs only");
    this->config_ = {{"type", "test_regular_s3"}};
  }
  std::string type() const override { return "test_regular_s3"; }
  bool recurrent() const override { return true; }
  models::GroupStateReadout<T>* group_state_readout() override { return this; }

  ag::Var<T> forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, models::RecurrentState<T>* s) override {
    const Array<T> H = encode(inputs, B, T_, s).value(), P = prototypes();
    Array<T> logits(Shape{B, T_, kN});
    for (int64_t i = 0; i < B * T_; ++i)
      for (int64_t c = 0; c < kN; ++c) {
        T tr = 0;
        for (int64_t k = 0; k < kN * kN; ++k) tr += H[i * kN * kN + k] * P[c * kN * kN + k];
        logits[i * kN + c] = tr;
      }
    return ag::Var<T>::constant(std::move(logits));
  }
  ag::Var<T> encode(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, models::RecurrentState<T>*) override {
    const data::FiniteGroup& G = task_.group();
    Array<T> H(Shape{B * T_, kN, kN});
    for (int64_t b = 0; b < B; ++b) {
      int32_t product = G.identity();
      for (int64_t t = 0; t < T_; ++t) {
        product = G.multiply(product, task_.element_of(inputs[static_cast<size_t>(b * T_ + t)]));
        fill(H, b * T_ + t, product);
      }
    }
    return ag::Var<T>::constant(std::move(H));
  }
  bool state_independent() const override { return true; }
  Array<T> transitions() const override {
    Array<T> N(Shape{kN, kN, kN});
    for (int32_t s = 0; s < kN; ++s) fill(N, s, task_.element_of(s));
    return N;
  }
  Array<T> prototypes() const override {
    Array<T> P(Shape{kN, kN, kN});
    for (int32_t c = 0; c < kN; ++c) fill(P, c, c);
    return P;
  }

 private:
  static constexpr int64_t kN = 6;  // |S3|
  // Writes N_g into matrix `slot` of X (., 6, 6).
  void fill(Array<T>& X, int64_t slot, int32_t g) const {
    for (int32_t h = 0; h < kN; ++h)
      X[slot * kN * kN + h * kN + task_.group().multiply(h, g)] = T(1);
  }
  data::WordTask task_;
};

void register_regular_s3_once() {
  static std::once_flag once;
  std::call_once(once, [] { models::register_model<RegularS3>("test_regular_s3"); });
}

}  // namespace

TEST_CASE("capabilities: the OSMFormer offers the layer probe, the OSM-RNN the group-state readout, the rest neither") {
  struct Case {
    json config;
    bool probe, readout;
  };
  const std::vector<Case> cases = {
      {{{"type", "osmformer"}, {"group", "SO(3)"}, {"layers", 1}}, true, false},
      {{{"type", "osm_rnn"}, {"group", "SO(3)"}}, false, true},
      {{{"type", "transformer"}, {"D", 8}, {"layers", 1}, {"heads", 2}}, false, false},
      {{{"type", "lstm"}, {"hidden", 4}}, false, false},
      {{{"type", "exprnn"}, {"hidden", 4}}, false, false},
  };
  for (const Case& c : cases) {
    INFO(c.config.dump());
    auto m = models::make_model<float>(c.config, 5, 1);
    CHECK((m->layer_probing() != nullptr) == c.probe);
    CHECK((m->group_state_readout() != nullptr) == c.readout);
  }
  // The probe runs through the interface and reports one entry per layer.
  auto former = models::make_model<float>({{"type", "osmformer"}, {"group", "SO(3)"}, {"layers", 2}, {"grounding", "off"}}, 5, 1);
  const std::vector<int32_t> tokens = {0, 1, 2, 3, 4, 0};
  const auto probes = former->layer_probing()->probe(tokens, 2, 3);
  CHECK(probes.size() == 2);
  for (const auto& p : probes) CHECK(p.grounding_norm == 0);
  CHECK(former->layer_probing()->grounding_reading() == "off");
}

TEST_CASE("capabilities: a registered model with a group-state readout gets the word diagnosis") {
  register_regular_s3_once();
  const data::WordTask task("S3");
  auto model = models::make_model<float>({{"type", "test_regular_s3"}}, task.input_vocab(), 1, task.classes());
  REQUIRE(model->group_state_readout() != nullptr);
  const auto d = tasks::diagnose_word_model(*model, task, 5, {64, 1024}, 4);
  REQUIRE(d.has_value());
  CHECK(d->state_independent);
  CHECK(d->pairs == 36);
  CHECK(d->homomorphism_defect_max == 0);
  CHECK(d->order_defect_max == 0);
  CHECK(d->exact_dims == 6);
  REQUIRE(d->drift.size() == 2);
  for (const auto& p : d->drift) {
    CAPTURE(p.length);
    CHECK(p.to_true_prototype == 0);
    CHECK(p.accuracy == 1.0);
  }
  // The same task on a model without the capability: no diagnosis.
  auto lstm = models::make_model<float>({{"type", "lstm"}, {"hidden", 4}}, task.input_vocab(), 1, task.classes());
  CHECK_FALSE(tasks::diagnose_word_model(*lstm, task, 5, {64}, 2).has_value());
}

TEST_CASE("capabilities: `liegrad probe` probes an OSMFormer and names a model type without a layer probe") {
  test::TempDir tmp("probe_capability");
  test::write_text(tmp / "text.txt", test::small_corpus());
  auto probe = [&](const json& model) {
    test::write_text(tmp / "c.json", test::tiny_config(tmp / "text.txt", model, 2).dump());
    return test::run_liegrad({"probe", "--config", tmp / "c.json", "--batch", "2", "--json"}, tmp.path.string());
  };
  const test::Proc lstm = probe({{"type", "lstm"}, {"hidden", 4}});
  INFO("stderr: " << lstm.err);
  CHECK(lstm.exit_code != 0);
  CHECK(std::count(lstm.err.begin(), lstm.err.end(), '\n') == 1);
  CHECK(lstm.err.find("model type 'lstm' has no layer probe") != std::string::npos);
  const test::Proc former = probe({{"type", "osmformer"}, {"group", "SO(3)"}, {"layers", 2}, {"grounding", "combined"}});
  INFO("stderr: " << former.err);
  REQUIRE(former.exit_code == 0);
  const json j = json::parse(former.out);
  CHECK(j.at("grounding") == "combined");
  CHECK(j.at("layers").size() == 2);
}
