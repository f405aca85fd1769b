// The small single-precision product (see small_gemm.hpp).
//
// Micro-kernel (AVX-512): C rows i..i+RB-1, W vectors of 16 columns each (the last one
// masked when the panel width is not a multiple of 16), accumulated over k:
//   acc[r][w] += broadcast(op(A)[i+r, k]) * B[k, 16w .. 16w+15]
// RB x W accumulators stay in registers (RB*W <= 24 of the 32 zmm registers), so every
// loaded row of B feeds RB FMAs. Row blocks of RB = 24/W, then smaller blocks for the rest.
#include "core/small_gemm.hpp"

#include <algorithm>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace liegrad {

namespace {

#if defined(__AVX512F__)
// GCC 12's intrinsic headers trip -Wmaybe-uninitialized on their own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// out (c x r, ldo) = in^T for one tile with r, c <= 16: masked row loads, a 16 x 16
// register transpose (unpack ps, unpack pd, two 128-bit lane shuffles), masked stores.
inline void transpose_tile16(int64_t r, int64_t c, const float* in, int64_t ldi, float* out, int64_t ldo) {
  const __mmask16 cm = static_cast<__mmask16>(c >= 16 ? 0xFFFF : (1u << c) - 1);
  const __mmask16 rm = static_cast<__mmask16>(r >= 16 ? 0xFFFF : (1u << r) - 1);
  __m512 x[16], y[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) x[i] = i < r ? _mm512_maskz_loadu_ps(cm, in + i * ldi) : _mm512_setzero_ps();
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
    x[p] = _mm512_shuffle_f32x4(y[p], y[8 + p], 0x88);        // column p
    x[8 + p] = _mm512_shuffle_f32x4(y[p], y[8 + p], 0xDD);    // column 8 + p
    x[4 + p] = _mm512_shuffle_f32x4(y[4 + p], y[12 + p], 0x88);  // column 4 + p
    x[12 + p] = _mm512_shuffle_f32x4(y[4 + p], y[12 + p], 0xDD); // column 12 + p
  }
#pragma GCC unroll 16
  for (int j = 0; j < 16; ++j)
    if (j < c) _mm512_mask_storeu_ps(out + j * ldo, rm, x[j]);
}
#pragma GCC diagnostic pop
#endif

}  // namespace

void transpose_small(int64_t r, int64_t c, const float* in, int64_t ldi, float* out, int64_t ldo) {
#if defined(__AVX512F__)
  for (int64_t i0 = 0; i0 < r; i0 += 16)
    for (int64_t j0 = 0; j0 < c; j0 += 16)
      transpose_tile16(std::min<int64_t>(16, r - i0), std::min<int64_t>(16, c - j0), in + i0 * ldi + j0, ldi,
                       out + j0 * ldo + i0, ldo);
#else
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) out[j * ldo + i] = in[i * ldi + j];
#endif
}

