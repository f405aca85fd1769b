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

#include "autograd/ops.hpp"
#include "autograd/tape.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "kernels/causal_mha.hpp"
#include "kernels/causal_mha_lanes.hpp"
#include "kernels/mean_attention.hpp"
#include "kernels/mean_attention_lanes.hpp"

using namespace liegrad;

namespace {

struct Result {
  Array<double> out, grad;
};

// The op at x (B,T,3D) in precision T, backward from seed (B,T,D). With started, qkv's
// gradient is written first by another op (the q columns' identity), so the attention
// adds to it.
template <class T>
Result run(const Array<double>& x, const Array<double>& seed, int heads, const std::vector<double>& slopes,
           double scale, bool started) {
  auto cast = [](const Array<double>& a) {
    Array<T> b(a.shape());
    for (int64_t i = 0; i < a.size(); ++i) b[i] = static_cast<T>(a[i]);
    return b;
  };
  const int64_t D = x.shape()[2] / 3;
  auto& tape = ag::Tape<T>::current();
  tape.clear();
  ag::Var<T> q = ag::Var<T>::parameter(cast(x));
  ag::Var<T> y = kernels::causal_self_attention(q, heads, std::vector<T>(slopes.begin(), slopes.end()),
                                                static_cast<T>(scale));
  if (started) y = ag::add(y, ag::slice(q, 2, 0, D));
  tape.backward(y, cast(seed));
  Result r{Array<double>(y.shape()), Array<double>(q.grad().shape())};
  for (int64_t i = 0; i < r.out.size(); ++i) r.out[i] = static_cast<double>(y.value()[i]);
  for (int64_t i = 0; i < r.grad.size(); ++i) r.grad[i] = static_cast<double>(q.grad()[i]);
  tape.clear();
  return r;
}

// max |a - b| / max |b| (max |a - b| where b is all zero, e.g. dlog_beta at T = 1).
double relative_error(const Array<double>& a, const Array<double>& b) {
  double scale = 0;
  for (int64_t i = 0; i < b.size(); ++i) scale = std::max(scale, std::abs(b[i]));
  return max_abs_diff(a, b) / (scale > 0 ? scale : 1.0);
}

}  // namespace

TEST_CASE("float attention with queries in lanes equals the double op, every head width, ragged T, started gradient") {
  struct Case {
    int64_t B, T_;
    int heads;
    int64_t e;
    bool slopes;
  };
  const Case cases[] = {{2, 37, 3, 16, true}, {1, 128, 2, 8, true}, {2, 16, 1, 5, false}, {1, 1, 1, 16, true},
                        {3, 50, 2, 13, true}, {1, 23, 4, 1, true},  {1, 40, 1, 3, false}, {2, 17, 2, 11, true}};
  Rng rng(606);
  double worst = 0;
  for (const Case& c : cases) {
    const int64_t D = c.heads * c.e;
    const Array<double> x = rng.normal_array<double>(Shape{c.B, c.T_, 3 * D});
    const Array<double> seed = rng.normal_array<double>(Shape{c.B, c.T_, D});
    std::vector<double> slopes;
    if (c.slopes)
      for (int k = 0; k < c.heads; ++k) slopes.push_back(std::pow(2.0, -(k + 1)));
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.e));
    for (bool started : {false, true}) {
      INFO("B " << c.B << ", T " << c.T_ << ", " << c.heads << " heads of " << c.e << ", started " << started);
      const Result f = run<float>(x, seed, c.heads, slopes, scale, started);
      const Result d = run<double>(x, seed, c.heads, slopes, scale, started);
      const double ef = relative_error(f.out, d.out), eg = relative_error(f.grad, d.grad);
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
  const Result one = run<float>(x, seed, heads, slopes, 0.35, false);
  set_num_threads(2);
  const Result two = run<float>(x, seed, heads, slopes, 0.35, false);
  set_num_threads(threads_before);
  CHECK(max_abs_diff(one.out, two.out) == 0.0);
  CHECK(max_abs_diff(one.grad, two.grad) == 0.0);
  CHECK(max_abs_diff(one.grad, Array<double>(one.grad.shape(), 0.0)) > 0.0);
}

namespace {

struct MeanResult {
  Array<double> out, dX, dlog_beta;
};

// mean_head_attention at X (B*T rows of D) in precision T, backward from seed.
template <class T>
MeanResult run_mean(const Array<double>& x, const Array<double>& log_beta, const Array<double>& seed,
                    const std::vector<double>& slopes, double s, int64_t B, int64_t T_) {
  auto cast = [](const Array<double>& a) {
    Array<T> b(a.shape());
    for (int64_t i = 0; i < a.size(); ++i) b[i] = static_cast<T>(a[i]);
    return b;
  };
  auto back = [](const Array<T>& a) {
    Array<double> b(a.shape());
    for (int64_t i = 0; i < a.size(); ++i) b[i] = static_cast<double>(a[i]);
    return b;
  };
  auto& tape = ag::Tape<T>::current();
  tape.clear();
  ag::Var<T> X = ag::Var<T>::parameter(cast(x)), lb = ag::Var<T>::parameter(cast(log_beta));
  ag::Var<T> y = kernels::mean_head_attention(X, lb, std::vector<T>(slopes.begin(), slopes.end()), static_cast<T>(s), B, T_);
  tape.backward(y, cast(seed));
  MeanResult r{back(y.value()), back(X.grad()), back(lb.grad())};
  tape.clear();
  return r;
}

}  // namespace

TEST_CASE("float head-averaged attention with queries in lanes equals the double op, ragged T, with and without slopes") {
  struct Case {
    int64_t B, T_, D;
    int heads;
    bool slopes;
  };
  const Case cases[] = {{2, 37, 16, 3, true}, {1, 128, 9, 4, true}, {3, 16, 25, 1, false}, {1, 1, 16, 2, true},
                        {2, 50, 4, 2, false}};
  Rng rng(707);
  double worst = 0;
  for (const Case& c : cases) {
    INFO("B " << c.B << ", T " << c.T_ << ", D " << c.D << ", " << c.heads << " heads, slopes " << c.slopes);
    const Array<double> x = rng.normal_array<double>(Shape{c.B * c.T_, c.D}, 0.5);
    const Array<double> seed = rng.normal_array<double>(Shape{c.B * c.T_, c.D});
    const Array<double> log_beta = rng.normal_array<double>(Shape{c.heads}, 0.3);
    std::vector<double> slopes;
    if (c.slopes)
      for (int k = 0; k < c.heads; ++k) slopes.push_back(std::pow(2.0, -(k + 1)));
    const double s = 1.0 / std::sqrt(static_cast<double>(c.D));
    const MeanResult f = run_mean<float>(x, log_beta, seed, slopes, s, c.B, c.T_);
    const MeanResult d = run_mean<double>(x, log_beta, seed, slopes, s, c.B, c.T_);
    const double eo = relative_error(f.out, d.out), ex = relative_error(f.dX, d.dX),
                 eb = relative_error(f.dlog_beta, d.dlog_beta);
    INFO("forward error " << eo << ", dX error " << ex << ", dlog_beta error " << eb);
    CHECK(eo < 2e-6);
    CHECK(ex < 2e-6);
    CHECK(eb < 2e-5);
    worst = std::max({worst, eo, ex, eb});
  }
  MESSAGE("worst float-vs-double error of the head-averaged lanes attention: "
          << worst << " (path available: " << kernels::mean_lanes::available() << ")");
}
