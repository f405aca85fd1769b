// Tests of the OSM models (OSM-RNN, OSMFormer) and the expRNN baseline: parameter
// counts against docs/models.md's formulas, full-loss gradient checks in double for every
// group and both group_param modes, causality, streaming, states staying in the
// group over 10,000 tokens, linear mixing starting exactly at identity mixing, and
// memorisation of a 64-character string.
#include <doctest/doctest.h>

#include "groups/group.hpp"
#include "models/exprnn.hpp"
#include "models/osm_common.hpp"
#include "models/osm_rnn.hpp"
#include "models/osmformer.hpp"
#include "tests/model_test_utils.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {
int64_t algebra_dim(const std::string& group) { return groups::make_group(group)->dim(); }
}  // namespace

TEST_CASE("OSM parameter counts match docs/models.md") {
  for (const std::string grp : {"SO(16)", "U(4)", "SO(3)xSO(5)"}) {
    const int64_t m = algebra_dim(grp);
    for (int64_t V : {65, 50}) {
      auto rnn_lin = models::make_model<float>(json{{"type", "osm_rnn"}, {"group", grp}}, V, 1);
      CHECK(rnn_lin->parameter_count() == 2 * V * m + V + 1 + m * m);
      auto rnn_id = models::make_model<float>(json{{"type", "osm_rnn"}, {"group", grp}, {"mixing", "identity"}}, V, 1);
      CHECK(rnn_id->parameter_count() == 2 * V * m + V + 1);
      auto rnn_b = models::make_model<float>(json{{"type", "osm_rnn"}, {"group", grp}, {"mixing", "bounded"}}, V, 1);
      CHECK(rnn_b->parameter_count() == rnn_lin->parameter_count());
      for (int64_t L : {1, 3}) {
        const int64_t h = 4;
        auto f_lin = models::make_model<float>(json{{"type", "osmformer"}, {"group", grp}, {"layers", L}}, V, 1);
        CHECK(f_lin->parameter_count() == 2 * V * m + V + 1 + L * (h + 2 * m * m));
        auto f_id = models::make_model<float>(
            json{{"type", "osmformer"}, {"group", grp}, {"layers", L}, {"mixing", "identity"}}, V, 1);
        CHECK(f_id->parameter_count() == 2 * V * m + V + 1 + L * h);
        auto f_ng = models::make_model<float>(
            json{{"type", "osmformer"}, {"group", grp}, {"layers", L}, {"grounding", "off"}}, V, 1);
        CHECK(f_ng->parameter_count() == 2 * V * m + V + 1 + L * (h + m * m));
        auto f_lr = models::make_model<float>(
            json{{"type", "osmformer"}, {"group", grp}, {"layers", L}, {"mixing", "lowrank"}, {"rank", 2}}, V, 1);
        CHECK(f_lr->parameter_count() == 2 * V * m + V + 1 + L * (h + 2 * 2 * m * 2));
        auto f_b = models::make_model<float>(
            json{{"type", "osmformer"}, {"group", grp}, {"layers", L}, {"mixing", "bounded"}}, V, 1);
        CHECK(f_b->parameter_count() == f_lin->parameter_count());
      }
    }
  }
  // The ~100K configurations of the paper.
  CHECK(models::make_model<float>(json{{"type", "osmformer"}, {"group", "SO(16)"}, {"layers", 3}}, 65, 1)
            ->parameter_count() == 102078);
  CHECK(models::make_model<float>(json{{"type", "osm_rnn"}, {"group", "SO(23)"}}, 65, 1)->parameter_count() == 96965);
  // Manifold mode counts m per element too.
  CHECK(models::make_model<float>(json{{"type", "osmformer"}, {"group_param", "manifold"}, {"layers", 3}}, 65, 1)
            ->parameter_count() == 102078);
  for (int64_t h : {8, 30}) {
    auto e = models::make_model<float>(json{{"type", "exprnn"}, {"hidden", h}}, 65, 1);
    CHECK(e->parameter_count() == h * (h - 1) / 2 + 65 * h + h + h * 65 + 65);
  }
}

TEST_CASE("OSM gradients match finite differences for every group and mode") {
  // init_scale 2 spreads the elements over the group, so attention weights and
  // every parameter have derivatives well above the finite-difference noise floor
  // (near the identity d loss / d log_beta is ~1e-7).
  const std::vector<std::string> groups_ = {"SO(3)", "O(3)", "U(3)", "SU(3)", "T(3)", "SO(3)xSO(2)"};
  for (const auto& grp : groups_)
    for (const std::string mode : {"algebra", "manifold"}) {
      CAPTURE(grp);
      CAPTURE(mode);
      auto former = models::make_model<double>(json{{"type", "osmformer"}, {"group", grp}, {"layers", 2}, {"heads", 2},
                                                    {"group_param", mode}, {"init_scale", 2.0}},
                                               7, 3);
      test::model_gradcheck(*former, 2, 5, 21);
      auto rnn = models::make_model<double>(
          json{{"type", "osm_rnn"}, {"group", grp}, {"group_param", mode}, {"init_scale", 2.0}}, 7, 3);
      test::model_gradcheck(*rnn, 2, 5, 22);
    }
}

