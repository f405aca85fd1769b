// The small single-precision product (see small_gemm.hpp).
//
// Micro-kernel (core/simd.hpp: AVX-512 or AVX2+FMA, L = 16 or 8 lanes): C rows
// i..i+RB-1, W vectors of L columns each (the last one masked when the panel width is
// not a multiple of L), accumulated over k:
//   acc[r][w] += broadcast(op(A)[i+r, k]) * B[k, Lw .. Lw+L-1]
// RB x W accumulators stay in registers (max_rows(W) below: about 3/4 of the register
// file), so every loaded row of B feeds RB FMAs. Rows go in near-equal blocks.
#include "core/small_gemm.hpp"

#include <algorithm>

#include "core/simd.hpp"

namespace liegrad {

namespace {

#if defined(__AVX512F__)
// GCC 12's intrinsic headers trip -Wmaybe-uninitialized on their own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// out (c x r, ldo) = in^T for one tile with r, c <= 16: masked row loads, the
// register transpose simd::transpose16, masked stores.
inline void transpose_tile16(int64_t r, int64_t c, const float* in, int64_t ldi, float* out, int64_t ldo) {
  const __mmask16 cm = static_cast<__mmask16>(c >= 16 ? 0xFFFF : (1u << c) - 1);
  const __mmask16 rm = static_cast<__mmask16>(r >= 16 ? 0xFFFF : (1u << r) - 1);
  __m512 x[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) x[i] = i < r ? _mm512_maskz_loadu_ps(cm, in + i * ldi) : _mm512_setzero_ps();
  simd::transpose16(x);
#pragma GCC unroll 16
  for (int j = 0; j < 16; ++j)
    if (j < c) _mm512_mask_storeu_ps(out + j * ldo, rm, x[j]);
}
#pragma GCC diagnostic pop
#elif LIEGRAD_SIMD == 256
// out (c x r, ldo) = in^T for one tile with r, c <= 8: masked row loads, the classic
// 8 x 8 register transpose (unpack, shuffle, 128-bit lane permute), masked stores.
inline void transpose_tile8(int64_t r, int64_t c, const float* in, int64_t ldi, float* out, int64_t ldo) {
  const simd::Mask cm = simd::tail_mask(c), rm = simd::tail_mask(r);
  const bool full = r == 8 && c == 8;  // plain loads and stores (masked stores are slow on Zen)
  __m256 x[8], t[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) x[i] = full ? simd::load(in + i * ldi) : i < r ? simd::load(cm, in + i * ldi) : _mm256_setzero_ps();
#pragma GCC unroll 8
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(x[i], x[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(x[i], x[i + 1]);
  }
#pragma GCC unroll 2
  for (int i = 0; i < 8; i += 4) {
    x[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    x[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    x[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    x[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  // x[4h + p] holds, in each 128-bit lane, column p (lane 0) / 4 + p (lane 1) of rows 4h..4h+3.
#pragma GCC unroll 8
  for (int p = 0; p < 4; ++p) {
    t[p] = _mm256_permute2f128_ps(x[p], x[4 + p], 0x20);
    t[4 + p] = _mm256_permute2f128_ps(x[p], x[4 + p], 0x31);
  }
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    if (full)
      simd::store(out + j * ldo, t[j]);
    else if (j < c)
      simd::store(out + j * ldo, rm, t[j]);
  }
}
#endif

}  // namespace

void transpose_small(int64_t r, int64_t c, const float* in, int64_t ldi, float* out, int64_t ldo) {
#if defined(__AVX512F__)
  for (int64_t i0 = 0; i0 < r; i0 += 16)
    for (int64_t j0 = 0; j0 < c; j0 += 16)
      transpose_tile16(std::min<int64_t>(16, r - i0), std::min<int64_t>(16, c - j0), in + i0 * ldi + j0, ldi,
                       out + j0 * ldo + i0, ldo);
#elif LIEGRAD_SIMD == 256
  for (int64_t i0 = 0; i0 < r; i0 += 8)
    for (int64_t j0 = 0; j0 < c; j0 += 8)
      transpose_tile8(std::min<int64_t>(8, r - i0), std::min<int64_t>(8, c - j0), in + i0 * ldi + j0, ldi,
                      out + j0 * ldo + i0, ldo);
#else
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) out[j * ldo + i] = in[i * ldi + j];
#endif
}

namespace {

#if LIEGRAD_SIMD

using simd::V;
constexpr int L = simd::kLanes;
// Columns of C per panel: up to four vectors per row with AVX-512, two with AVX2. With
// 16 ymm registers a 4-vector panel cannot hold enough rows of accumulators, and its
// K x 32 slice of B (32 KiB at K = 256) no longer sits in L1: 16-column panels run
// 16 x 128 x 256 products at ~90 GFLOP/s per core against ~44 (Zen 3).
constexpr int64_t kPanel = (simd::kRegisters == 32 ? 4 : 2) * L;
// Rows of C per register block for W vectors per row: RB * W accumulators, W rows of
// B and one broadcast stay within the register file. Four-vector panels take up to six
// rows, not five: for blocks of four rows or fewer GCC folds the loads of B into the
// FMAs (a memory operand per FMA: 16 loads and 4 broadcasts per k in block<4, 4>, by
// `objdump`; five and six rows keep B's four vectors in registers), and a limit of five
// split C's 16-row blocks into four blocks of four, which ran at half speed. Six splits
// them 5 + 5 + 6 (24 + 4 + 1 = 29 of 32 registers). 16 x 64 x 225 products went from ~95 to ~230
// GFLOP/s on one Zen 5 core, a third of the paper-sized OSMFormer's step
// (docs/performance-log.md, 2026-12-04).
constexpr int max_rows(int W) {
  return simd::kRegisters == 32 ? (W == 1 ? 16 : (W == 2 ? 10 : (W == 3 ? 7 : 6)))
                                : (W == 1 ? 12 : (W == 2 ? 6 : (W == 3 ? 4 : 3)));
}

// One register block: C[0..RB, 0..N) with N <= L * W, op(A)[i,k] = A[i * rsa + k * csa],
// B (K x N, ldb) dense rows; with Masked, the last vector of each row is masked by
// `tail`. Unmasked panels (N a multiple of L, e.g. every n = 16 product) keep plain
// loads and stores: AVX2's masked store is microcoded and slow on AMD Zen.
// UnitRows: rsa is 1 (op(A)'s rows are adjacent in memory), so every broadcast of a
// step k sits at a fixed offset from A + k * csa. With rsa known only at run time the
// compiler keeps one offset per row, and past about six rows it runs out of general
// registers: `perf annotate` of the transformer's attention (16-row blocks, one vector
// wide) showed a vmovq from an xmm spill slot before every FMA (see panel()). Either
// form sums over k in the same order: the results are bit-identical.
template <int W, int RB, bool Masked, bool UnitRows>
inline void block(int64_t K, const float* A, int64_t rsa_runtime, int64_t csa, const float* B, int64_t ldb, float* C,
                  int64_t ldc, simd::Mask tail, float alpha, float beta) {
  const int64_t rsa = UnitRows ? 1 : rsa_runtime;
  V acc[RB][W];
#pragma GCC unroll 32
  for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) acc[r][w] = simd::zero();
  for (int64_t k = 0; k < K; ++k) {
    V b[W];
    const float* bk = B + k * ldb;
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) b[w] = (!Masked || w + 1 < W) ? simd::load(bk + L * w) : simd::load(tail, bk + L * w);
    const float* ak = A + k * csa;
#pragma GCC unroll 32
    for (int r = 0; r < RB; ++r) {
      const V a = simd::set1(ak[r * rsa]);
#pragma GCC unroll 8
      for (int w = 0; w < W; ++w) acc[r][w] = simd::fmadd(a, b[w], acc[r][w]);
    }
  }
  const V va = simd::set1(alpha), vb = simd::set1(beta);
#pragma GCC unroll 32
  for (int r = 0; r < RB; ++r)
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) {
      float* c = C + r * ldc + L * w;
      const bool masked = Masked && w + 1 == W;
      V v = alpha == 1.0f ? acc[r][w] : simd::mul(va, acc[r][w]);
      if (beta != 0.0f) {
        const V old = masked ? simd::load(tail, c) : simd::load(c);
        v = beta == 1.0f ? simd::add(v, old) : simd::fmadd(vb, old, v);
      }
      if (masked)
        simd::store(c, tail, v);
      else
        simd::store(c, v);
    }
}

template <int W, bool Masked, bool UnitRows, int RB = 1>
void block_n(int rows, int64_t K, const float* A, int64_t rsa, int64_t csa, const float* B, int64_t ldb, float* C,
             int64_t ldc, simd::Mask tail, float alpha, float beta) {
  if constexpr (RB < max_rows(W)) {
    if (rows != RB)
      return block_n<W, Masked, UnitRows, RB + 1>(rows, K, A, rsa, csa, B, ldb, C, ldc, tail, alpha, beta);
  }
  block<W, RB, Masked, UnitRows>(K, A, rsa, csa, B, ldb, C, ldc, tail, alpha, beta);
}

// Rows split into near-equal blocks of at most max_rows(W) (e.g. 23 rows of W = 2 as 8 + 8 + 7).
// With op(A) = A^T stored (rsa = 1) the blocks take the UnitRows form: the 16 x 16 x 72
// products of the transformer's attention backward (dv = P^T dO) went from about 140 to
// 177 GFLOP/s on one Zen 5 core. Copying A's rows transposed to the stack first, to give
// op(A) = A the same form, was tried and dropped: the copy cost what it saved for
// one-vector panels and slowed two-vector ones (the OSM-RNN's 23 x 23 products) by about
// 10% (docs/performance-log.md, 2026-12-04, later sitting).
template <int W, bool Masked>
void panel(int64_t M, int64_t K, const float* A, int64_t rsa, int64_t csa, const float* B, int64_t ldb, float* C,
           int64_t ldc, simd::Mask tail, float alpha, float beta) {
  constexpr int64_t kMax = max_rows(W);
  const int64_t blocks = (M + kMax - 1) / kMax;
  int64_t i = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    const int rows = static_cast<int>((M - i) / (blocks - b));
    if (rsa == 1)
      block_n<W, Masked, true>(rows, K, A + i, 1, csa, B, ldb, C + i * ldc, ldc, tail, alpha, beta);
    else
      block_n<W, Masked, false>(rows, K, A + i * rsa, rsa, csa, B, ldb, C + i * ldc, ldc, tail, alpha, beta);
    i += rows;
  }
}

template <int W>
void panel_any(int64_t M, int64_t K, const float* A, int64_t rsa, int64_t csa, const float* B, int64_t ldb, float* C,
               int64_t ldc, int64_t width, float alpha, float beta) {
  if (width == L * W)
    panel<W, false>(M, K, A, rsa, csa, B, ldb, C, ldc, simd::tail_mask(L), alpha, beta);
  else
    panel<W, true>(M, K, A, rsa, csa, B, ldb, C, ldc, simd::tail_mask(width - L * (W - 1)), alpha, beta);
}

// A single row of C (M = 1: a model's step for one symbol when decoding at batch 1) in
// panels of up to kRowPanel columns. A four-vector panel gives the row four
// accumulators, and each step k's FMAs wait for the previous step's (four cycles), so
// the row ran at about one FMA per cycle; eight vectors (with 32 registers) keep both
// FMA ports busy. Each element still sums over k in the same order, so the bits are
// those of the four-vector panels.
constexpr int64_t kRowPanel = (simd::kRegisters == 32 ? 8 : 4) * L;
template <int W>
void row_panel(int64_t K, float alpha, const float* A, int64_t csa, const float* B, int64_t ldb, float beta, float* C,
               int64_t width) {
  if (width == L * W)
    block<W, 1, false, true>(K, A, 1, csa, B, ldb, C, 0, simd::tail_mask(L), alpha, beta);
  else
    block<W, 1, true, true>(K, A, 1, csa, B, ldb, C, 0, simd::tail_mask(width - L * (W - 1)), alpha, beta);
}
void gemm_row(int64_t N, int64_t K, float alpha, const float* A, int64_t csa, const float* B, int64_t ldb,
              float beta, float* C) {
  for (int64_t j0 = 0; j0 < N; j0 += kRowPanel) {
    const int64_t nj = std::min<int64_t>(kRowPanel, N - j0);
    const float* Bp = B + j0;
    float* Cp = C + j0;
    switch ((nj + L - 1) / L) {
      case 1: row_panel<1>(K, alpha, A, csa, Bp, ldb, beta, Cp, nj); break;
      case 2: row_panel<2>(K, alpha, A, csa, Bp, ldb, beta, Cp, nj); break;
      case 3: row_panel<3>(K, alpha, A, csa, Bp, ldb, beta, Cp, nj); break;
      case 4: row_panel<4>(K, alpha, A, csa, Bp, ldb, beta, Cp, nj); break;
      case 5: row_panel<5>(K, alpha, A, csa, Bp, ldb, beta, Cp, nj); break;
      case 6: row_panel<6>(K, alpha, A, csa, Bp, ldb, beta, Cp, nj); break;
      case 7: row_panel<7>(K, alpha, A, csa, Bp, ldb, beta, Cp, nj); break;
      default: row_panel<8>(K, alpha, A, csa, Bp, ldb, beta, Cp, nj); break;
    }
  }
}

// C = alpha op(A) B + beta C with B (K x N) dense rows, any N (panels of kPanel columns).
void gemm_rows(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t rsa, int64_t csa,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M == 1) return gemm_row(N, K, alpha, A, csa, B, ldb, beta, C);
  for (int64_t j0 = 0; j0 < N; j0 += kPanel) {
    const int64_t nj = std::min<int64_t>(kPanel, N - j0);
    const int W = static_cast<int>((nj + L - 1) / L);
    const float* Bp = B + j0;
    float* Cp = C + j0;
    switch (W) {
      case 1: panel_any<1>(M, K, A, rsa, csa, Bp, ldb, Cp, ldc, nj, alpha, beta); break;
      case 2: panel_any<2>(M, K, A, rsa, csa, Bp, ldb, Cp, ldc, nj, alpha, beta); break;
      case 3: panel_any<3>(M, K, A, rsa, csa, Bp, ldb, Cp, ldc, nj, alpha, beta); break;
      default: panel_any<4>(M, K, A, rsa, csa, Bp, ldb, Cp, ldc, nj, alpha, beta); break;
    }
  }
}

#if defined(__AVX512F__)
// C (n x n, ldc) = alpha op(A) op(B) + beta C for dense n x n operands (lda = ldb = n),
// 8 <= n <= 16: the products of the OSM models (d = 16 in most configs, 15 in the
// paper-sized OSMFormer, 12 and 14 in the state-tracking ones). One row of C per
// register (masked to n lanes below 16), every broadcast at a fixed offset from A. The
// general block above takes the row stride of op(A) at run time, and with 12-16 rows the
// compiler runs out of registers for the offsets and spills them: `perf annotate` of a
// trained OSMFormer showed the spill moves between the FMAs. This kernel took a
// 16 x 16 x 16 product from about 100 to about 60 ns on one core, and a 15 x 15 x 15 one
// from 77 to 56 ns (12: 49 to 32; Zen 4, docs/performance-log.md). Each element sums over
// k in the same order as the general kernel, so results are bit-identical.
//
// TB (op(B) = B^T): the n rows of B are loaded (the rest zero) and transposed in
// registers (simd::transpose16), so the rows of B^T and the accumulators fill the 32
// registers and each broadcast of A comes from memory; the same sums, in the same order,
// as transposing B to memory first.
template <int N, bool TA, bool TB>
void product_n(const float* A, const float* B, float* C, int64_t ldc, float alpha, float beta) {
  static_assert(N >= 1 && N <= 16);
  const simd::Mask m = simd::tail_mask(N);
  auto load_row = [&](const float* p) { return N == 16 ? simd::load(p) : simd::load(m, p); };
  V acc[N];
#pragma GCC unroll 16
  for (int r = 0; r < N; ++r) acc[r] = simd::zero();
  if constexpr (TB) {
    V bt[16];
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) bt[k] = k < N ? load_row(B + N * k) : simd::zero();
    simd::transpose16(bt);  // bt[k] = row k of B^T, zero past lane n
#pragma GCC unroll 16
    for (int k = 0; k < N; ++k)
#pragma GCC unroll 16
      for (int r = 0; r < N; ++r) acc[r] = simd::fmadd(simd::set1(TA ? A[N * k + r] : A[N * r + k]), bt[k], acc[r]);
  } else {
#pragma GCC unroll 16
    for (int k = 0; k < N; ++k) {
      const V b = load_row(B + N * k);
#pragma GCC unroll 16
      for (int r = 0; r < N; ++r) acc[r] = simd::fmadd(simd::set1(TA ? A[N * k + r] : A[N * r + k]), b, acc[r]);
    }
  }
  const V va = simd::set1(alpha), vb = simd::set1(beta);
#pragma GCC unroll 16
  for (int r = 0; r < N; ++r) {
    float* c = C + r * ldc;
    V v = alpha == 1.0f ? acc[r] : simd::mul(va, acc[r]);
    if (beta != 0.0f) v = beta == 1.0f ? simd::add(v, load_row(c)) : simd::fmadd(vb, load_row(c), v);
    if constexpr (N == 16)
      simd::store(c, v);
    else
      simd::store(c, m, v);
  }
}

