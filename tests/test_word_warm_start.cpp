// The warm start at the alphabet curriculum's end (tasks/word_warm_start.hpp) and the
// setter it uses (GroupStateReadout::set_transitions, the OSM-RNN's element drive):
// setting transitions, the cut locus, the refusals; the representation of S5 in SO(5)
// (sgn(sigma) P_sigma) extended from its two generators to all 120 elements; the
// data.handover_warm_start key, its errors, and a run that uses it.
#include <doctest/doctest.h>

#include <cmath>

#include "core/errors.hpp"
#include "data/group_words.hpp"
#include "groups/group.hpp"
#include "models/model.hpp"
#include "tasks/word_warm_start.hpp"
#include "tests/resume_test_utils.hpp"
#include "tests/train_test_utils.hpp"
#include "train/run_config.hpp"
#include "train/trainer.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {

json element_model(const std::string& group, const std::string& mixing = "identity") {
  return {{"type", "osm_rnn"}, {"group", group}, {"rnn_drive", "element"}, {"mixing", mixing}};
}

// rho(sigma) = sgn(sigma) P_sigma, P[i][sigma[i]] = 1: a homomorphism for the words'
// convention (a . b)[i] = b[a[i]], into SO(n) for odd n.
Array<float> signed_permutation(const data::FiniteGroup& G, int32_t id) {
  const std::vector<int32_t>& p = G.element(id);
  const int64_t n = static_cast<int64_t>(p.size());
  const float sign = static_cast<float>(data::permutation_sign(p));
  Array<float> P(Shape{n, n});
  for (int64_t i = 0; i < n; ++i) P[i * n + p[static_cast<size_t>(i)]] = sign;
  return P;
}

double max_diff(const float* a, const float* b, int64_t len) {
  double d = 0;
  for (int64_t j = 0; j < len; ++j) d = std::max(d, std::abs(static_cast<double>(a[j]) - b[j]));
  return d;
}

}  // namespace

TEST_CASE("set_transitions sets an element-drive OSM-RNN's transitions, the cut locus included") {
  for (const std::string mixing : {"identity", "linear"}) {
    CAPTURE(mixing);
    auto m = models::make_model<float>(element_model("SO(4)", mixing), 5, 3);
    models::GroupStateReadout<float>* readout = m->group_state_readout();
    REQUIRE(readout);
    const Array<float> before = readout->transitions();
    auto g = groups::make_group("SO(4)");
    Rng rng(7);
    Array<float> N = g->sample<float>(rng, 2);
    // Symbol 3 at the cut locus: diag(-1, -1, 1, 1) has no principal real logarithm.
    for (int64_t j = 16; j < 32; ++j) N[j] = 0;
    N[16] = -1, N[16 + 5] = -1, N[16 + 10] = 1, N[16 + 15] = 1;
    readout->set_transitions({1, 3}, N);
    const Array<float> after = readout->transitions();
    CHECK(max_diff(after.data() + 16, N.data(), 16) < 1e-5);
    CHECK(max_diff(after.data() + 48, N.data() + 16, 16) < 1e-5);
    for (int v : {0, 2, 4}) CHECK(max_diff(after.data() + v * 16, before.data() + v * 16, 16) == 0.0);
    // Refusals: not a group element; a symbol outside the vocabulary; a count mismatch.
    Array<float> bad(Shape{1, 4, 4});
    bad[0] = 2;
    CHECK_THROWS_WITH_AS(readout->set_transitions({0}, bad), doctest::Contains("is not in SO(4)"), ValueError);
    CHECK_THROWS_WITH_AS(readout->set_transitions({5}, g->sample<float>(rng, 1)), doctest::Contains("outside 0..4"),
                         ValueError);
    CHECK_THROWS_AS(readout->set_transitions({0, 1}, g->sample<float>(rng, 1)), ShapeError);
  }
  // A drive whose parameters cannot take a chosen transition refuses, even an empty list.
  auto token = models::make_model<float>(json{{"type", "osm_rnn"}, {"group", "SO(4)"}, {"rnn_drive", "token"}}, 5, 3);
  CHECK_THROWS_WITH_AS(token->group_state_readout()->set_transitions({}, Array<float>(Shape{0})),
                       doctest::Contains("needs rnn_drive \"element\""), ConfigError);
}

