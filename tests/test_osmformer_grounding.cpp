// Tests of the OSMFormer's grounding readings (docs/models.md §5): parameter counts of
// each layout, full-loss gradient checks in double for every reading, what each reading
// does in closed form on a one-layer model, the probe's measure of the cancellation, the
// transformer's tied head, and one-line errors for options that do not combine.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/tape.hpp"
#include "core/errors.hpp"
#include "groups/group.hpp"
#include "models/osmformer.hpp"
#include "tests/model_test_utils.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {

json former(const std::string& grounding, json extra = json::object()) {
  json c{{"type", "osmformer"}, {"group", "SO(3)"}, {"layers", 2}, {"heads", 2}, {"grounding", grounding},
         {"init_scale", 2.0}};
  c.update(extra);
  return c;
}

// Moves every mixing matrix off its initial value, so each path carries gradient.
template <class T>
void perturb_mixing(models::Model<T>& m, uint64_t seed) {
  Rng rng(seed);
  for (auto& p : m.parameters())
    if (p.name.find("mix") != std::string::npos) {
      Array<T>& v = p.var.value();
      const Array<T> noise = rng.normal_array<T>(v.shape(), 0.3);
      for (int64_t k = 0; k < v.size(); ++k) v[k] += noise[k];
    }
}

}  // namespace

TEST_CASE("grounding layouts count their parameters as docs/models.md §5 says") {
  const int64_t V = 65;
  for (const std::string grp : {"SO(16)", "SO(15)", "U(3)"}) {
    const int64_t m = groups::make_group(grp)->dim();
    for (int64_t L : {1, 3, 7}) {
      const int64_t h = 4, base = 2 * V * m + V + 1 + L * h;
      auto count = [&](json extra) {
        json c{{"type", "osmformer"}, {"group", grp}, {"layers", L}};
        c.update(extra);
        return models::make_model<float>(c, V, 1)->parameter_count();
      };
      for (const std::string g : {"relative", "combined", "token"}) {
        CAPTURE(g);
        CHECK(count({{"grounding", g}}) == base + 2 * L * m * m);
        CHECK(count({{"grounding", g}, {"grounding_mixing", "shared"}}) == base + L * m * m);
        CHECK(count({{"grounding", g}, {"mixing", "identity"}}) == base);
      }
      CHECK(count({{"grounding", "off"}}) == base + L * m * m);
      CHECK(count({{"grounding_init", "zero"}}) == base + 2 * L * m * m);
    }
  }
  // The paper's 91K: SO(15), 7 layers, one Gamma per layer (2 V m + V + 1 + 7 (h + m^2)).
  CHECK(models::make_model<float>(json{{"type", "osmformer"}, {"group", "SO(15)"}, {"layers", 7},
                                       {"grounding_mixing", "shared"}},
                                  65, 1)
            ->parameter_count() == 90919);
  // The paper's 104K transformer: our layout with a tied head and no head bias.
  CHECK(models::make_model<float>(json{{"type", "transformer"}, {"D", 64}, {"layers", 2}, {"head", "tied"}}, 65, 1)
            ->parameter_count() == 104256);
  CHECK(models::make_model<float>(json{{"type", "transformer"}, {"D", 64}, {"layers", 2}}, 65, 1)
            ->parameter_count() == 108481);
}

TEST_CASE("every grounding reading's full-loss gradient matches finite differences") {
  for (const std::string g : {"relative", "combined", "token", "off"})
    for (const std::string mixing : {"identity", "linear"})
      for (const std::string share : {"separate", "shared"}) {
        if (g == "off" && share == "shared") continue;  // refused (below)
        CAPTURE(g);
        CAPTURE(mixing);
        CAPTURE(share);
        auto m = models::make_model<double>(former(g, {{"mixing", mixing}, {"grounding_mixing", share}}), 7, 3);
        perturb_mixing(*m, 11);
        test::model_gradcheck(*m, 2, 5, 31);
      }
  SUBCASE("grounding_init zero (Gamma_gnd = 0 at init: its gradient must still flow)") {
    for (const std::string g : {"relative", "combined", "token"}) {
      CAPTURE(g);
      auto m = models::make_model<double>(former(g, {{"mixing", "linear"}, {"grounding_init", "zero"}}), 7, 3);
      test::model_gradcheck(*m, 2, 5, 32);
    }
  }
  SUBCASE("token grounding on a complex and a product group") {
    for (const std::string grp : {"U(2)", "SO(2)xU(2)"}) {
      CAPTURE(grp);
      auto m = models::make_model<double>(former("token", {{"group", grp}, {"mixing", "linear"}}), 7, 3);
      perturb_mixing(*m, 12);
      test::model_gradcheck(*m, 2, 5, 33);
    }
  }
  SUBCASE("tied transformer head") {
    auto m = models::make_model<double>(json{{"type", "transformer"}, {"D", 8}, {"layers", 1}, {"heads", 2},
                                             {"head", "tied"}, {"init_std", 0.5}},
                                        7, 3);
    test::model_gradcheck(*m, 2, 5, 34);
  }
}

