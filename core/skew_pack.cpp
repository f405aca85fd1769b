// The fast skew packing maps (see skew_pack.hpp).
#include "core/skew_pack.hpp"

#include "core/simd.hpp"
#include "core/small_gemm.hpp"

namespace liegrad {

#if LIEGRAD_SIMD == 512
// GCC 12's intrinsic headers trip -W(maybe-)uninitialized on their own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
namespace {

// Lanes j with i < j < d: where row i keeps its share of u.
inline __mmask16 above_diagonal(int i, int64_t d) {
  const unsigned row = d >= 16 ? 0xFFFFu : (1u << d) - 1u;
  return static_cast<__mmask16>(row & ~((2u << i) - 1u));
}

// upper's lanes from i on, lower's lanes below i with the sign bit flipped: -(c u) below
// the diagonal (an integer xor: AVX-512F alone).
inline __m512 merge_negated_below(__m512 upper, __m512 lower, int i) {
  const __mmask16 below = static_cast<__mmask16>((1u << i) - 1u);
  const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  return _mm512_castsi512_ps(
      _mm512_mask_xor_epi32(_mm512_castps_si512(upper), below, _mm512_castps_si512(lower), sign));
}

// d <= 16: one register per row.
void skew_from_upper_16(int64_t d, const float* u, float c, float* out, int64_t ldo) {
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
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i)
    if (i < d) _mm512_mask_storeu_ps(out + i * ldo, row, merge_negated_below(upper[i], lower[i], i));
}

// 16 < d <= 32: two registers per row (columns 0-15 and 16-31), three 16 x 16 tile
// transposes: the lower triangle of tile (0,0) from its upper one, tile (1,0) (rows 16..,
// columns 0-15, all below the diagonal) from tile (0,1), tile (1,1)'s lower triangle
// from its upper one.
void skew_from_upper_32(int64_t d, const float* u, float c, float* out, int64_t ldo) {
  const __m512 cv = _mm512_set1_ps(c);
  const int64_t d1 = d - 16;  // columns in the second register
  const __mmask16 tail = simd::tail_mask(d1);
  __m512 up0[16], up1[32], t00[16], t01[16], t11[16];
  int64_t p = 0;
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {  // rows 0-15: columns i+1..15, then 16..d-1
    up0[i] = _mm512_mul_ps(cv, _mm512_maskz_expandloadu_ps(above_diagonal(i, 16), u + p));
    p += 15 - i;
    up1[i] = _mm512_mul_ps(cv, _mm512_maskz_loadu_ps(tail, u + p));
    p += d1;
    t00[i] = up0[i];
    t01[i] = up1[i];
  }
#pragma GCC unroll 16
  for (int q = 0; q < 16; ++q) {  // rows 16 + q: columns 17 + q .. d-1
    if (q < d1) {
      up1[16 + q] = _mm512_mul_ps(cv, _mm512_maskz_expandloadu_ps(above_diagonal(q, d1), u + p));
      p += d1 - 1 - q;
    } else {
      up1[16 + q] = _mm512_setzero_ps();
    }
    t11[q] = up1[16 + q];
  }
  simd::transpose16(t00);  // t00[i] lane j = c u at (j, i), i, j < 16
  simd::transpose16(t01);  // t01[q] lane j = c u at (j, 16 + q)
  simd::transpose16(t11);  // t11[q] lane l = c u at (16 + l, 16 + q)
  const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {
    _mm512_storeu_ps(out + i * ldo, merge_negated_below(up0[i], t00[i], i));
    _mm512_mask_storeu_ps(out + i * ldo + 16, tail, up1[i]);
  }
#pragma GCC unroll 16
  for (int q = 0; q < 16; ++q)
    if (q < d1) {
      float* r = out + (16 + q) * ldo;
      _mm512_storeu_ps(r, _mm512_castsi512_ps(_mm512_xor_epi32(_mm512_castps_si512(t01[q]), sign)));
      _mm512_mask_storeu_ps(r + 16, tail, merge_negated_below(up1[16 + q], t11[q], q));
    }
}

// One diagonal tile of upper_of_skew (e <= 16 rows and columns): lanes i+1 .. e-1 of
// c (x[i] - xt[i]) for each row i < e - 1, compressed into u from u + p on (p advances).
inline void pack_diagonal_tile(int64_t e, const __m512* x, const __m512* xt, __m512 cv, float* u, int64_t& p) {
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i)
    if (i < e - 1) {
      const int64_t len = e - 1 - i;
      const __m512 v = _mm512_mul_ps(cv, _mm512_sub_ps(x[i], xt[i]));
      _mm512_mask_storeu_ps(u + p, simd::tail_mask(len), _mm512_maskz_compress_ps(above_diagonal(i, e), v));
      p += len;
    }
}

