// One row of a causal softmax with an ALiBi-style distance penalty, shared by the
// fused attention kernels (causal_mha.cpp, mean_attention.cpp), and mean-head
// attention's row operations around it (below):
//   p_j = softmax_{j<=i}(scale * s_j - slope * (i - j)),  j = 0..i.
// Max-subtracted before exp for range safety (Press et al. 2022 for the penalty).
// causal_softmax_row_scalar is the readable form (and the double path);
// causal_softmax_row runs float rows in SIMD: one pass for the logits and their
// maximum, one for exp and the sum, one for the scaling (tests/test_kernels.cpp
// compares the two).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/simd.hpp"
#include "core/vmath.hpp"

namespace liegrad::kernels {

// p (i+1) = the softmax above of s (i+1); p may alias s. Writes nothing past p[i].
// With lse, *lse = log sum_j exp(logit_j), from which causal_exp_row rebuilds the row.
template <class T>
void causal_softmax_row_scalar(int64_t i, const T* s, T scale, T slope, T* p, T* lse = nullptr) {
  T mx = -INFINITY;
  for (int64_t j = 0; j <= i; ++j) {
    p[j] = scale * s[j] - slope * static_cast<T>(i - j);
    mx = std::max(mx, p[j]);
  }
  for (int64_t j = 0; j <= i; ++j) p[j] -= mx;
  vm::exp_array(i + 1, p, p);
  T sum = 0;
  for (int64_t j = 0; j <= i; ++j) sum += p[j];
  if (lse) *lse = mx + std::log(sum);
  const T inv = T(1) / sum;
  for (int64_t j = 0; j <= i; ++j) p[j] *= inv;
}

// The same row rebuilt from its log-normaliser (causal_softmax_row's lse):
//   p_j = exp(scale * s_j - slope * (i - j) - lse),  j = 0..i;
// the attention kernels that keep only lse per row (the recompute paths) call it in the backward.
template <class T>
void causal_exp_row(int64_t i, const T* s, T scale, T slope, T lse, T* p) {
#pragma omp simd
  for (int64_t j = 0; j <= i; ++j) p[j] = scale * s[j] - slope * static_cast<T>(i - j) - lse;
  vm::exp_array(i + 1, p, p);
}

#if LIEGRAD_SIMD
// The same row for float, a vector of lanes at a time; the tail under a mask. The sum
// is folded across lanes, so it differs from the scalar form in the last bits.
// GCC 12's intrinsic headers trip -Wmaybe-uninitialized on their own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
inline void causal_softmax_row_simd(int64_t i, const float* s, float scale, float slope, float* p,
                                    float* lse = nullptr) {
  using namespace simd;
  const int64_t len = i + 1;
  const V vscale = set1(scale), vslope = set1(slope), lane = iota();
  // scale * s_j - slope * (i - j) for the lanes j = j0, j0 + 1, ...
  const auto logits = [&](int64_t j0, V sv) {
    return fnmadd(vslope, sub(set1(static_cast<float>(i - j0)), lane), mul(vscale, sv));
  };
  V vmax = set1(-INFINITY);
  int64_t j = 0;
  for (; j + kLanes <= len; j += kLanes) {
    const V z = logits(j, load(s + j));
    store(p + j, z);
    vmax = max(vmax, z);
  }
  const int64_t full = j;
  const Mask tail = tail_mask(len - full);
  if (full < len) {
    const V z = logits(full, load(tail, s + full));
    store(p + full, tail, z);
    vmax = select(tail, max(vmax, z), vmax);
  }
  const V mx = set1(reduce_max(vmax));
  V vsum = zero();
  for (j = 0; j < full; j += kLanes) {
    const V e = vm::exp_v(sub(load(p + j), mx));
    store(p + j, e);
    vsum = add(vsum, e);
  }
  if (full < len) {
    const V e = vm::exp_v(sub(load(tail, p + full), mx));
    store(p + full, tail, e);
    vsum = add(vsum, select(tail, e, zero()));
  }
  const float sum = reduce_add(vsum);
  if (lse) *lse = reduce_max(vmax) + std::log(sum);
  const V inv = set1(1.0f / sum);
  for (j = 0; j < full; j += kLanes) store(p + j, mul(load(p + j), inv));
  if (full < len) store(p + full, tail, mul(load(tail, p + full), inv));
}
#pragma GCC diagnostic pop
#endif

// The row the attention kernels call: SIMD for float where the build has it.
template <class T>
void causal_softmax_row(int64_t i, const T* s, T scale, T slope, T* p, T* lse = nullptr) {
#if LIEGRAD_SIMD
  if constexpr (std::is_same_v<T, float>) {
    causal_softmax_row_simd(i, s, scale, slope, p, lse);
    return;
  }
#endif
  causal_softmax_row_scalar(i, s, scale, slope, p, lse);
}

// Three more row operations. The first is causal_mha.cpp's softmax pullback; the other
// two are mean-head attention's (mean_attention.cpp) around the softmax,
// over the causal part of a row (len = i + 1 entries):
//   add_scaled_row:            a += c p;
//   head_softmax_backward_row: with dot = (1/h) <p, da>, the head's softmax pullback
//     dsk_j = p_j (da_j / h - dot) is added as ds_j += beta dsk_j, and <dsk, s> is
//     returned (beta's gradient). inv_h = 1/h.
// The *_scalar forms are the readable loops and the double path; for float the SIMD
// forms run the tail under a mask (rows are mostly short of a whole vector: the scalar
// tail loops were most of the pullback's time) and fold the sums across lanes.
template <class T>
void add_scaled_row_scalar(int64_t len, T c, const T* p, T* a) {
  for (int64_t j = 0; j < len; ++j) a[j] += c * p[j];
}

template <class T>
T head_softmax_backward_row_scalar(int64_t len, const T* p, const T* da, const T* s, T inv_h, T beta, T* ds) {
  T dot = 0;
  for (int64_t j = 0; j < len; ++j) dot += p[j] * da[j];
  dot *= inv_h;
  T part = 0;
  for (int64_t j = 0; j < len; ++j) {
    const T dsk = p[j] * (inv_h * da[j] - dot);
    ds[j] += beta * dsk;
    part += dsk * s[j];
  }
  return part;
}

// The softmax pullback of one causal row (causal_mha.cpp's backward), in place:
//   d_j <- p_j (d_j - <p, d>),  j < len,
// from dP to dS for the row's len = i + 1 entries.
template <class T>
void softmax_backward_row_scalar(int64_t len, const T* p, T* d) {
  T dot = 0;
  for (int64_t j = 0; j < len; ++j) dot += p[j] * d[j];
  for (int64_t j = 0; j < len; ++j) d[j] = p[j] * (d[j] - dot);
}

#if LIEGRAD_SIMD
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
inline void add_scaled_row_simd(int64_t len, float c, const float* p, float* a) {
  using namespace simd;
  const V vc = set1(c);
  int64_t j = 0;
  for (; j + kLanes <= len; j += kLanes) store(a + j, fmadd(vc, load(p + j), load(a + j)));
  if (j < len) {
    const Mask m = tail_mask(len - j);
    store(a + j, m, fmadd(vc, load(m, p + j), load(m, a + j)));
  }
}

// Two accumulators for <p, d> (rows are at most a few vectors long, so one FMA chain's
// latency was the loop's time; an `omp simd` reduction also spilled its accumulator to
// the stack every step and summed the lanes in a scalar loop: 3/4 of the pullback).
inline void softmax_backward_row_simd(int64_t len, const float* p, float* d) {
  using namespace simd;
  const int64_t full = len - len % kLanes;
  const Mask tail = tail_mask(len - full);  // masked loads give 0 in the other lanes
  V dot0 = zero(), dot1 = zero();
  int64_t j = 0;
  for (; j + 2 * kLanes <= full; j += 2 * kLanes) {
    dot0 = fmadd(load(p + j), load(d + j), dot0);
    dot1 = fmadd(load(p + j + kLanes), load(d + j + kLanes), dot1);
  }
  if (j < full) dot0 = fmadd(load(p + j), load(d + j), dot0);
  if (full < len) dot1 = fmadd(load(tail, p + full), load(tail, d + full), dot1);
  const V dot = set1(reduce_add(add(dot0, dot1)));
  for (j = 0; j < full; j += kLanes) store(d + j, mul(load(p + j), sub(load(d + j), dot)));
  if (full < len) store(d + full, tail, mul(load(tail, p + full), sub(load(tail, d + full), dot)));
}

inline float head_softmax_backward_row_simd(int64_t len, const float* p, const float* da, const float* s, float inv_h,
                                            float beta, float* ds) {
  using namespace simd;
  const int64_t full = len - len % kLanes;
  const Mask tail = tail_mask(len - full);  // masked loads give 0 in the other lanes
  V vdot = zero();
  for (int64_t j = 0; j < full; j += kLanes) vdot = fmadd(load(p + j), load(da + j), vdot);
  if (full < len) vdot = fmadd(load(tail, p + full), load(tail, da + full), vdot);
  const V dot = set1(inv_h * reduce_add(vdot)), vinv_h = set1(inv_h), vbeta = set1(beta);
  V vpart = zero();
  const auto step = [&](const V pj, const V daj, const V sj, const V dsj) {
    const V dsk = mul(pj, sub(mul(vinv_h, daj), dot));
    vpart = fmadd(dsk, sj, vpart);
    return fmadd(vbeta, dsk, dsj);
  };
  for (int64_t j = 0; j < full; j += kLanes) store(ds + j, step(load(p + j), load(da + j), load(s + j), load(ds + j)));
  if (full < len)
    store(ds + full, tail, step(load(tail, p + full), load(tail, da + full), load(tail, s + full), load(tail, ds + full)));
  return reduce_add(vpart);
}
#pragma GCC diagnostic pop
#endif

template <class T>
void add_scaled_row(int64_t len, T c, const T* p, T* a) {
#if LIEGRAD_SIMD
  if constexpr (std::is_same_v<T, float>) return add_scaled_row_simd(len, c, p, a);
#endif
  add_scaled_row_scalar(len, c, p, a);
}

template <class T>
void softmax_backward_row(int64_t len, const T* p, T* d) {
#if LIEGRAD_SIMD
  if constexpr (std::is_same_v<T, float>) return softmax_backward_row_simd(len, p, d);
#endif
  softmax_backward_row_scalar(len, p, d);
}

template <class T>
T head_softmax_backward_row(int64_t len, const T* p, const T* da, const T* s, T inv_h, T beta, T* ds) {
#if LIEGRAD_SIMD
  if constexpr (std::is_same_v<T, float>) return head_softmax_backward_row_simd(len, p, da, s, inv_h, beta, ds);
#endif
  return head_softmax_backward_row_scalar(len, p, da, s, inv_h, beta, ds);
}

}  // namespace liegrad::kernels
