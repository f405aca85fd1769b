// Vectorised element-wise math on float arrays (the hot loops of softmax and the
// LSTM gates), with scalar std:: versions for double. With AVX-512, exp is the
// Cephes single-precision scheme: x = n ln2 + r, |r| <= ln2/2, e^r by a degree-6
// polynomial (relative error ~1.2e-7, about one float ulp), 2^n applied by vscalefps
// (which also underflows to 0 and overflows to inf correctly; NaN propagates).
#pragma once
#include <cmath>
#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace liegrad::vm {

#if defined(__AVX512F__)
// GCC 12's intrinsic headers trip -Wmaybe-uninitialized on their own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
inline __m512 exp16(__m512 x) {
  const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
  const __m512 c1 = _mm512_set1_ps(0.693359375f), c2 = _mm512_set1_ps(-2.12194440e-4f);
  // Clamp so n stays small; min/max return their second operand for a NaN, so NaN passes.
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_min_ps(_mm512_set1_ps(100.0f), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, c1, x);
  r = _mm512_fnmadd_ps(n, c2, r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}
#pragma GCC diagnostic pop

// y[i] = f(x[i]) sixteen lanes at a time, the tail under a mask (no scalar remainder).
// f maps __m512 -> __m512; with a second input, f(x16, z16).
template <class F>
inline void map16(int64_t len, const float* x, float* y, F f) {
  for (int64_t i = 0; i < len; i += 16) {
    const __mmask16 m = static_cast<__mmask16>(len - i >= 16 ? 0xFFFF : (1u << (len - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, f(_mm512_maskz_loadu_ps(m, x + i)));
  }
}
template <class F>
inline void map16(int64_t len, const float* x, const float* z, float* y, F f) {
  for (int64_t i = 0; i < len; i += 16) {
    const __mmask16 m = static_cast<__mmask16>(len - i >= 16 ? 0xFFFF : (1u << (len - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, f(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, z + i)));
  }
}
#endif

// y[i] = exp(x[i]) (in place allowed).
inline void exp_array(int64_t len, const float* x, float* y) {
#if defined(__AVX512F__)
  map16(len, x, y, exp16);
#else
  for (int64_t i = 0; i < len; ++i) y[i] = std::exp(x[i]);
#endif
}
inline void exp_array(int64_t len, const double* x, double* y) {
  for (int64_t i = 0; i < len; ++i) y[i] = std::exp(x[i]);
}

// y[i] = 1 / (1 + exp(-x[i])).
inline void sigmoid_array(int64_t len, const float* x, float* y) {
#if defined(__AVX512F__)
  const __m512 one = _mm512_set1_ps(1.0f);
  map16(len, x, y, [&](__m512 v) { return _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), v)))); });
#else
  for (int64_t i = 0; i < len; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
#endif
}
inline void sigmoid_array(int64_t len, const double* x, double* y) {
  for (int64_t i = 0; i < len; ++i) y[i] = 1.0 / (1.0 + std::exp(-x[i]));
}

// y[i] = tanh(x[i]) = 1 - 2 / (exp(2x) + 1) (absolute error ~1e-7).
inline void tanh_array(int64_t len, const float* x, float* y) {
#if defined(__AVX512F__)
  const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
  map16(len, x, y, [&](__m512 v) { return _mm512_sub_ps(one, _mm512_div_ps(two, _mm512_add_ps(exp16(_mm512_add_ps(v, v)), one))); });
#else
  for (int64_t i = 0; i < len; ++i) y[i] = std::tanh(x[i]);
#endif
}
inline void tanh_array(int64_t len, const double* x, double* y) {
  for (int64_t i = 0; i < len; ++i) y[i] = std::tanh(x[i]);
}

// GELU (exact form, x Phi(x)) and its derivative Phi(x) + x phi(x). Phi via erf by
// Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7) in float; std::erf in double.
#if defined(__AVX512F__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Phi(x) and phi(x) = exp(-x^2/2) / sqrt(2 pi) for 16 lanes.
inline void normal_cdf_pdf16(__m512 x, __m512& cdf, __m512& pdf) {
  const __m512 z = _mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752f));  // x / sqrt 2
  const __m512 az = _mm512_abs_ps(z);
  const __m512 t = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), az, _mm512_set1_ps(1.0f)));
  __m512 p = _mm512_set1_ps(1.061405429f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.453152027f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
  p = _mm512_mul_ps(p, t);
  const __m512 e = exp16(_mm512_mul_ps(_mm512_set1_ps(-1.0f), _mm512_mul_ps(az, az)));  // exp(-z^2) = exp(-x^2/2)
  const __m512 erf_abs = _mm512_fnmadd_ps(p, e, _mm512_set1_ps(1.0f));
  // erf(z) has the sign of z: copy z's sign bit onto |erf|.
  const __m512 sign = _mm512_and_ps(z, _mm512_set1_ps(-0.0f));
  const __m512 erf = _mm512_or_ps(erf_abs, sign);
  cdf = _mm512_mul_ps(_mm512_set1_ps(0.5f), _mm512_add_ps(_mm512_set1_ps(1.0f), erf));
  pdf = _mm512_mul_ps(_mm512_set1_ps(0.39894228040143267794f), e);
}
#pragma GCC diagnostic pop
#endif

// y = gelu(x).
inline void gelu_array(int64_t len, const float* x, float* y) {
#if defined(__AVX512F__)
  map16(len, x, y, [](__m512 v) {
    __m512 cdf, pdf;
    normal_cdf_pdf16(v, cdf, pdf);
    return _mm512_mul_ps(v, cdf);
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
#if defined(__AVX512F__)
  map16(len, x, g, dx, [](__m512 v, __m512 gv) {
    __m512 cdf, pdf;
    normal_cdf_pdf16(v, cdf, pdf);
    return _mm512_mul_ps(gv, _mm512_fmadd_ps(v, pdf, cdf));
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

}  // namespace liegrad::vm