TEST_CASE("the warm start extends S5's representation in SO(5) from its generators to every element") {
  // The generators' transitions are set to rho; the other symbols start random. After
  // the warm start every symbol's transition is rho of its element (many of them, the
  // generator (0 1) among them, with eigenvalues -1). For both generating sets: the
  // standard pair and the four adjacent transpositions (data.generating_set).
  for (const auto& set_and_count : {std::pair<std::string, size_t>{"standard", 2}, {"coxeter", 4}}) {
    const std::string set = set_and_count.first;
    const size_t count = set_and_count.second;
    CAPTURE(set);
    const data::WordTask task("S5", "all", set);
    const data::FiniteGroup& G = task.group();
    auto m = models::make_model<float>(element_model("SO(5)"), 120, 1, 120);
    models::GroupStateReadout<float>* readout = m->group_state_readout();
    const std::vector<int32_t> gens = task.generator_symbols();
    REQUIRE(gens.size() == count);
    Array<float> N(Shape{static_cast<int64_t>(count), 5, 5});
    for (size_t i = 0; i < gens.size(); ++i) {
      const Array<float> P = signed_permutation(G, task.element_of(gens[i]));
      std::copy(P.data(), P.data() + 25, N.data() + static_cast<int64_t>(i) * 25);
  }
  readout->set_transitions(gens, N);
  double worst_before = 0;
  const Array<float> random = readout->transitions();
  for (int32_t v = 0; v < 120; ++v)
    worst_before = std::max(worst_before, max_diff(random.data() + v * 25, signed_permutation(G, v).data(), 25));
  CHECK(worst_before > 0.5);  // the other symbols do not already hold rho
  const std::string line = tasks::warm_start_from_generators(task, *readout);
  CHECK(line.find(std::to_string(120 - count) + " elements") != std::string::npos);
  const Array<float> T = readout->transitions();
  double worst = 0;
  for (int32_t v = 0; v < 120; ++v)
    worst = std::max(worst, max_diff(T.data() + v * 25, signed_permutation(G, task.element_of(v)).data(), 25));
  CHECK(worst < 1e-4);
  }
  auto m = models::make_model<float>(element_model("SO(5)"), 120, 1, 120);
  models::GroupStateReadout<float>* readout = m->group_state_readout();
  // Words in the generators only have no other symbols to set.
  const data::WordTask gens_only("S5", "generators");
  CHECK_THROWS_WITH_AS(tasks::warm_start_from_generators(gens_only, *readout), doctest::Contains("inputs \"all\""),
                       ValueError);
}

TEST_CASE("data.handover_warm_start: its errors, and a run that warms its transitions at the phase's end") {
  test::TempDir tmp("warm_start");
  json cfg = {{"model", element_model("SO(3)")},
              {"data",
               {{"dataset", "words:S3"},
                {"max_len", 8},
                {"eval_lengths", {8}},
                {"val_sequences", 8},
                {"test_sequences", 8},
                {"generator_steps", 3},
                {"handover_warm_start", true}}},
              {"train", test::tiny_train(6, 4)}};
  json no_phase = cfg;
  no_phase["data"].erase("generator_steps");
  test::check_config_error([&] { train::parse_run_config(no_phase); },
                           {"data.handover_warm_start", "data.generator_steps > 0"});
  CHECK(train::parse_run_config(cfg).resolved()["data"]["handover_warm_start"] == true);
  // A model whose transitions cannot be set fails before its first step.
  json token = cfg;
  token["model"]["rnn_drive"] = "token";
  train::TrainOptions o;
  o.out_dir = tmp / "token";
  CHECK_THROWS_WITH_AS(train::run_training(token, o), doctest::Contains("needs rnn_drive \"element\""), ConfigError);
  json lstm = cfg;
  lstm["model"] = {{"type", "lstm"}, {"hidden", 8}};
  o.out_dir = tmp / "lstm";
  CHECK_THROWS_WITH_AS(train::run_training(lstm, o), doctest::Contains("data.handover_warm_start"), ConfigError);
  // The element drive trains through it, and a run cut at step 2 (before the warm start)
  // or at step 4 (after it) and resumed logs the uninterrupted run's losses and test scores.
  o.out_dir = tmp / "full";
  train::run_training(cfg, o);
  const json full = json::parse(test::read_text(tmp / "full/result.json"));
  for (int64_t stop : {2, 4}) {
    CAPTURE(stop);
    const std::string dir = tmp / ("cut" + std::to_string(stop));
    CHECK(test::train_cut_and_resumed(cfg, dir, stop).steps_done == 6);
    test::check_same_losses(tmp / "full", dir);
    CHECK(json::parse(test::read_text(dir + "/result.json"))["test"] == full["test"]);
  }
}