// Rows R0 .. R0 + RB - 1 of C (n x n, ldc) = alpha op(A) B + beta C for dense N x N
// operands with 16 < N <= 24. Columns 0..15 of a row take one vector; the last N - 16
// columns (at most 8) of two rows share one vector, row r in lanes 0..7 and row r + 1 in
// lanes 8..15, against B's tail loaded once per k and copied to both halves. The pair's
// factor is the two rows' broadcasts blended, so a row pair costs three FMAs and a blend
// per k instead of four FMAs; the blend does not take an FMA pipe. A 23³ product from
// cache on one Zen 5 core: 165 -> 136 ns; accumulating into C (beta = 1), 262 -> 150 ns
// (docs/performance-log.md, 2026-12-06, "paired row tails"). Every broadcast of op(A) sits at a
// fixed offset from a pointer that moves with k. Each element sums over k in ascending
// order from zero, as the general kernel does.
// GCC 12's _mm512_shuffle_f32x4 trips -Wuninitialized on its own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
template <int N, int R0, int RB, bool TA>
inline void rows_paired(const float* A, const float* B, float* C, int64_t ldc, float alpha, float beta) {
  static_assert(N > 16 && N <= 24 && RB >= 1 && RB <= 12);
  constexpr int P = (RB + 1) / 2;  // row pairs; an odd block's last pair has one row
  constexpr __mmask16 kLow = static_cast<__mmask16>((1u << (N - 16)) - 1), kHigh = kLow << 8;
  V acc[RB], tails[P];
#pragma GCC unroll 12
  for (int r = 0; r < RB; ++r) acc[r] = simd::zero();
#pragma GCC unroll 6
  for (int p = 0; p < P; ++p) tails[p] = simd::zero();
  for (int k = 0; k < N; ++k) {
    const V b = simd::load(B + N * k), t = _mm512_maskz_loadu_ps(kLow, B + N * k + 16);
    const V bt = _mm512_shuffle_f32x4(t, t, 0x44);  // B[k, 16..N) in lanes 0.. and 8..
    const float* ak = TA ? A + N * k + R0 : A + N * R0 + k;
    V a[RB];
#pragma GCC unroll 12
    for (int r = 0; r < RB; ++r) {
      a[r] = simd::set1(TA ? ak[r] : ak[N * r]);
      acc[r] = simd::fmadd(a[r], b, acc[r]);
    }
#pragma GCC unroll 6
    for (int p = 0; p < P; ++p) {
      const V pair = 2 * p + 1 < RB ? _mm512_mask_mov_ps(a[2 * p], 0xFF00, a[2 * p + 1]) : a[2 * p];
      tails[p] = simd::fmadd(pair, bt, tails[p]);
    }
  }
  const V va = simd::set1(alpha), vb = simd::set1(beta);
  auto finish = [&](V v, V old) {  // alpha v + beta old
    if (alpha != 1.0f) v = simd::mul(va, v);
    if (beta != 0.0f) v = beta == 1.0f ? simd::add(v, old) : simd::fmadd(vb, old, v);
    return v;
  };
#pragma GCC unroll 12
  for (int r = 0; r < RB; ++r) {
    float* c = C + (R0 + r) * ldc;
    simd::store(c, finish(acc[r], beta != 0.0f ? simd::load(c) : simd::zero()));
  }
#pragma GCC unroll 6
  for (int p = 0; p < P; ++p) {
    // Row 2p's tail from lanes 0..7, row 2p + 1's from lanes 8..15 (addressed 8 floats
    // back, so lane 8 meets column 16); masked lanes are never read or written.
    float* c0 = C + (R0 + 2 * p) * ldc + 16;
    float* c1 = C + (R0 + 2 * p + 1) * ldc + 8;
    const bool two = 2 * p + 1 < RB;
    V old = simd::zero();
    if (beta != 0.0f) {
      old = _mm512_maskz_loadu_ps(kLow, c0);
      if (two) old = _mm512_mask_loadu_ps(old, kHigh, c1);
    }
    const V v = finish(tails[p], old);
    _mm512_mask_storeu_ps(c0, kLow, v);
    if (two) _mm512_mask_storeu_ps(c1, kHigh, v);
  }
}
#pragma GCC diagnostic pop

