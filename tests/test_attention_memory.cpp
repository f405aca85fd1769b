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

#include "autograd/ops.hpp"
#include "autograd/tape.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "kernels/causal_mha.hpp"
#include "kernels/mean_attention.hpp"

using namespace liegrad;
using kernels::AttentionMemory;

namespace {

template <class T>
Array<T> cast(const Array<double>& a) {
  Array<T> b(a.shape());
  for (int64_t i = 0; i < a.size(); ++i) b[i] = static_cast<T>(a[i]);
  return b;
}
template <class T>
Array<double> widen(const Array<T>& a) {
  Array<double> b(a.shape());
  for (int64_t i = 0; i < a.size(); ++i) b[i] = static_cast<double>(a[i]);
  return b;
}

double memory_relative_error(const Array<double>& a, const Array<double>& b) {
  double scale = 0;
  for (int64_t i = 0; i < b.size(); ++i) scale = std::max(scale, std::abs(b[i]));
  return max_abs_diff(a, b) / (scale > 0 ? scale : 1.0);
}

// Output and input gradients (qkv; or X then log_beta) of one op run, in double.
struct Run {
  Array<double> out, grad, grad2;
};

// The transformer's attention at x (B,T,3D), backward from seed (B,T,D); with started,
// qkv's gradient is first written by a later use of its q columns.
template <class T>
Run mha(const Array<double>& x, const Array<double>& seed, int heads, const std::vector<double>& slopes, double scale,
        bool started, AttentionMemory memory) {
  auto& tape = ag::Tape<T>::current();
  tape.clear();
  ag::Var<T> q = ag::Var<T>::parameter(cast<T>(x));
  ag::Var<T> y = kernels::causal_self_attention(q, heads, std::vector<T>(slopes.begin(), slopes.end()),
                                                static_cast<T>(scale), 0.0, nullptr, memory);
  if (started) y = ag::add(y, ag::slice(q, 2, 0, x.shape()[2] / 3));
  tape.backward(y, cast<T>(seed));
  Run r{widen(y.value()), widen(q.grad()), {}};
  tape.clear();
  return r;
}

// The OSMFormer's attention at X (B*T rows of D).
template <class T>
Run mean(const Array<double>& x, const Array<double>& log_beta, const Array<double>& seed,
         const std::vector<double>& slopes, double s, int64_t B, int64_t T_, AttentionMemory memory) {
  auto& tape = ag::Tape<T>::current();
  tape.clear();
  ag::Var<T> X = ag::Var<T>::parameter(cast<T>(x)), lb = ag::Var<T>::parameter(cast<T>(log_beta));
  ag::Var<T> y = kernels::mean_head_attention(X, lb, std::vector<T>(slopes.begin(), slopes.end()), static_cast<T>(s), B,
                                              T_, memory);
  tape.backward(y, cast<T>(seed));
  Run r{widen(y.value()), widen(X.grad()), widen(lb.grad())};
  tape.clear();
  return r;
}

}  // namespace

TEST_CASE("float attention with rebuilt weights equals the kept-weights op in double") {
  struct Case {
    int64_t B, T_;
    int heads;
    int64_t e;
    bool slopes;
  };
  const Case cases[] = {{2, 37, 3, 16, true}, {1, 1, 2, 4, true}, {3, 16, 1, 5, false}, {1, 50, 2, 24, true}};
  Rng rng(811);
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
      const Run f = mha<float>(x, seed, c.heads, slopes, scale, started, AttentionMemory::Recompute);
      const Run d = mha<double>(x, seed, c.heads, slopes, scale, started, AttentionMemory::Keep);
      CHECK(memory_relative_error(f.out, d.out) < 2e-6);
      CHECK(memory_relative_error(f.grad, d.grad) < 2e-6);
    }
  }
}