// d <= 16.
void upper_of_skew_16(int64_t d, const float* X, int64_t ldx, float c, float* u) {
  const __mmask16 row = simd::tail_mask(d);
  __m512 x[16], xt[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {
    x[i] = i < d ? _mm512_maskz_loadu_ps(row, X + i * ldx) : _mm512_setzero_ps();
    xt[i] = x[i];
  }
  simd::transpose16(xt);  // xt[i] lane j = X[j, i]
  int64_t p = 0;
  pack_diagonal_tile(d, x, xt, _mm512_set1_ps(c), u, p);
}

// 16 < d <= 32: rows in two registers, as skew_from_upper_32; X^T's tiles by three
// transposes (tile (0,1) of X^T is tile (1,0) of X transposed).
void upper_of_skew_32(int64_t d, const float* X, int64_t ldx, float c, float* u) {
  const int64_t d1 = d - 16;
  const __mmask16 tail = simd::tail_mask(d1);
  __m512 x0[16], x1[16], t00[16], t10[16], t11[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {
    x0[i] = _mm512_loadu_ps(X + i * ldx);
    x1[i] = _mm512_maskz_loadu_ps(tail, X + i * ldx + 16);
    t00[i] = x0[i];
    t10[i] = i < d1 ? _mm512_loadu_ps(X + (16 + i) * ldx) : _mm512_setzero_ps();
    t11[i] = i < d1 ? _mm512_maskz_loadu_ps(tail, X + (16 + i) * ldx + 16) : _mm512_setzero_ps();
  }
  simd::transpose16(t00);  // t00[i] lane j = X[j, i]
  simd::transpose16(t10);  // t10[i] lane l = X[16 + l, i]
  const __m512 cv = _mm512_set1_ps(c);
  int64_t p = 0;
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {
    const __m512 a = _mm512_mul_ps(cv, _mm512_sub_ps(x0[i], t00[i]));
    _mm512_mask_storeu_ps(u + p, simd::tail_mask(15 - i), _mm512_maskz_compress_ps(above_diagonal(i, 16), a));
    p += 15 - i;
    _mm512_mask_storeu_ps(u + p, tail, _mm512_mul_ps(cv, _mm512_sub_ps(x1[i], t10[i])));
    p += d1;
  }
  __m512 x11[16];
#pragma GCC unroll 16
  for (int q = 0; q < 16; ++q) x11[q] = t11[q];
  simd::transpose16(t11);  // t11[q] lane l = X[16 + l, 16 + q]
  pack_diagonal_tile(d1, x11, t11, cv, u, p);
}

}  // namespace

void skew_from_upper(int64_t d, const float* u, float c, float* out, int64_t ldo) {
  if (d <= 16) return skew_from_upper_16(d, u, c, out, ldo);
  if (d <= 32) return skew_from_upper_32(d, u, c, out, ldo);
  skew_from_upper_loops(d, u, c, out, ldo);
}

void upper_of_skew(int64_t d, const float* X, int64_t ldx, float c, float* u) {
  if (d <= 16) return upper_of_skew_16(d, X, ldx, c, u);
  if (d <= 32) return upper_of_skew_32(d, X, ldx, c, u);
  upper_of_skew_loops(d, X, ldx, c, u);
}
#pragma GCC diagnostic pop

#else

void skew_from_upper(int64_t d, const float* u, float c, float* out, int64_t ldo) {
  skew_from_upper_loops(d, u, c, out, ldo);
}
void upper_of_skew(int64_t d, const float* X, int64_t ldx, float c, float* u) { upper_of_skew_loops(d, X, ldx, c, u); }

#endif

// X^T through the tiled register transpose (core/small_gemm.hpp), then c (X - X^T) row
// by row: the loops' arithmetic per element, so bit-identical to them.
void skew_part(int64_t d, const float* X, int64_t ldx, float c, float* out, int64_t ldo) {
  constexpr int64_t kMax = 32;
  if (d > kMax) return skew_part_loops(d, X, ldx, c, out, ldo);
  alignas(64) float xt[kMax * kMax];
  transpose_small(d, d, X, ldx, xt, d);
  for (int64_t i = 0; i < d; ++i) {
    const float* x = X + i * ldx;
    const float* y = xt + i * d;
    float* o = out + i * ldo;
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) o[j] = c * (x[j] - y[j]);
  }
}

}  // namespace liegrad
