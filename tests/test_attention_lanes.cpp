// The float attention kernels with queries in lanes against the same ops in double (the
// general paths, themselves checked against the unfused references and central
// differences in test_kernel_reference.cpp), forward and backward: the Transformer's
// (kernels/causal_mha_lanes.hpp: float without dropout, heads up to 16 wide) for every
// head width, T not a multiple of 16, a gradient already started and two threads; the
// OSMFormer's head-averaged attention (kernels/mean_attention_lanes.hpp) for ragged T,
// several heads, with and without slopes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "kernels/causal_mha.hpp"
#include "kernels/causal_mha_lanes.hpp"
#include "kernels/mean_attention.hpp"
#include "kernels/mean_attention_lanes.hpp"
#include "tests/attention_test_utils.hpp"

using namespace liegrad;

TEST_CASE("float attention with queries in lanes equals the double op, every head width, ragged T, started gradient") {
  const test::CausalCase cases[] = {{2, 37, 3, 16, true}, {1, 128, 2, 8, true}, {2, 16, 1, 5, false},
                                    {1, 1, 1, 16, true},  {3, 50, 2, 13, true}, {1, 23, 4, 1, true},
                                    {1, 40, 1, 3, false}, {2, 17, 2, 11, true}};
  Rng rng(606);
  double worst = 0;
  for (const test::CausalCase& c : cases) {
    const auto [x, seed, slopes, scale] = test::causal_case_inputs(rng, c);
    for (bool started : {false, true}) {
      INFO("B " << c.B << ", T " << c.T_ << ", " << c.heads << " heads of " << c.e << ", started " << started);
      const auto f = test::run_causal_attention<float>(x, seed, c.heads, slopes, scale, started);
      const auto d = test::run_causal_attention<double>(x, seed, c.heads, slopes, scale, started);
      const double ef = test::relative_max_error(f.out, d.out), eg = test::relative_max_error(f.d_input, d.d_input);
      INFO("forward error " << ef << ", backward error " << eg);
      CHECK(ef < 2e-6);
      CHECK(eg < 2e-6);
      worst = std::max({worst, ef, eg});
    }
  }
  MESSAGE("worst float-vs-double error of the lanes attention: " << worst << " (path available for e = 16: "
                                                                 << kernels::lanes::available(16) << ")");
}

TEST_CASE("float attention with queries in lanes gives the same bits on one thread and on two") {
  // 4 B h T^2 e = 2^24 FLOPs, the kernel's threshold for its OpenMP split.
  const int64_t B = 8, T_ = 128, D = 32;
  const int heads = 4;
  Rng rng(31);
  const Array<double> x = rng.normal_array<double>(Shape{B, T_, 3 * D});
  const Array<double> seed = rng.normal_array<double>(Shape{B, T_, D});
  const std::vector<double> slopes = {0.5, 0.25, 0.125, 0.0625};
  const int threads_before = num_threads();
  set_num_threads(1);
  const auto one = test::run_causal_attention<float>(x, seed, heads, slopes, 0.35, false);
  set_num_threads(2);
  const auto two = test::run_causal_attention<float>(x, seed, heads, slopes, 0.35, false);
  set_num_threads(threads_before);
  CHECK(max_abs_diff(one.out, two.out) == 0.0);
  CHECK(max_abs_diff(one.d_input, two.d_input) == 0.0);
  CHECK(max_abs_diff(one.d_input, Array<double>(one.d_input.shape(), 0.0)) > 0.0);
}

TEST_CASE("float head-averaged attention with queries in lanes equals the double op, ragged T, with and without slopes") {
  const test::MeanCase cases[] = {{2, 37, 16, 3, true}, {1, 128, 9, 4, true}, {3, 16, 25, 1, false},
                                  {1, 1, 16, 2, true},  {2, 50, 4, 2, false}};
  Rng rng(707);
  double worst = 0;
  for (const test::MeanCase& c : cases) {
    INFO("B " << c.B << ", T " << c.T_ << ", D " << c.D << ", " << c.heads << " heads, slopes " << c.slopes);
    const auto [x, seed, log_beta, slopes, s] = test::mean_case_inputs(rng, c);
    const auto f = test::run_mean_attention<float>(x, log_beta, seed, slopes, s, c.B, c.T_);
    const auto d = test::run_mean_attention<double>(x, log_beta, seed, slopes, s, c.B, c.T_);
    const double eo = test::relative_max_error(f.out, d.out), ex = test::relative_max_error(f.d_input, d.d_input),
                 eb = test::relative_max_error(f.d_log_beta, d.d_log_beta);
    INFO("forward error " << eo << ", dX error " << ex << ", dlog_beta error " << eb);
    CHECK(eo < 2e-6);
    CHECK(ex < 2e-6);
    CHECK(eb < 2e-5);
    worst = std::max({worst, eo, ex, eb});
  }
  MESSAGE("worst float-vs-double error of the head-averaged lanes attention: "
          << worst << " (path available: " << kernels::mean_lanes::available() << ")");
}
