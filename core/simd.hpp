// One float SIMD vocabulary over the instruction set the build targets, so the hot
// kernels (core/small_gemm.cpp, core/vmath.hpp) are written once:
//   AVX-512F      V = __m512, 16 lanes, 32 registers, masks are __mmask16;
//   AVX2 + FMA    V = __m256,  8 lanes, 16 registers, masks are lane vectors;
//   neither       LIEGRAD_SIMD is 0 and callers keep their plain loops.
// A Mask selects the first `rem` lanes (rem in 1..kLanes); masked loads read zeros
// in the other lanes and never touch their memory, masked stores leave it alone.
// ldexp(p, n) = p 2^n for lanes of n holding integers in [-252, 252], with IEEE
// overflow to inf and gradual underflow to 0 (AVX-512: vscalefps; AVX2: two exact
// multiplications by powers of two built in the exponent field, so each factor
// stays a normal float). select(m, a, b) takes a's lanes under m and b's elsewhere;
// iota() holds 0, 1, ..., kLanes-1; any_nan(a) says whether a lane is NaN;
// reduce_add and reduce_max fold the lanes to one float (in an order of the
// instruction set's choosing, so sums differ from a serial loop in the last bits).
// AVX-512 only: transpose16 transposes a 16 x 16 matrix held as 16 row registers.
#pragma once
#include <cstdint>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define LIEGRAD_SIMD 512
#elif defined(__AVX2__) && defined(__FMA__)
#define LIEGRAD_SIMD 256
#else
#define LIEGRAD_SIMD 0
#endif

namespace liegrad::simd {

#if LIEGRAD_SIMD == 512
using V = __m512;
using Mask = __mmask16;
constexpr int kLanes = 16;
constexpr int kRegisters = 32;
inline Mask tail_mask(int64_t rem) { return static_cast<Mask>(rem >= 16 ? 0xFFFF : (1u << rem) - 1); }
inline V zero() { return _mm512_setzero_ps(); }
inline V set1(float x) { return _mm512_set1_ps(x); }
inline V load(const float* p) { return _mm512_loadu_ps(p); }
inline V load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
inline void store(float* p, V v) { _mm512_storeu_ps(p, v); }
inline void store(float* p, Mask m, V v) { _mm512_mask_storeu_ps(p, m, v); }
inline V add(V a, V b) { return _mm512_add_ps(a, b); }
inline V sub(V a, V b) { return _mm512_sub_ps(a, b); }
inline V mul(V a, V b) { return _mm512_mul_ps(a, b); }
inline V div(V a, V b) { return _mm512_div_ps(a, b); }
inline V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }    // a b + c
inline V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a b
// min/max return the second operand when either is NaN (as minps/maxps do).
inline V min(V a, V b) { return _mm512_min_ps(a, b); }
inline V max(V a, V b) { return _mm512_max_ps(a, b); }
inline V abs(V a) { return _mm512_abs_ps(a); }
inline V bit_and(V a, V b) { return _mm512_and_ps(a, b); }
inline V bit_or(V a, V b) { return _mm512_or_ps(a, b); }
inline V round_nearest(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline V ldexp(V p, V n) { return _mm512_scalef_ps(p, n); }
inline V select(Mask m, V a, V b) { return _mm512_mask_blend_ps(m, b, a); }  // a where m, else b
inline V iota() { return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }
// GCC 12's reduction intrinsics trip -W(maybe-)uninitialized on their own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
inline bool any_nan(V a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q) != 0; }
inline float reduce_add(V a) { return _mm512_reduce_add_ps(a); }
inline float reduce_max(V a) { return _mm512_reduce_max_ps(a); }