TEST_CASE("float head-averaged attention with rebuilt weights equals the kept-weights op in double") {
  struct Case {
    int64_t B, T_, D;
    int heads;
    bool slopes;
  };
  const Case cases[] = {{2, 37, 16, 3, true}, {1, 1, 16, 2, true}, {3, 16, 25, 1, false}, {2, 50, 9, 4, true}};
  Rng rng(812);
  for (const Case& c : cases) {
    INFO("B " << c.B << ", T " << c.T_ << ", D " << c.D << ", " << c.heads << " heads, slopes " << c.slopes);
    const Array<double> x = rng.normal_array<double>(Shape{c.B * c.T_, c.D}, 0.5);
    const Array<double> seed = rng.normal_array<double>(Shape{c.B * c.T_, c.D});
    const Array<double> log_beta = rng.normal_array<double>(Shape{c.heads}, 0.3);
    std::vector<double> slopes;
    if (c.slopes)
      for (int k = 0; k < c.heads; ++k) slopes.push_back(std::pow(2.0, -(k + 1)));
    const double s = 1.0 / std::sqrt(static_cast<double>(c.D));
    const Run f = mean<float>(x, log_beta, seed, slopes, s, c.B, c.T_, AttentionMemory::Recompute);
    const Run d = mean<double>(x, log_beta, seed, slopes, s, c.B, c.T_, AttentionMemory::Keep);
    CHECK(memory_relative_error(f.out, d.out) < 2e-6);
    CHECK(memory_relative_error(f.grad, d.grad) < 2e-6);
    CHECK(memory_relative_error(f.grad2, d.grad2) < 2e-5);
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
  const Run a = mha<float>(x, seed, 2, {0.5, 0.25}, 0.5, false, AttentionMemory::Auto);
  const Run r = mha<float>(x, seed, 2, {0.5, 0.25}, 0.5, false, AttentionMemory::Recompute);
  CHECK(max_abs_diff(a.out, r.out) == 0.0);
  CHECK(max_abs_diff(a.grad, r.grad) == 0.0);
  const Array<double> X = rng.normal_array<double>(Shape{T_, 9}, 0.5), G = rng.normal_array<double>(Shape{T_, 9});
  const Array<double> lb = rng.normal_array<double>(Shape{2}, 0.3);
  const Run ma = mean<float>(X, lb, G, {0.5, 0.25}, 0.3, 1, T_, AttentionMemory::Auto);
  const Run mr = mean<float>(X, lb, G, {0.5, 0.25}, 0.3, 1, T_, AttentionMemory::Recompute);
  CHECK(max_abs_diff(ma.out, mr.out) == 0.0);
  CHECK(max_abs_diff(ma.grad, mr.grad) == 0.0);
  const Run mk = mean<float>(X, lb, G, {0.5, 0.25}, 0.3, 1, T_, AttentionMemory::Keep);
  CHECK(memory_relative_error(mr.grad, mk.grad) < 1e-5);
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
  const Run one = mha<float>(x, seed, 4, slopes, 0.35, false, AttentionMemory::Recompute);
  const Run mone = mean<float>(X, lb, G, slopes, 0.2, B, T_, AttentionMemory::Recompute);
  set_num_threads(2);
  const Run two = mha<float>(x, seed, 4, slopes, 0.35, false, AttentionMemory::Recompute);
  const Run mtwo = mean<float>(X, lb, G, slopes, 0.2, B, T_, AttentionMemory::Recompute);
  set_num_threads(threads_before);
  CHECK(max_abs_diff(one.out, two.out) == 0.0);
  CHECK(max_abs_diff(one.grad, two.grad) == 0.0);
  CHECK(max_abs_diff(mone.out, mtwo.out) == 0.0);
  CHECK(max_abs_diff(mone.grad, mtwo.grad) == 0.0);
  // dlog_beta sums per-thread partial sums, whose split follows the schedule: not compared bit for bit.
  CHECK(memory_relative_error(mone.grad2, mtwo.grad2) < 1e-6);
}