// Rows in two near-equal blocks (23 as 11 + 12: at most 12 rows and 6 row pairs, 18
// accumulators). Not inlined into the transposing form below, so each size compiles its
// blocks twice (op(A) = A or A^T), not four times.
template <int N, bool TA>
[[gnu::noinline]] void blocks_paired(const float* A, const float* B, float* C, int64_t ldc, float alpha, float beta) {
  static_assert(N > 16 && N <= 24);
  rows_paired<N, 0, N / 2, TA>(A, B, C, ldc, alpha, beta);
  rows_paired<N, N / 2, N - N / 2, TA>(A, B, C, ldc, alpha, beta);
}

// product_n for 16 < N <= 24 (the OSM-RNN's SO(23) configs; larger sizes take the
// general kernel's blocks of ten rows). TB: B^T is first written to the stack
// (transpose_small), as the general kernel does, so the sums are the same. 23 x 23 x 23
// products from cache, one core (Zen 5), against the general kernel: 213 -> 169 ns
// (op(B) = B), 275 -> 208 ns (op(B) = B^T); with paired tails (rows_paired) 165 -> 136
// and 191 -> 167 ns.
template <int N, bool TA, bool TB>
void product_n2(const float* A, const float* B, float* C, int64_t ldc, float alpha, float beta) {
  if constexpr (TB) {
    alignas(64) float bt[N * N];
    transpose_small(N, N, B, N, bt, N);
    blocks_paired<N, TA>(A, bt, C, ldc, alpha, beta);
  } else {
    blocks_paired<N, TA>(A, B, C, ldc, alpha, beta);
  }
}

