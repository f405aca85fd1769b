// The attentions with memory linear in T (kernels/attention_recompute.hpp: weights
// rebuilt in the backward from the rows' log-normalisers) in float against the kept-
// weights ops in double, forward and backward, for ragged T across several row blocks,
// a started gradient, slopes or none; Auto's choice by T; and the same bits on one and
// two threads. Their double gradchecks and double equivalence with the kept paths are in
// kernels/kernel_checks.cpp (test_kernel_reference.cpp runs them).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "kernels/causal_mha.hpp"
#include "kernels/mean_attention.hpp"
#include "tests/attention_test_utils.hpp"

using namespace liegrad;
using kernels::AttentionMemory;

TEST_CASE("float attention with rebuilt weights equals the kept-weights op in double") {
  const test::CausalCase cases[] = {
      {2, 37, 3, 16, true}, {1, 1, 2, 4, true}, {3, 16, 1, 5, false}, {1, 50, 2, 24, true}};
  Rng rng(811);
  for (const test::CausalCase& c : cases) {
    const auto [x, seed, slopes, scale] = test::causal_case_inputs(rng, c);
    for (bool started : {false, true}) {
      INFO("B " << c.B << ", T " << c.T_ << ", " << c.heads << " heads of " << c.e << ", started " << started);
      const auto f =
          test::run_causal_attention<float>(x, seed, c.heads, slopes, scale, started, AttentionMemory::Recompute);
      const auto d =
          test::run_causal_attention<double>(x, seed, c.heads, slopes, scale, started, AttentionMemory::Keep);
      CHECK(test::relative_max_error(f.out, d.out) < 2e-6);
      CHECK(test::relative_max_error(f.d_input, d.d_input) < 2e-6);
    }
  }
}

TEST_CASE("float head-averaged attention with rebuilt weights equals the kept-weights op in double") {
  const test::MeanCase cases[] = {
      {2, 37, 16, 3, true}, {1, 1, 16, 2, true}, {3, 16, 25, 1, false}, {2, 50, 9, 4, true}};
  Rng rng(812);
  for (const test::MeanCase& c : cases) {
    INFO("B " << c.B << ", T " << c.T_ << ", D " << c.D << ", " << c.heads << " heads, slopes " << c.slopes);
    const auto [x, seed, log_beta, slopes, s] = test::mean_case_inputs(rng, c);
    const auto f = test::run_mean_attention<float>(x, log_beta, seed, slopes, s, c.B, c.T_, AttentionMemory::Recompute);
    const auto d = test::run_mean_attention<double>(x, log_beta, seed, slopes, s, c.B, c.T_, AttentionMemory::Keep);
    CHECK(test::relative_max_error(f.out, d.out) < 2e-6);
    CHECK(test::relative_max_error(f.d_input, d.d_input) < 2e-6);
    CHECK(test::relative_max_error(f.d_log_beta, d.d_log_beta) < 2e-5);
  }
}

TEST_CASE("Auto keeps the weights up to kKeepWeightsUpTo and rebuilds them above") {
  CHECK_FALSE(kernels::choose_recompute(AttentionMemory::Auto, kernels::kKeepWeightsUpTo));
  CHECK(kernels::choose_recompute(AttentionMemory::Auto, kernels::kKeepWeightsUpTo + 1));
  CHECK(kernels::choose_recompute(AttentionMemory::Recompute, 1));
  CHECK_FALSE(kernels::choose_recompute(AttentionMemory::Keep, 1 << 20));
  // Above the limit Auto runs the recompute path: the same bits.
  const int64_t T_ = kernels::kKeepWeightsUpTo + 9;
  Rng rng(813);
  const Array<double> x = rng.normal_array<double>(Shape{1, T_, 3 * 8});
  const Array<double> seed = rng.normal_array<double>(Shape{1, T_, 8});
  const auto a = test::run_causal_attention<float>(x, seed, 2, {0.5, 0.25}, 0.5, false, AttentionMemory::Auto);
  const auto r = test::run_causal_attention<float>(x, seed, 2, {0.5, 0.25}, 0.5, false, AttentionMemory::Recompute);
  CHECK(max_abs_diff(a.out, r.out) == 0.0);
  CHECK(max_abs_diff(a.d_input, r.d_input) == 0.0);
  const Array<double> X = rng.normal_array<double>(Shape{T_, 9}, 0.5), G = rng.normal_array<double>(Shape{T_, 9});
  const Array<double> lb = rng.normal_array<double>(Shape{2}, 0.3);
  const auto ma = test::run_mean_attention<float>(X, lb, G, {0.5, 0.25}, 0.3, 1, T_, AttentionMemory::Auto);
  const auto mr = test::run_mean_attention<float>(X, lb, G, {0.5, 0.25}, 0.3, 1, T_, AttentionMemory::Recompute);
  CHECK(max_abs_diff(ma.out, mr.out) == 0.0);
  CHECK(max_abs_diff(ma.d_input, mr.d_input) == 0.0);
  const auto mk = test::run_mean_attention<float>(X, lb, G, {0.5, 0.25}, 0.3, 1, T_, AttentionMemory::Keep);
  CHECK(test::relative_max_error(mr.d_input, mk.d_input) < 1e-5);
}

TEST_CASE("attention with rebuilt weights gives the same bits on one thread and on two") {
  const int64_t B = 8, T_ = 128, D = 32;
  Rng rng(814);
  const Array<double> x = rng.normal_array<double>(Shape{B, T_, 3 * D}), seed = rng.normal_array<double>(Shape{B, T_, D});
  const Array<double> X = rng.normal_array<double>(Shape{B * T_, D}, 0.3), G = rng.normal_array<double>(Shape{B * T_, D});
  const Array<double> lb = rng.normal_array<double>(Shape{4}, 0.3);
  const std::vector<double> slopes = {0.5, 0.25, 0.125, 0.0625};
  const int threads_before = num_threads();
  set_num_threads(1);
  const auto one = test::run_causal_attention<float>(x, seed, 4, slopes, 0.35, false, AttentionMemory::Recompute);
  const auto mone = test::run_mean_attention<float>(X, lb, G, slopes, 0.2, B, T_, AttentionMemory::Recompute);
  set_num_threads(2);
  const auto two = test::run_causal_attention<float>(x, seed, 4, slopes, 0.35, false, AttentionMemory::Recompute);
  const auto mtwo = test::run_mean_attention<float>(X, lb, G, slopes, 0.2, B, T_, AttentionMemory::Recompute);
  set_num_threads(threads_before);
  CHECK(max_abs_diff(one.out, two.out) == 0.0);
  CHECK(max_abs_diff(one.d_input, two.d_input) == 0.0);
  CHECK(max_abs_diff(mone.out, mtwo.out) == 0.0);
  CHECK(max_abs_diff(mone.d_input, mtwo.d_input) == 0.0);
  // dlog_beta sums per-thread partial sums, whose split follows the schedule: not compared bit for bit.
  CHECK(test::relative_max_error(mone.d_log_beta, mtwo.d_log_beta) < 1e-6);
}