TEST_CASE("one identity-mixing layer: each reading's state in closed form") {
  // One layer, one position: attention sees only H_1 = M, so A = M and the attention
  // tangent vee(M* M) = vee(I) = 0. Then relative/combined/off leave H = M, and token
  // grounding with identity mixing gives H = M M (the token re-applied).
  const int64_t V = 5;
  for (const std::string g : {"relative", "combined", "token", "off"}) {
    CAPTURE(g);
    models::OsmFormer<double> f(json{{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 1}, {"mixing", "identity"},
                                     {"grounding", g}, {"init_scale", 1.5}},
                                V, 7);
    ag::NoGrad ng;
    const std::vector<int32_t> one = {3};
    const Array<double> H = f.encode(one, 1, 1).value();
    // M_3: a one-position encode of the off reading is M itself.
    models::OsmFormer<double> off(json{{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 1}, {"mixing", "identity"},
                                       {"grounding", "off"}, {"init_scale", 1.5}},
                                  V, 7);
    const Array<double> M = off.encode(one, 1, 1).value();
    Array<double> want = M;
    if (g == "token") {
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 4; ++j) {
          double s = 0;
          for (int64_t k = 0; k < 4; ++k) s += M[i * 4 + k] * M[k * 4 + j];
          want[i * 4 + j] = s;
        }
    }
    double err = 0;
    for (int64_t k = 0; k < 16; ++k) err = std::max(err, std::abs(H[k] - want[k]));
    CHECK(err < 1e-12);
  }
  SUBCASE("grounding_init zero: at init the grounded model is the ungrounded one") {
    const auto tokens = test::tokens(12, V, 2);
    auto with = models::make_model<double>(json{{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 2},
                                                {"grounding", "relative"}, {"grounding_init", "zero"}},
                                           V, 9);
    // The same draws: mix_gnd takes no random numbers, so embed, proto and mix_att match.
    auto without = models::make_model<double>(
        json{{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 2}, {"grounding", "off"}}, V, 9);
    ag::NoGrad ng;
    const Array<double> a = with->forward(tokens, 1, 12).value(), b = without->forward(tokens, 1, 12).value();
    double err = 0;
    for (int64_t k = 0; k < a.size(); ++k) err = std::max(err, std::abs(a[k] - b[k]));
    CHECK(err < 1e-12);
  }
}

