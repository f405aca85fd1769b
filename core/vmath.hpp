// Vectorised element-wise math on float arrays (the hot loops of softmax and the
// LSTM gates) and the dot product of two rows, with scalar std:: versions for double. With SIMD (core/simd.hpp:
// AVX-512 or AVX2+FMA), exp is the Cephes single-precision scheme: x = n ln2 + r,
// |r| <= ln2/2, e^r by a degree-6 polynomial (relative error ~1.2e-7, about one float
// ulp), 2^n applied by simd::ldexp (which underflows to 0 and overflows to inf
// correctly; NaN propagates).
#pragma once
#include <cmath>
#include <cstdint>

#include "core/simd.hpp"

namespace liegrad::vm {

#if LIEGRAD_SIMD
// GCC 12's intrinsic headers trip -Wmaybe-uninitialized on their own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
inline simd::V exp_v(simd::V x) {
  using namespace simd;
  const V log2e = set1(1.44269504088896341f);
  const V c1 = set1(0.693359375f), c2 = set1(-2.12194440e-4f);
  // Clamp so n stays small; min/max return their second operand for a NaN, so NaN passes.
  x = max(set1(-104.0f), min(set1(100.0f), x));
  const V n = round_nearest(mul(x, log2e));
  V r = fnmadd(n, c1, x);
  r = fnmadd(n, c2, r);
  V p = set1(1.9875691500e-4f);
  p = fmadd(p, r, set1(1.3981999507e-3f));
  p = fmadd(p, r, set1(8.3334519073e-3f));
  p = fmadd(p, r, set1(4.1665795894e-2f));
  p = fmadd(p, r, set1(1.6666665459e-1f));
  p = fmadd(p, r, set1(5.0000001201e-1f));
  p = fmadd(mul(p, r), r, add(r, set1(1.0f)));
  return ldexp(p, n);
}
#pragma GCC diagnostic pop

// y[i] = f(x[i]) a vector at a time, the tail under a mask (no scalar remainder; full
// vectors use plain loads and stores, since AVX2's masked store is slow on AMD Zen).
// f maps V -> V; with a second input, f(x, z).
template <class F>
inline void map_v(int64_t len, const float* x, float* y, F f) {
  int64_t i = 0;
  for (; i + simd::kLanes <= len; i += simd::kLanes) simd::store(y + i, f(simd::load(x + i)));
  if (i < len) {
    const simd::Mask m = simd::tail_mask(len - i);
    simd::store(y + i, m, f(simd::load(m, x + i)));
  }
}
template <class F>
inline void map_v(int64_t len, const float* x, const float* z, float* y, F f) {
  int64_t i = 0;
  for (; i + simd::kLanes <= len; i += simd::kLanes) simd::store(y + i, f(simd::load(x + i), simd::load(z + i)));
  if (i < len) {
    const simd::Mask m = simd::tail_mask(len - i);
    simd::store(y + i, m, f(simd::load(m, x + i), simd::load(m, z + i)));
  }
}
#endif

// <a, b> over len entries. For float with SIMD, two vector accumulators (one FMA chain's
// latency would be the loop's time; a plain `acc +=` loop is not vectorised at all
// without -ffast-math, since it fixes the order of the sum) and the tail under a mask.
#if LIEGRAD_SIMD
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
inline float dot_array(int64_t len, const float* a, const float* b) {
#if LIEGRAD_SIMD
  using namespace simd;
  V acc0 = zero(), acc1 = zero();
  int64_t j = 0;
  for (; j + 2 * kLanes <= len; j += 2 * kLanes) {
    acc0 = fmadd(load(a + j), load(b + j), acc0);
    acc1 = fmadd(load(a + j + kLanes), load(b + j + kLanes), acc1);
  }
  if (j + kLanes <= len) {
    acc0 = fmadd(load(a + j), load(b + j), acc0);
    j += kLanes;
  }
  if (j < len) {
    const Mask m = tail_mask(len - j);  // masked loads give 0 in the other lanes
    acc1 = fmadd(load(m, a + j), load(m, b + j), acc1);
  }
  return reduce_add(add(acc0, acc1));
#else
  float acc = 0;
  for (int64_t j = 0; j < len; ++j) acc += a[j] * b[j];
  return acc;
#endif
}
#if LIEGRAD_SIMD
#pragma GCC diagnostic pop
#endif
inline double dot_array(int64_t len, const double* a, const double* b) {
  double acc = 0;
  for (int64_t j = 0; j < len; ++j) acc += a[j] * b[j];
  return acc;
}

// y[i] = exp(x[i]) (in place allowed).
inline void exp_array(int64_t len, const float* x, float* y) {
#if LIEGRAD_SIMD
  map_v(len, x, y, exp_v);
#else
  for (int64_t i = 0; i < len; ++i) y[i] = std::exp(x[i]);
#endif
}
inline void exp_array(int64_t len, const double* x, double* y) {
  for (int64_t i = 0; i < len; ++i) y[i] = std::exp(x[i]);
}

// y[i] = 1 / (1 + exp(-x[i])).
inline void sigmoid_array(int64_t len, const float* x, float* y) {
#if LIEGRAD_SIMD
  const simd::V one = simd::set1(1.0f);
  map_v(len, x, y, [&](simd::V v) { return simd::div(one, simd::add(one, exp_v(simd::sub(simd::zero(), v)))); });
#else
  for (int64_t i = 0; i < len; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
#endif
}
inline void sigmoid_array(int64_t len, const double* x, double* y) {
  for (int64_t i = 0; i < len; ++i) y[i] = 1.0 / (1.0 + std::exp(-x[i]));
}

// y[i] = tanh(x[i]) = 1 - 2 / (exp(2x) + 1) (absolute error ~1e-7).
inline void tanh_array(int64_t len, const float* x, float* y) {
#if LIEGRAD_SIMD
  const simd::V one = simd::set1(1.0f), two = simd::set1(2.0f);
  map_v(len, x, y, [&](simd::V v) { return simd::sub(one, simd::div(two, simd::add(exp_v(simd::add(v, v)), one))); });
#else
  for (int64_t i = 0; i < len; ++i) y[i] = std::tanh(x[i]);
#endif
}
inline void tanh_array(int64_t len, const double* x, double* y) {
  for (int64_t i = 0; i < len; ++i) y[i] = std::tanh(x[i]);
}

// GELU (exact form, x Phi(x)) and its derivative Phi(x) + x phi(x). Phi via erf by
// Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7) in float; std::erf in double.
#if LIEGRAD_SIMD
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Phi(x) and phi(x) = exp(-x^2/2) / sqrt(2 pi), a vector of lanes at a time.
inline void normal_cdf_pdf_v(simd::V x, simd::V& cdf, simd::V& pdf) {
  using namespace simd;
  const V z = mul(x, set1(0.70710678118654752f));  // x / sqrt 2
  const V az = abs(z);
  const V t = div(set1(1.0f), fmadd(set1(0.3275911f), az, set1(1.0f)));
  V p = set1(1.061405429f);
  p = fmadd(p, t, set1(-1.453152027f));
  p = fmadd(p, t, set1(1.421413741f));
  p = fmadd(p, t, set1(-0.284496736f));
  p = fmadd(p, t, set1(0.254829592f));
  p = mul(p, t);
  const V e = exp_v(mul(set1(-1.0f), mul(az, az)));  // exp(-z^2) = exp(-x^2/2)
  const V erf_abs = fnmadd(p, e, set1(1.0f));
  // erf(z) has the sign of z: copy z's sign bit onto |erf|.
  const V erf = bit_or(erf_abs, bit_and(z, set1(-0.0f)));
  cdf = mul(set1(0.5f), add(set1(1.0f), erf));
  pdf = mul(set1(0.39894228040143267794f), e);
}
#pragma GCC diagnostic pop
#endif

// y = gelu(x).
inline void gelu_array(int64_t len, const float* x, float* y) {
#if LIEGRAD_SIMD
  map_v(len, x, y, [](simd::V v) {
    simd::V cdf, pdf;
    normal_cdf_pdf_v(v, cdf, pdf);
    return simd::mul(v, cdf);
  });
#else
  for (int64_t i = 0; i < len; ++i) y[i] = x[i] * 0.5f * (1.0f + std::erf(x[i] * 0.70710678118654752f));
#endif
}
inline void gelu_array(int64_t len, const double* x, double* y) {
  for (int64_t i = 0; i < len; ++i) y[i] = x[i] * 0.5 * (1.0 + std::erf(x[i] * 0.70710678118654752440));
}

// dx = g * gelu'(x).
inline void gelu_grad_array(int64_t len, const float* x, const float* g, float* dx) {
#if LIEGRAD_SIMD
  map_v(len, x, g, dx, [](simd::V v, simd::V gv) {
    simd::V cdf, pdf;
    normal_cdf_pdf_v(v, cdf, pdf);
    return simd::mul(gv, simd::fmadd(v, pdf, cdf));
  });
#else
  for (int64_t i = 0; i < len; ++i) {
    const float cdf = 0.5f * (1.0f + std::erf(x[i] * 0.70710678118654752f));
    const float pdf = 0.39894228040143267794f * std::exp(-0.5f * x[i] * x[i]);
    dx[i] = g[i] * (cdf + x[i] * pdf);
  }
#endif
}
inline void gelu_grad_array(int64_t len, const double* x, const double* g, double* dx) {
  for (int64_t i = 0; i < len; ++i) {
    const double cdf = 0.5 * (1.0 + std::erf(x[i] * 0.70710678118654752440));
    const double pdf = 0.39894228040143267794 * std::exp(-0.5 * x[i] * x[i]);
    dx[i] = g[i] * (cdf + x[i] * pdf);
  }
}

// y = gelu(x) and d = gelu'(x) in one pass (each bit for bit as gelu_array and the
// factor gelu_grad_array multiplies g by), so a backward pass needs no erf: dx = g d.
inline void gelu_with_grad_array(int64_t len, const float* x, float* y, float* d) {
#if LIEGRAD_SIMD
  using namespace simd;
  const auto one = [&](int64_t i, V v, auto&& put) {
    V cdf, pdf;
    normal_cdf_pdf_v(v, cdf, pdf);
    put(y + i, mul(v, cdf));
    put(d + i, fmadd(v, pdf, cdf));
  };
  int64_t i = 0;
  for (; i + kLanes <= len; i += kLanes) one(i, load(x + i), [](float* p, V v) { store(p, v); });
  if (i < len) {
    const Mask m = tail_mask(len - i);
    one(i, load(m, x + i), [&](float* p, V v) { store(p, m, v); });
  }
#else
  for (int64_t i = 0; i < len; ++i) {
    const float cdf = 0.5f * (1.0f + std::erf(x[i] * 0.70710678118654752f));
    const float pdf = 0.39894228040143267794f * std::exp(-0.5f * x[i] * x[i]);
    y[i] = x[i] * 0.5f * (1.0f + std::erf(x[i] * 0.70710678118654752f));
    d[i] = cdf + x[i] * pdf;
  }
#endif
}
inline void gelu_with_grad_array(int64_t len, const double* x, double* y, double* d) {
  for (int64_t i = 0; i < len; ++i) {
    const double cdf = 0.5 * (1.0 + std::erf(x[i] * 0.70710678118654752440));
    const double pdf = 0.39894228040143267794 * std::exp(-0.5 * x[i] * x[i]);
    y[i] = x[i] * 0.5 * (1.0 + std::erf(x[i] * 0.70710678118654752440));
    d[i] = cdf + x[i] * pdf;
  }
}

}  // namespace liegrad::vm
