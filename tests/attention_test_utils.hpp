// Helpers of the attention kernel tests (test_attention_lanes.cpp, test_attention_memory.cpp):
// the Transformer's causal attention and the OSMFormer's head-averaged attention run once
// in precision T from double inputs, forward and backward, with their results widened to
// double for comparison, and the relative error they are compared by.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/tape.hpp"
#include "core/array.hpp"
#include "core/rng.hpp"
#include "kernels/causal_mha.hpp"
#include "kernels/mean_attention.hpp"

namespace liegrad::test {

template <class T>
Array<T> cast_array(const Array<double>& a) {
  Array<T> b(a.shape());
  for (int64_t i = 0; i < a.size(); ++i) b[i] = static_cast<T>(a[i]);
  return b;
}

template <class T>
Array<double> widen_array(const Array<T>& a) {
  Array<double> b(a.shape());
  for (int64_t i = 0; i < a.size(); ++i) b[i] = static_cast<double>(a[i]);
  return b;
}

// max |a - b| / max |b| (max |a - b| where b is all zero, e.g. dlog_beta at T = 1).
inline double relative_max_error(const Array<double>& a, const Array<double>& b) {
  double scale = 0;
  for (int64_t i = 0; i < b.size(); ++i) scale = std::max(scale, std::abs(b[i]));
  return max_abs_diff(a, b) / (scale > 0 ? scale : 1.0);
}

// ALiBi-style slopes 1/2, 1/4, ... for `heads` heads; none when `with_slopes` is false.
inline std::vector<double> halving_slopes(int heads, bool with_slopes = true) {
  std::vector<double> slopes;
  if (with_slopes)
    for (int k = 0; k < heads; ++k) slopes.push_back(std::pow(2.0, -(k + 1)));
  return slopes;
}

// A case of the causal attention: B sequences of length T_, `heads` heads of width e, with
// slopes or without; and its inputs drawn from rng in this order: qkv x (B,T,3D), the
// backward seed (B,T,D), then the slopes and the scale 1/sqrt(e).
struct CausalCase {
  int64_t B, T_;
  int heads;
  int64_t e;
  bool slopes;
};
struct CausalInputs {
  Array<double> x, seed;
  std::vector<double> slopes;
  double scale;
};
inline CausalInputs causal_case_inputs(Rng& rng, const CausalCase& c) {
  const int64_t D = c.heads * c.e;
  CausalInputs in{rng.normal_array<double>(Shape{c.B, c.T_, 3 * D}), Array<double>(), {}, 0.0};
  in.seed = rng.normal_array<double>(Shape{c.B, c.T_, D});
  in.slopes = halving_slopes(c.heads, c.slopes);
  in.scale = 1.0 / std::sqrt(static_cast<double>(c.e));
  return in;
}

// A case of the head-averaged attention: B sequences of length T_ of D-wide states, `heads`
// heads, with slopes or without; and its inputs drawn from rng in this order: X (B*T,D) of
// scale 0.5, the backward seed (B*T,D), log_beta (heads) of scale 0.3, then the slopes and
// the scale 1/sqrt(D).
struct MeanCase {
  int64_t B, T_, D;
  int heads;
  bool slopes;
};
struct MeanInputs {
  Array<double> x, seed, log_beta;
  std::vector<double> slopes;
  double s;
};
inline MeanInputs mean_case_inputs(Rng& rng, const MeanCase& c) {
  MeanInputs in{rng.normal_array<double>(Shape{c.B * c.T_, c.D}, 0.5), Array<double>(), Array<double>(), {}, 0.0};
  in.seed = rng.normal_array<double>(Shape{c.B * c.T_, c.D});
  in.log_beta = rng.normal_array<double>(Shape{c.heads}, 0.3);
  in.slopes = halving_slopes(c.heads, c.slopes);
  in.s = 1.0 / std::sqrt(static_cast<double>(c.D));
  return in;
}

// One attention run in double: its output and the gradients of its inputs (qkv for the
// causal attention; X and log_beta for the head-averaged one).
struct AttentionGrads {
  Array<double> out, d_input, d_log_beta;
};

// kernels::causal_self_attention at x (B,T,3D) in precision T, backward from seed (B,T,D).
// With started, qkv's gradient is first written by another op (the identity on its q
// columns), so the attention adds to it.
template <class T>
AttentionGrads run_causal_attention(const Array<double>& x, const Array<double>& seed, int heads,
                                    const std::vector<double>& slopes, double scale, bool started,
                                    kernels::AttentionMemory memory = kernels::AttentionMemory::Auto) {
  auto& tape = ag::Tape<T>::current();
  tape.clear();
  ag::Var<T> q = ag::Var<T>::parameter(cast_array<T>(x));
  ag::Var<T> y = kernels::causal_self_attention(q, heads, std::vector<T>(slopes.begin(), slopes.end()),
                                                static_cast<T>(scale), 0.0, nullptr, memory);
  if (started) y = ag::add(y, ag::slice(q, 2, 0, x.shape()[2] / 3));
  tape.backward(y, cast_array<T>(seed));
  AttentionGrads r{widen_array(y.value()), widen_array(q.grad()), {}};
  tape.clear();
  return r;
}

// kernels::mean_head_attention at x (B*T rows of D) with log_beta (heads) in precision T,
// backward from seed (B*T, D).
template <class T>
AttentionGrads run_mean_attention(const Array<double>& x, const Array<double>& log_beta, const Array<double>& seed,
                                  const std::vector<double>& slopes, double s, int64_t B, int64_t T_,
                                  kernels::AttentionMemory memory = kernels::AttentionMemory::Auto) {
  auto& tape = ag::Tape<T>::current();
  tape.clear();
  ag::Var<T> X = ag::Var<T>::parameter(cast_array<T>(x)), lb = ag::Var<T>::parameter(cast_array<T>(log_beta));
  ag::Var<T> y = kernels::mean_head_attention(X, lb, std::vector<T>(slopes.begin(), slopes.end()), static_cast<T>(s),
                                              B, T_, memory);
  tape.backward(y, cast_array<T>(seed));
  AttentionGrads r{widen_array(y.value()), widen_array(X.grad()), widen_array(lb.grad())};
  tape.clear();
  return r;
}

}  // namespace liegrad::test