TEST_CASE("the probe shows the first reading's grounding undoing the attention, and the others not") {
  const int64_t V = 11, T_ = 32;
  const auto tokens = test::tokens(2 * T_, V, 4);
  auto probe = [&](const std::string& g) {
    models::OsmFormer<float> f(json{{"type", "osmformer"}, {"group", "SO(8)"}, {"layers", 3}, {"mixing", "linear"},
                                    {"grounding", g}},
                               V, 1);
    return f.probe(tokens, 2, T_);
  };
  const auto rel = probe("relative");
  REQUIRE(rel.size() == 3);
  // At init Gamma_gnd = I: the grounding tangent is ~ -u_att (cosine near -1) and the
  // layer's move is a few percent of the attention step's.
  for (const auto& p : rel) {
    CHECK(p.attention_norm > 0.1);
    CHECK(p.cosine < -0.95);
    CHECK(p.undone() > 0.9);
  }
  for (const auto& p : probe("off")) {
    CHECK(p.grounding_norm == 0.0);
    CHECK(std::abs(p.undone()) < 1e-6);  // the layer is the attention step
  }
  // Token grounding with identity mixing: its tangent is the token's own coordinates
  // b_x in every layer, so |u_gnd| is the mean norm of the inputs' embedding rows.
  models::OsmFormer<float> tok(json{{"type", "osmformer"}, {"group", "SO(8)"}, {"layers", 3}, {"mixing", "identity"},
                                    {"grounding", "token"}},
                               V, 1);
  const Array<float>* b = nullptr;
  for (const auto& p : tok.parameters())
    if (p.name == "embed") b = &p.var.value();
  REQUIRE(b != nullptr);
  const int64_t m = b->shape()[1];
  double want = 0;
  for (int32_t x : tokens) {
    double s = 0;
    for (int64_t k = 0; k < m; ++k) s += double((*b)[x * m + k]) * double((*b)[x * m + k]);
    want += std::sqrt(s) / static_cast<double>(tokens.size());
  }
  for (const auto& p : tok.probe(tokens, 2, T_)) CHECK(p.grounding_norm == doctest::Approx(want).epsilon(1e-5));
}

TEST_CASE("grounding options that do not combine are one-line errors naming the key") {
  auto error_of = [](json cfg) -> std::string {
    try {
      models::make_model<float>(cfg, 7, 1);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  const json base{{"type", "osmformer"}, {"group", "SO(3)"}};
  auto with = [&](json extra) {
    json c = base;
    c.update(extra);
    return c;
  };
  CHECK(error_of(with({{"grounding", "sideways"}})).find("model.grounding") != std::string::npos);
  CHECK(error_of(with({{"grounding", "off"}, {"grounding_init", "zero"}})).find("grounding_init") != std::string::npos);
  CHECK(error_of(with({{"grounding", "off"}, {"grounding_mixing", "shared"}})).find("grounding_mixing") != std::string::npos);
  CHECK(error_of(with({{"mixing", "identity"}, {"grounding_init", "zero"}})).find("linear") != std::string::npos);
  CHECK(error_of(with({{"grounding_init", "zero"}, {"grounding_mixing", "shared"}})).find("grounding_init") !=
        std::string::npos);
  CHECK(error_of(with({{"grounding", "token"}, {"group_param", "manifold"}})).find("algebra") != std::string::npos);
  CHECK(error_of(with({{"grounding_init", "half"}})).find("grounding_init") != std::string::npos);
  CHECK(error_of(json{{"type", "transformer"}, {"head", "shared"}}).find("model.head") != std::string::npos);
  // `on`, the first specification's name, still loads and resolves as relative.
  auto old = models::make_model<float>(with({{"grounding", "on"}}), 7, 1);
  CHECK(old->config().at("grounding") == "relative");
}

TEST_CASE("a config naming no grounding gets the screen's best reading for its mixing; a named one is kept") {
  struct Case {
    json extra;
    std::string want;
  };
  const std::vector<Case> cases = {
      {{{"mixing", "identity"}}, "token"},
      {{{"mixing", "identity"}, {"group_param", "manifold"}}, "combined"},  // token needs the algebra coordinates
      {json::object(), "relative"},                                         // linear, separate Gamma's
      {{{"grounding_mixing", "shared"}}, "combined"},
      {{{"mixing", "lowrank"}, {"rank", 2}}, "relative"},
      {{{"mixing", "bounded"}, {"grounding_mixing", "shared"}}, "combined"},
  };
  for (const Case& c : cases) {
    json cfg{{"type", "osmformer"}, {"group", "SO(3)"}, {"layers", 1}};
    cfg.update(c.extra);
    INFO(cfg.dump());
    auto m = models::make_model<float>(cfg, 5, 1);
    CHECK(m->config().at("grounding") == c.want);  // the resolved config names the reading
    // Rebuilt from its resolved config (as a checkpoint is), the model is the same one.
    auto again = models::make_model<float>(m->config(), 5, 1);
    CHECK(again->config() == m->config());
    cfg["grounding"] = "relative";
    CHECK(models::make_model<float>(cfg, 5, 1)->config().at("grounding") == "relative");
  }
  CHECK(models::default_grounding(models::MixingKind::Identity, false, groups::GroupParamMode::Algebra) ==
        models::Grounding::Token);
}