TEST_CASE("OSM variants' gradients: lowrank mixing, drives, no grounding, expRNN") {
  SUBCASE("osmformer lowrank, no grounding, no ALiBi") {
    auto m = models::make_model<double>(json{{"type", "osmformer"}, {"group", "SO(3)"}, {"layers", 2}, {"heads", 3},
                                             {"mixing", "lowrank"}, {"rank", 2}, {"grounding", "off"},
                                             {"positional", "none"}},
                                        7, 4);
    // Lowrank U starts at 0: move it so every path is exercised.
    for (auto& p : m->parameters())
      if (p.name.find(".u") != std::string::npos) p.var.value() = Rng(9).normal_array<double>(p.var.shape(), 0.3);
    test::model_gradcheck(*m, 2, 5, 23);
  }
  for (const std::string type : {"osm_rnn", "osmformer"}) {
    CAPTURE(type);  // bounded mixing: W starts at 0; move it so the norm's path is exercised
    json cfg{{"type", type}, {"group", "SO(3)"}, {"mixing", "bounded"}, {"init_scale", 2.0}};
    if (type == "osmformer") cfg.update(json{{"layers", 2}, {"heads", 2}});
    auto m = models::make_model<double>(cfg, 7, 4);
    for (auto& p : m->parameters())
      if (p.name.find("mix") != std::string::npos) p.var.value() = Rng(10).normal_array<double>(p.var.shape(), 0.5);
    test::model_gradcheck(*m, 2, 5, 26);
  }
  for (const std::string drive : {"token", "both"}) {
    CAPTURE(drive);
    auto m = models::make_model<double>(json{{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", drive}}, 7, 5);
    test::model_gradcheck(*m, 2, 5, 24);
  }
  SUBCASE("exprnn") {
    auto m = models::make_model<double>(json{{"type", "exprnn"}, {"hidden", 4}}, 7, 6);
    test::model_gradcheck(*m, 2, 5, 25);
  }
}

TEST_CASE("osmformer is causal: later tokens never change earlier logits") {
  auto m = models::make_model<float>(json{{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 2}}, 11, 5);
  test::check_causal(*m, 11, 10, 5);
}

TEST_CASE("recurrent OSM and expRNN models stream: two halves equal one pass") {
  for (const json& cfg : {json{{"type", "osm_rnn"}, {"group", "U(3)"}}, json{{"type", "exprnn"}, {"hidden", 6}}}) {
    CAPTURE(cfg.dump());
    auto m = models::make_model<float>(cfg, 9, 5);
    ag::NoGrad ng;
    const int64_t B = 3, T_ = 10, cut = 6;
    auto x = test::tokens(B * T_, 9, 2);
    models::RecurrentState<float> s_full;
    const Array<float> full = m->forward(x, B, T_, &s_full).value();
    std::vector<int32_t> first, second;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T_; ++t) (t < cut ? first : second).push_back(x[static_cast<size_t>(b * T_ + t)]);
    models::RecurrentState<float> s;
    const Array<float> l1 = m->forward(first, B, cut, &s).value();
    const Array<float> l2 = m->forward(second, B, T_ - cut, &s).value();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T_; ++t)
        for (int64_t v = 0; v < 9; ++v)
          REQUIRE((t < cut ? l1.at(b, t, v) : l2.at(b, t - cut, v)) == doctest::Approx(full.at(b, t, v)).epsilon(1e-6));
  }
}

TEST_CASE("OSM states stay in the group over 10,000 tokens in float") {
  for (const std::string grp : {"SO(16)", "U(8)", "SU(4)", "SO(8)xSO(8)"}) {
    CAPTURE(grp);
    auto g = groups::make_group(grp);
    {
      models::OsmRnn<float> rnn(json{{"type", "osm_rnn"}, {"group", grp}}, 65, 1);
      ag::NoGrad ng;
      models::RecurrentState<float> s;
      double worst = 0;
      for (int w = 0; w < 10; ++w) {  // 10 windows of 1,000 tokens, state carried
        const Array<float> H = rnn.encode(test::tokens(1000, 65, 100 + static_cast<uint64_t>(w)), 1, 1000, &s).value();
        worst = std::max(worst, g->defect(H));
      }
      INFO("osm_rnn worst defect " << worst);
      CHECK(worst <= 1e-4);
    }
    {
      models::OsmFormer<float> former(json{{"type", "osmformer"}, {"group", grp}, {"layers", 3}}, 65, 1);
      ag::NoGrad ng;
      const Array<float> H = former.encode(test::tokens(10000, 65, 7), 40, 250).value();
      INFO("osmformer worst defect " << g->defect(H));
      CHECK(g->defect(H) <= 1e-4);
    }
  }
}

TEST_CASE("linear mixing starts exactly where identity mixing is") {
  for (const std::string type : {"osmformer", "osm_rnn"}) {
    // The OSMFormer's grounding default follows the mixing: name one reading for all four.
    auto with = [&](const char* mixing) {
      json c{{"type", type}, {"group", "SO(5)"}, {"mixing", mixing}};
      if (type == "osmformer") c["grounding"] = "relative";
      return models::make_model<float>(c, 13, 8);
    };
    auto lin = with("linear"), idn = with("identity"), low = with("lowrank"), bnd = with("bounded");
    ag::NoGrad ng;
    auto x = test::tokens(2 * 12, 13, 3);
    const Array<float> a = lin->forward(x, 2, 12).value(), b = idn->forward(x, 2, 12).value();
    CHECK(max_abs_diff(a, b) <= 1e-5);
    CHECK(max_abs_diff(low->forward(x, 2, 12).value(), b) <= 1e-5);
    CHECK(max_abs_diff(bnd->forward(x, 2, 12).value(), b) <= 1e-5);
  }
}

TEST_CASE("bounded mixing keeps ||I - Gamma|| below 1 however large W grows") {
  // Gamma = I - W / sqrt(1 + ||W||_F^2): ||I - Gamma||_F = ||W||_F / sqrt(1 + ||W||_F^2) < 1,
  // so every eigenvalue of Gamma lies within 1 of 1 (real part in (0, 2)).
  const int64_t m = 6;
  Rng rng(3);
  std::vector<ag::Parameter<double>> params;
  models::TangentMixing<double> mix("mix", models::MixingKind::Bounded, m, 0, rng, params);
  REQUIRE(params.size() == 1);
  REQUIRE(params[0].var.shape() == Shape{m, m});
  for (double size : {0.0, 0.1, 1.0, 100.0, 1e6}) {
    CAPTURE(size);
    params[0].var.value() = Rng(4).normal_array<double>(Shape{m, m}, size);
    double w2 = 0;
    for (int64_t i = 0; i < m * m; ++i) w2 += params[0].var.value()[i] * params[0].var.value()[i];
    ag::NoGrad ng;
    const Array<double> gamma = mix.dense().value();
    double d2 = 0;  // ||I - Gamma||_F^2
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < m; ++j) {
        const double e = (i == j ? 1.0 : 0.0) - gamma.at(i, j);
        d2 += e * e;
      }
    CHECK(std::sqrt(d2) < 1.0);
    CHECK(std::sqrt(d2) == doctest::Approx(std::sqrt(w2 / (1 + w2))).epsilon(1e-12));
  }
}

