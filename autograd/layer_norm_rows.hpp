// One LayerNorm row in float SIMD (core/simd.hpp), forward and backward, for
// layer_norm in autograd/nn_ops.cpp (whose scalar loops are the readable form and the
// double path). Ba, Kiros and Hinton (2016), over a row x of D entries:
//   forward:  mean = (1/D) sum x_j,  var = (1/D) sum (x_j - mean)^2,  s = 1/sqrt(var + eps),
//             y_j = (x_j - mean) s gamma_j + beta_j;
//   backward: h_j = (x_j - mean) s,  dh_j = g_j gamma_j,
//             dx_j += s (dh_j - mean(dh) - h_j mean(dh h)),  dgamma_j += g_j h_j,  dbeta_j += g_j.
// Rows are a few vectors long (D = 64 in the transformer), so every loop runs whole
// vectors and one masked tail, and the sums fold across lanes once. The scalar loops'
// `omp simd` reductions spilled their accumulators and summed lanes in scalar code, and
// the double accumulators halved the vector width: LayerNorm was 7% of a transformer
// step (perf, 2026-12-04). Here the sums are float; the backward's gamma and beta sums
// go to float rows of one chunk (the caller adds them to its double totals per chunk).
#pragma once
#include <cmath>
#include <cstdint>

#include "core/simd.hpp"

#if LIEGRAD_SIMD
namespace liegrad::ag::layer_norm_rows {

// GCC 12's intrinsic headers trip -Wmaybe-uninitialized on their own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// f(j, mask) over the row's vectors: mask is all lanes except on the tail.
template <class F>
inline void for_vectors(int64_t D, F&& f) {
  using namespace simd;
  const int64_t full = D - D % kLanes;
  for (int64_t j = 0; j < full; j += kLanes) f(j, tail_mask(kLanes), false);
  if (full < D) f(full, tail_mask(D - full), true);
}

// y (D) = the normalised row of x (D); returns {mean, 1/std} through the pointers.
inline void forward(int64_t D, const float* x, const float* gamma, const float* beta, float eps, float* y,
                    float* mean_out, float* inv_std_out) {
  using namespace simd;
  auto ld = [](const float* p, Mask m, bool tail) { return tail ? load(m, p) : load(p); };
  V sum = zero();
  for_vectors(D, [&](int64_t j, Mask m, bool tail) { sum = add(sum, ld(x + j, m, tail)); });
  const float mu = reduce_add(sum) / static_cast<float>(D);
  const V vmu = set1(mu);
  V sq = zero();
  for_vectors(D, [&](int64_t j, Mask m, bool tail) {
    const V c = tail ? select(m, sub(load(m, x + j), vmu), zero()) : sub(load(x + j), vmu);
    sq = fmadd(c, c, sq);
  });
  const float var = reduce_add(sq) / static_cast<float>(D);
  const float is = 1.0f / std::sqrt(var + eps);
  const V vis = set1(is);
  for_vectors(D, [&](int64_t j, Mask m, bool tail) {
    const V v = fmadd(mul(sub(ld(x + j, m, tail), vmu), vis), ld(gamma + j, m, tail), ld(beta + j, m, tail));
    if (tail)
      store(y + j, m, v);
    else
      store(y + j, v);
  });
  *mean_out = mu;
  *inv_std_out = is;
}

// The row's pullback: dx (D) += ... (nullptr: not wanted); dgamma, dbeta (D) += ...
// (nullptr: not wanted). g (D) is the gradient of y.
inline void backward(int64_t D, const float* x, const float* g, const float* gamma, float mean, float inv_std,
                     float* dx, float* dgamma, float* dbeta) {
  using namespace simd;
  auto ld = [](const float* p, Mask m, bool tail) { return tail ? load(m, p) : load(p); };
  auto st = [](float* p, Mask m, bool tail, V v) {
    if (tail)
      store(p, m, v);
    else
      store(p, v);
  };
  const V vmu = set1(mean), vis = set1(inv_std);
  V m1 = zero(), m2 = zero();  // sums of dh and of dh h (masked lanes load 0)
  for_vectors(D, [&](int64_t j, Mask m, bool tail) {
    const V h = mul(sub(ld(x + j, m, tail), vmu), vis), gj = ld(g + j, m, tail);
    if (dgamma) st(dgamma + j, m, tail, fmadd(gj, h, ld(dgamma + j, m, tail)));
    if (dbeta) st(dbeta + j, m, tail, add(gj, ld(dbeta + j, m, tail)));
    if (!dx) return;
    const V dh = mul(gj, ld(gamma + j, m, tail));
    m1 = add(m1, dh);
    m2 = fmadd(dh, h, m2);
  });
  if (!dx) return;
  const float inv_d = 1.0f / static_cast<float>(D);
  const V vm1 = set1(reduce_add(m1) * inv_d), vm2 = set1(reduce_add(m2) * inv_d);
  for_vectors(D, [&](int64_t j, Mask m, bool tail) {
    const V h = mul(sub(ld(x + j, m, tail), vmu), vis);
    const V dh = mul(ld(g + j, m, tail), ld(gamma + j, m, tail));
    st(dx + j, m, tail, fmadd(vis, fnmadd(h, vm2, sub(dh, vm1)), ld(dx + j, m, tail)));
  });
}

#pragma GCC diagnostic pop

}  // namespace liegrad::ag::layer_norm_rows
#endif