constexpr int64_t kDenseMin = 8, kDenseMax = 24;  // the sizes product_n (to 16) and product_n2 serve

template <int N>
DenseProductFn dense_product(bool ta, bool tb) {
  if (ta) return tb ? product_n<N, true, true> : product_n<N, true, false>;
  return tb ? product_n<N, false, true> : product_n<N, false, false>;
}

template <int N>
DenseProductFn dense_product2(bool ta, bool tb) {
  if (ta) return tb ? product_n2<N, true, true> : product_n2<N, true, false>;
  return tb ? product_n2<N, false, true> : product_n2<N, false, false>;
}

// product_n or product_n2 for n in [kDenseMin, kDenseMax].
DenseProductFn dense_product(int64_t n, bool ta, bool tb) {
  switch (n) {
    case 8: return dense_product<8>(ta, tb);
    case 9: return dense_product<9>(ta, tb);
    case 10: return dense_product<10>(ta, tb);
    case 11: return dense_product<11>(ta, tb);
    case 12: return dense_product<12>(ta, tb);
    case 13: return dense_product<13>(ta, tb);
    case 14: return dense_product<14>(ta, tb);
    case 15: return dense_product<15>(ta, tb);
    case 16: return dense_product<16>(ta, tb);
    case 17: return dense_product2<17>(ta, tb);
    case 18: return dense_product2<18>(ta, tb);
    case 19: return dense_product2<19>(ta, tb);
    case 20: return dense_product2<20>(ta, tb);
    case 21: return dense_product2<21>(ta, tb);
    case 22: return dense_product2<22>(ta, tb);
    case 23: return dense_product2<23>(ta, tb);
    default: return dense_product2<24>(ta, tb);
  }
}
#endif

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
#pragma omp simd
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
  if (M == N && N == K && lda == N && ldb == N)
    if (const DenseProductFn dense = dense_product_for(N, ta, tb)) return dense(A, B, C, ldc, alpha, beta);
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

DenseProductFn dense_product_for(int64_t n, bool ta, bool tb) {
#if defined(__AVX512F__)
  if (n >= kDenseMin && n <= kDenseMax) return dense_product(n, ta, tb);
#endif
  (void)n, (void)ta, (void)tb;
  return nullptr;
}

template <>
void transpose_ld<float>(int64_t r, int64_t c, const float* in, int64_t ldi, float* out, int64_t ldo) {
  transpose_small(r, c, in, ldi, out, ldo);
}

template <>
void transpose_ld<double>(int64_t r, int64_t c, const double* in, int64_t ldi, double* out, int64_t ldo) {
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) out[j * ldo + i] = in[i * ldi + j];
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