TEST_CASE("OSM models and expRNN memorise a 64-character string") {
  const std::string text = "to be, or not to be, that is the question: whether 'tis nobler?!";
  std::vector<int32_t> seq;
  for (char c : text) seq.push_back(static_cast<int32_t>(static_cast<unsigned char>(c) % 32));
  REQUIRE(seq.size() == 64);
  SUBCASE("osmformer") {
    auto m = models::make_model<float>(json{{"type", "osmformer"}, {"group", "SO(8)"}, {"layers", 2}}, 32, 1);
    const double loss = test::memorise(*m, seq, 300, 3e-2);
    INFO("final loss " << loss);
    CHECK(loss < 0.1);
  }
  SUBCASE("osm_rnn") {
    // Bounded mixing: with the paper's linear mixing (the default) this memorisation
    // stalls near loss 2.5-2.8 for about a third of (lr, seed) pairs: 12 of 33 at lr 5e-3
    // to 4e-2 (ASan build, 2026-12-01), and 7 of the same first 18 with the exponential
    // plan before 67abfea. Whether seed 1 at 3e-2 converges turns on the last bits of the
    // exponential, so a test of it is a coin toss. Bounded mixing reached below 0.003 for
    // all 15 pairs tried (lr 1e-2, 2e-2, 3e-2; seeds 1-5).
    auto m = models::make_model<float>(json{{"type", "osm_rnn"}, {"group", "SO(8)"}, {"mixing", "bounded"}}, 32, 1);
    const double loss = test::memorise(*m, seq, 300, 3e-2);
    INFO("final loss " << loss);
    CHECK(loss < 0.1);
  }
  SUBCASE("exprnn") {
    auto m = models::make_model<float>(json{{"type", "exprnn"}, {"hidden", 64}}, 32, 1);
    const double loss = test::memorise(*m, seq, 300, 1e-2);
    INFO("final loss " << loss);
    CHECK(loss < 0.1);
  }
}

TEST_CASE("OSM configs reject bad groups and values") {
  CHECK_THROWS_AS(models::make_model<float>(json{{"type", "osmformer"}, {"group", "SP(4)"}}, 7, 1), ConfigError);
  CHECK_THROWS_AS(models::make_model<float>(json{{"type", "osmformer"}, {"group", "SO(1)"}}, 7, 1), ConfigError);
  CHECK_THROWS_AS(models::make_model<float>(json{{"type", "osm_rnn"}, {"mixing", "cubic"}}, 7, 1), ConfigError);
  CHECK_THROWS_AS(models::make_model<float>(json{{"type", "osm_rnn"}, {"group_param", "both"}}, 7, 1), ConfigError);
  CHECK_THROWS_AS(models::make_model<float>(json{{"type", "osmformer"}, {"heads", 0}}, 7, 1), ConfigError);
}
