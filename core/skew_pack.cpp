// The fast skew packing maps (see skew_pack.hpp).
#include "core/skew_pack.hpp"

#include "core/simd.hpp"

namespace liegrad {

#if LIEGRAD_SIMD == 512
// GCC 12's intrinsic headers trip -Wmaybe-uninitialized on their own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace {

// Lanes j with i < j < d: where row i keeps its share of u.
inline __mmask16 above_diagonal(int i, int64_t d) {
  const unsigned row = d >= 16 ? 0xFFFFu : (1u << d) - 1u;
  return static_cast<__mmask16>(row & ~((2u << i) - 1u));
}

}  // namespace

void skew_from_upper(int64_t d, const float* u, float c, float* out, int64_t ldo) {
  if (d > 16) return skew_from_upper_loops(d, u, c, out, ldo);
  const __m512 cv = _mm512_set1_ps(c);
  __m512 upper[16], lower[16];
  int64_t p = 0;
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {
    if (i < d) {
      const __mmask16 m = above_diagonal(i, d);
      upper[i] = _mm512_mul_ps(cv, _mm512_maskz_expandloadu_ps(m, u + p));  // c u, zero on and below the diagonal
      p += d - 1 - i;
    } else {
      upper[i] = _mm512_setzero_ps();
    }
    lower[i] = upper[i];
  }
  simd::transpose16(lower);  // lower[i] lane j (j < i) = c u at (j, i)
  const __mmask16 row = simd::tail_mask(d);
  const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i)
    if (i < d) {
      const __mmask16 below = static_cast<__mmask16>((1u << i) - 1u);
      // -(c u) below the diagonal: the sign bit flipped (an integer xor: AVX-512F alone)
      const __m512 r = _mm512_castsi512_ps(
          _mm512_mask_xor_epi32(_mm512_castps_si512(upper[i]), below, _mm512_castps_si512(lower[i]), sign));
      _mm512_mask_storeu_ps(out + i * ldo, row, r);
    }
}

void upper_of_skew(int64_t d, const float* X, int64_t ldx, float c, float* u) {
  if (d > 16) return upper_of_skew_loops(d, X, ldx, c, u);
  const __mmask16 row = simd::tail_mask(d);
  __m512 x[16], xt[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {
    x[i] = i < d ? _mm512_maskz_loadu_ps(row, X + i * ldx) : _mm512_setzero_ps();
    xt[i] = x[i];
  }
  simd::transpose16(xt);  // xt[i] lane j = X[j, i]
  const __m512 cv = _mm512_set1_ps(c);
  int64_t p = 0;
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i)
    if (i < d - 1) {
      const int64_t len = d - 1 - i;
      const __m512 v = _mm512_mul_ps(cv, _mm512_sub_ps(x[i], xt[i]));
      _mm512_mask_storeu_ps(u + p, simd::tail_mask(len), _mm512_maskz_compress_ps(above_diagonal(i, d), v));
      p += len;
    }
}
#pragma GCC diagnostic pop

#else

void skew_from_upper(int64_t d, const float* u, float c, float* out, int64_t ldo) {
  skew_from_upper_loops(d, u, c, out, ldo);
}
void upper_of_skew(int64_t d, const float* X, int64_t ldx, float c, float* u) { upper_of_skew_loops(d, X, ldx, c, u); }

#endif

}  // namespace liegrad