namespace {

#if defined(__AVX512F__)

// One panel: C[0..M, 0..N) with N <= 16 * W, op(A)[i,k] = A[i * rsa + k * csa],
// B (K x N, ldb) dense rows.
template <int W, int RB>
inline void block(int64_t K, const float* A, int64_t rsa, int64_t csa, const float* B, int64_t ldb, float* C,
                  int64_t ldc, __mmask16 tail, float alpha, float beta) {
  __m512 acc[RB][W];
#pragma GCC unroll 32
  for (int r = 0; r < RB; ++r)
#pragma GCC unroll 4
    for (int w = 0; w < W; ++w) acc[r][w] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    __m512 b[W];
    const float* bk = B + k * ldb;
#pragma GCC unroll 4
    for (int w = 0; w < W; ++w) b[w] = w + 1 < W ? _mm512_loadu_ps(bk + 16 * w) : _mm512_maskz_loadu_ps(tail, bk + 16 * w);
    const float* ak = A + k * csa;
#pragma GCC unroll 32
    for (int r = 0; r < RB; ++r) {
      const __m512 a = _mm512_set1_ps(ak[r * rsa]);
#pragma GCC unroll 4
      for (int w = 0; w < W; ++w) acc[r][w] = _mm512_fmadd_ps(a, b[w], acc[r][w]);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 32
  for (int r = 0; r < RB; ++r)
#pragma GCC unroll 4
    for (int w = 0; w < W; ++w) {
      float* c = C + r * ldc + 16 * w;
      const __mmask16 m = w + 1 < W ? __mmask16(0xFFFF) : tail;
      __m512 v = alpha == 1.0f ? acc[r][w] : _mm512_mul_ps(va, acc[r][w]);
      if (beta != 0.0f) {
        const __m512 old = _mm512_maskz_loadu_ps(m, c);
        v = beta == 1.0f ? _mm512_add_ps(v, old) : _mm512_fmadd_ps(vb, old, v);
      }
      _mm512_mask_storeu_ps(c, m, v);
    }
}

template <int W, int RB = 1>
void block_n(int rows, int64_t K, const float* A, int64_t rsa, int64_t csa, const float* B, int64_t ldb, float* C,
             int64_t ldc, __mmask16 tail, float alpha, float beta) {
  constexpr int kMax = W == 1 ? 16 : (W == 2 ? 10 : (W == 3 ? 7 : 5));
  if constexpr (RB < kMax) {
    if (rows != RB) return block_n<W, RB + 1>(rows, K, A, rsa, csa, B, ldb, C, ldc, tail, alpha, beta);
  }
  block<W, RB>(K, A, rsa, csa, B, ldb, C, ldc, tail, alpha, beta);
}

// Rows split into near-equal blocks of at most kMax (e.g. 23 rows of W = 2 as 8 + 8 + 7).
template <int W>
void panel(int64_t M, int64_t K, const float* A, int64_t rsa, int64_t csa, const float* B, int64_t ldb, float* C,
           int64_t ldc, __mmask16 tail, float alpha, float beta) {
  constexpr int64_t kMax = W == 1 ? 16 : (W == 2 ? 10 : (W == 3 ? 7 : 5));
  const int64_t blocks = (M + kMax - 1) / kMax;
  int64_t i = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    const int rows = static_cast<int>((M - i) / (blocks - b));
    block_n<W>(rows, K, A + i * rsa, rsa, csa, B, ldb, C + i * ldc, ldc, tail, alpha, beta);
    i += rows;
  }
}

// C = alpha op(A) B + beta C with B (K x N) dense rows, any N (panels of 64 columns).
void gemm_rows(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t rsa, int64_t csa,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  for (int64_t j0 = 0; j0 < N; j0 += 64) {
    const int64_t nj = std::min<int64_t>(64, N - j0);
    const int W = static_cast<int>((nj + 15) / 16);
    const int rem = static_cast<int>(nj - 16 * (W - 1));
    const __mmask16 tail = static_cast<__mmask16>(rem == 16 ? 0xFFFF : (1u << rem) - 1);
    const float* Bp = B + j0;
    float* Cp = C + j0;
    switch (W) {
      case 1: panel<1>(M, K, A, rsa, csa, Bp, ldb, Cp, ldc, tail, alpha, beta); break;
      case 2: panel<2>(M, K, A, rsa, csa, Bp, ldb, Cp, ldc, tail, alpha, beta); break;
      case 3: panel<3>(M, K, A, rsa, csa, Bp, ldb, Cp, ldc, tail, alpha, beta); break;
      default: panel<4>(M, K, A, rsa, csa, Bp, ldb, Cp, ldc, tail, alpha, beta); break;
    }
  }
}

#else

void gemm_rows(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t rsa, int64_t csa,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  float row[64];
  for (int64_t j0 = 0; j0 < N; j0 += 64) {
    const int64_t nj = std::min<int64_t>(64, N - j0);
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < nj; ++j) row[j] = 0.0f;
      for (int64_t k = 0; k < K; ++k) {
        const float a = A[i * rsa + k * csa];
        const float* b = B + k * ldb + j0;
        for (int64_t j = 0; j < nj; ++j) row[j] += a * b[j];
      }
      float* c = C + i * ldc + j0;
      for (int64_t j = 0; j < nj; ++j) c[j] = alpha * row[j] + (beta == 0.0f ? 0.0f : beta * c[j]);
    }
  }
}

#endif

}  // namespace

void sgemm_small(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.0f) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  const int64_t rsa = ta ? 1 : lda, csa = ta ? lda : 1;
  if (!tb) {
    // Long inner sizes in slices of kKSlice, so a 64-column panel of B (kKSlice x 64)
    // stays in L2 while the rows of C stream past it.
    constexpr int64_t kKSlice = 1024;
    for (int64_t k0 = 0; k0 < K; k0 += kKSlice)
      gemm_rows(M, N, std::min(kKSlice, K - k0), alpha, A + k0 * csa, rsa, csa, B + k0 * ldb, ldb,
                k0 == 0 ? beta : 1.0f, C, ldc);
    return;
  }
  // op(B) = B^T with B (N x K): transpose panels of up to 64 x 64 onto the stack.
  alignas(64) float bt[64 * 64];
  for (int64_t j0 = 0; j0 < N; j0 += 64) {
    const int64_t nj = std::min<int64_t>(64, N - j0);
    float beta_k = beta;
    for (int64_t k0 = 0; k0 < K; k0 += 64) {
      const int64_t nk = std::min<int64_t>(64, K - k0);
      transpose_small(nj, nk, B + j0 * ldb + k0, ldb, bt, nj);  // bt (nk x nj)
      gemm_rows(M, nj, nk, alpha, A + k0 * csa, rsa, csa, bt, nj, beta_k, C + j0, ldc);
      beta_k = 1.0f;
    }
  }
}

template <>
void small_gemm_ld<float>(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                          const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  sgemm_small(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <>
void small_gemm_ld<double>(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
                           int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += (ta ? A[k * lda + i] : A[i * lda + k]) * (tb ? B[j * ldb + k] : B[k * ldb + j]);
      C[i * ldc + j] = alpha * s + (beta == 0.0 ? 0.0 : beta * C[i * ldc + j]);
    }
}

}  // namespace liegrad
