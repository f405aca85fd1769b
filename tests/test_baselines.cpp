// Tests of the Transformer and LSTM baselines: parameter counts against the spec's
// formulas, full-loss gradient checks in double, causality (transformer), streaming
// equivalence (LSTM), memorisation of a 64-character string, and a pinned golden
// trajectory for the transformer.
#include <doctest/doctest.h>

#include "models/model.hpp"
#include "tests/model_test_utils.hpp"

using namespace liegrad;
using nlohmann::json;

TEST_CASE("transformer parameter count matches V*D + L*(12D^2+13D) + 2D + D*V + V") {
  for (auto [V, D, L, H] : std::vector<std::array<int64_t, 4>>{{65, 64, 2, 4}, {50, 32, 3, 2}, {7, 8, 1, 1}}) {
    auto m = models::make_model<float>(json{{"type", "transformer"}, {"D", D}, {"layers", L}, {"heads", H}}, V, 1);
    CHECK(m->parameter_count() == V * D + L * (12 * D * D + 13 * D) + 2 * D + D * V + V);
  }
}

TEST_CASE("lstm parameter count matches V*h + layers*(8h^2+4h) + h*V + V") {
  for (auto [V, h, L] : std::vector<std::array<int64_t, 3>>{{65, 104, 1}, {50, 20, 2}}) {
    auto m = models::make_model<float>(json{{"type", "lstm"}, {"hidden", h}, {"layers", L}}, V, 1);
    CHECK(m->parameter_count() == V * h + L * (8 * h * h + 4 * h) + h * V + V);
  }
}

TEST_CASE("baseline gradients match finite differences in double") {
  SUBCASE("transformer") {
    auto m = models::make_model<double>(json{{"type", "transformer"}, {"D", 8}, {"layers", 2}, {"heads", 2}}, 7, 3);
    test::model_gradcheck(*m, 2, 5, 11);
  }
  SUBCASE("transformer without ALiBi") {
    auto m = models::make_model<double>(
        json{{"type", "transformer"}, {"D", 4}, {"layers", 1}, {"heads", 2}, {"positional", "none"}}, 7, 3);
    test::model_gradcheck(*m, 2, 5, 12);
  }
  SUBCASE("lstm") {
    auto m = models::make_model<double>(json{{"type", "lstm"}, {"hidden", 5}, {"layers", 2}}, 7, 3);
    test::model_gradcheck(*m, 2, 5, 13);
  }
}

TEST_CASE("transformer is causal: later tokens never change earlier logits") {
  auto m = models::make_model<float>(json{{"type", "transformer"}, {"D", 16}, {"layers", 2}, {"heads", 4}}, 11, 5);
  test::check_causal(*m, 11, 12, 3);
}

TEST_CASE("lstm streaming: two halves with the carried state equal one pass") {
  auto m = models::make_model<float>(json{{"type", "lstm"}, {"hidden", 12}, {"layers", 2}}, 9, 5);
  ag::NoGrad ng;
  const int64_t B = 3, T_ = 10;
  auto x = test::tokens(B * T_, 9, 2);
  models::RecurrentState<float> s_full;
  const Array<float> full = m->forward(x, B, T_, &s_full).value();
  std::vector<int32_t> first, second;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T_; ++t) (t < 4 ? first : second).push_back(x[static_cast<size_t>(b * T_ + t)]);
  models::RecurrentState<float> s;
  const Array<float> l1 = m->forward(first, B, 4, &s).value();
  const Array<float> l2 = m->forward(second, B, T_ - 4, &s).value();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T_; ++t)
      for (int64_t v = 0; v < 9; ++v) {
        const float got = t < 4 ? l1.at(b, t, v) : l2.at(b, t - 4, v);
        REQUIRE(got == doctest::Approx(full.at(b, t, v)).epsilon(1e-6));
      }
  REQUIRE(s.tensors.size() == s_full.tensors.size());
  for (size_t k = 0; k < s.tensors.size(); ++k) CHECK(max_abs_diff(s.tensors[k], s_full.tensors[k]) < 1e-6);
}

namespace {
std::vector<int32_t> sixty_four_chars() {
  const std::string text = "to be, or not to be, that is the question: whether 'tis nobler?!";
  std::vector<int32_t> s;
  for (char c : text) s.push_back(static_cast<int32_t>(static_cast<unsigned char>(c) % 32));
  return s;
}
}  // namespace

TEST_CASE("baselines memorise a 64-character string") {
  const auto seq = sixty_four_chars();
  REQUIRE(seq.size() == 64);
  SUBCASE("transformer") {
    auto m = models::make_model<float>(json{{"type", "transformer"}, {"D", 32}, {"layers", 2}, {"heads", 4}}, 32, 1);
    CHECK(test::memorise(*m, seq, 300, 1e-2) < 0.1);
  }
  SUBCASE("lstm") {
    auto m = models::make_model<float>(json{{"type", "lstm"}, {"hidden", 64}}, 32, 1);
    CHECK(test::memorise(*m, seq, 300, 1e-2) < 0.1);
  }
}

TEST_CASE("model configs reject unknown keys and bad values with a suggestion") {
  try {
    models::make_model<float>(json{{"type", "transformer"}, {"layrs", 2}}, 7, 1);
    FAIL("no exception");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("did you mean 'layers'") != std::string::npos);
  }
  CHECK_THROWS_AS(models::make_model<float>(json{{"type", "transformr"}}, 7, 1), ConfigError);
  CHECK_THROWS_AS(models::make_model<float>(json{{"type", "transformer"}, {"D", 0}}, 7, 1), ConfigError);
  CHECK_THROWS_AS(models::make_model<float>(json{{"type", "transformer"}, {"D", 10}, {"heads", 3}}, 7, 1), ConfigError);
  CHECK_THROWS_AS(models::make_model<float>(json{{"type", "lstm"}, {"hidden", "big"}}, 7, 1), ConfigError);
}