// x[j] <- column j of the 16 x 16 matrix whose row i was x[i]: unpack ps, unpack pd,
// two rounds of 128-bit lane shuffles (64 shuffles in all).
[[gnu::always_inline]] inline void transpose16(V (&x)[16]) {
  V y[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    y[i] = _mm512_unpacklo_ps(x[i], x[i + 1]);
    y[i + 1] = _mm512_unpackhi_ps(x[i], x[i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {
    x[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(y[i]), _mm512_castps_pd(y[i + 2])));
    x[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(y[i]), _mm512_castps_pd(y[i + 2])));
    x[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(y[i + 1]), _mm512_castps_pd(y[i + 3])));
    x[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(y[i + 1]), _mm512_castps_pd(y[i + 3])));
  }
  // x[4q + p] now holds, in each 128-bit lane L, column 4L + p of rows 4q..4q+3.
#pragma GCC unroll 4
  for (int p = 0; p < 4; ++p) {
    y[p] = _mm512_shuffle_f32x4(x[p], x[4 + p], 0x88);        // lanes 0,2 of rows 0-3 | 4-7
    y[4 + p] = _mm512_shuffle_f32x4(x[p], x[4 + p], 0xDD);    // lanes 1,3
    y[8 + p] = _mm512_shuffle_f32x4(x[8 + p], x[12 + p], 0x88);
    y[12 + p] = _mm512_shuffle_f32x4(x[8 + p], x[12 + p], 0xDD);
  }
#pragma GCC unroll 4
  for (int p = 0; p < 4; ++p) {
    x[p] = _mm512_shuffle_f32x4(y[p], y[8 + p], 0x88);           // column p
    x[8 + p] = _mm512_shuffle_f32x4(y[p], y[8 + p], 0xDD);       // column 8 + p
    x[4 + p] = _mm512_shuffle_f32x4(y[4 + p], y[12 + p], 0x88);  // column 4 + p
    x[12 + p] = _mm512_shuffle_f32x4(y[4 + p], y[12 + p], 0xDD); // column 12 + p
  }
}
#pragma GCC diagnostic pop

#elif LIEGRAD_SIMD == 256
using V = __m256;
using Mask = __m256i;
constexpr int kLanes = 8;
constexpr int kRegisters = 16;
inline Mask tail_mask(int64_t rem) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rem >= 8 ? 8 : rem)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline V zero() { return _mm256_setzero_ps(); }
inline V set1(float x) { return _mm256_set1_ps(x); }
inline V load(const float* p) { return _mm256_loadu_ps(p); }
inline V load(Mask m, const float* p) { return _mm256_maskload_ps(p, m); }
inline void store(float* p, V v) { _mm256_storeu_ps(p, v); }
inline void store(float* p, Mask m, V v) { _mm256_maskstore_ps(p, m, v); }
inline V add(V a, V b) { return _mm256_add_ps(a, b); }
inline V sub(V a, V b) { return _mm256_sub_ps(a, b); }
inline V mul(V a, V b) { return _mm256_mul_ps(a, b); }
inline V div(V a, V b) { return _mm256_div_ps(a, b); }
inline V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
inline V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
inline V min(V a, V b) { return _mm256_min_ps(a, b); }
inline V max(V a, V b) { return _mm256_max_ps(a, b); }
inline V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
inline V bit_and(V a, V b) { return _mm256_and_ps(a, b); }
inline V bit_or(V a, V b) { return _mm256_or_ps(a, b); }
inline V round_nearest(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
// 2^k for integer lanes k in [-126, 127], built in the exponent field.
inline V pow2i(__m256i k) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23)); }
inline V ldexp(V p, V n) {
  const __m256i k = _mm256_cvtps_epi32(n);
  const __m256i k1 = _mm256_srai_epi32(k, 1);  // k = k1 + k2, both within the normal range
  const __m256i k2 = _mm256_sub_epi32(k, k1);
  return _mm256_mul_ps(_mm256_mul_ps(p, pow2i(k1)), pow2i(k2));
}
inline V select(Mask m, V a, V b) { return _mm256_blendv_ps(b, a, _mm256_castsi256_ps(m)); }  // a where m, else b
inline V iota() { return _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7); }
inline bool any_nan(V a) { return _mm256_movemask_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q)) != 0; }
inline float reduce_add(V a) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}
inline float reduce_max(V a) {
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
}
#endif

}  // namespace liegrad::simd
