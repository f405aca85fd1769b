// One row of a causal softmax with an ALiBi-style distance penalty, shared by the
// fused attention kernels (causal_mha.cpp, mean_attention.cpp):
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
template <class T>
void causal_softmax_row_scalar(int64_t i, const T* s, T scale, T slope, T* p) {
  T mx = -INFINITY;
  for (int64_t j = 0; j <= i; ++j) {
    p[j] = scale * s[j] - slope * static_cast<T>(i - j);
    mx = std::max(mx, p[j]);
  }
  for (int64_t j = 0; j <= i; ++j) p[j] -= mx;
  vm::exp_array(i + 1, p, p);
  T sum = 0;
  for (int64_t j = 0; j <= i; ++j) sum += p[j];
  const T inv = T(1) / sum;
  for (int64_t j = 0; j <= i; ++j) p[j] *= inv;
}

#if LIEGRAD_SIMD
// The same row for float, a vector of lanes at a time; the tail under a mask. The sum
// is folded across lanes, so it differs from the scalar form in the last bits.
// GCC 12's intrinsic headers trip -Wmaybe-uninitialized on their own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
inline void causal_softmax_row_simd(int64_t i, const float* s, float scale, float slope, float* p) {
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
  const V inv = set1(1.0f / reduce_add(vsum));
  for (j = 0; j < full; j += kLanes) store(p + j, mul(load(p + j), inv));
  if (full < len) store(p + full, tail, mul(load(tail, p + full), inv));
}
#pragma GCC diagnostic pop
#endif

// The row the attention kernels call: SIMD for float where the build has it.
template <class T>
void causal_softmax_row(int64_t i, const T* s, T scale, T slope, T* p) {
#if LIEGRAD_SIMD
  if constexpr (std::is_same_v<T, float>) {
    causal_softmax_row_simd(i, s, scale, slope, p);
    return;
  }
#endif
  causal_softmax_row_scalar(i, s, scale, slope, p);
}

}  // namespace liegrad::kernels
