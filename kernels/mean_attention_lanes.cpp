// Head-averaged attention's softmaxes with queries in lanes (see mean_attention_lanes.hpp).
//
// Scratch: X^T (D x T), one block of rows (16 x T), two lane blocks (16 floats per key).
// The last block's unused lanes (queries past T) are zero rows of S and dAbar: finite,
// and never transposed back into a row.
#include "kernels/mean_attention_lanes.hpp"

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "core/simd.hpp"
#include "core/small_gemm.hpp"
#include "core/vmath.hpp"
#include "kernels/lane_blocks.hpp"

namespace liegrad::kernels::mean_lanes {

using lane_blocks::block_offset;
using lane_blocks::blocks;

int64_t lane_floats(int64_t T) { return block_offset(blocks(T)); }

int64_t scratch_floats(int64_t T, int64_t D) { return D * T + 16 * T + 2 * 256 * blocks(T); }

#if defined(__AVX512F__)

// GCC 12's intrinsic headers trip -Wmaybe-uninitialized on their own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace {

using lane_blocks::causal_lanes;
using simd::V;

struct Scratch {
  float *Xt, *rows, *lanes_a, *lanes_b;
  Scratch(float* p, int64_t T, int64_t D)
      : Xt(p), rows(p + D * T), lanes_a(rows + 16 * T), lanes_b(lanes_a + 256 * blocks(T)) {}
};

// out (jn x 16) = the block's rows (n x jn at rows, row stride jn) transposed, lanes
// n .. 15 zero.
void rows_to_lanes(int64_t n, int64_t jn, float* rows, float* out) {
  std::fill(rows + n * jn, rows + 16 * jn, 0.0f);
  transpose_small(16, jn, rows, jn, out, 16);
}

}  // namespace

bool available() { return true; }

void forward_row(const Row& r, float* St, float* P, float* Abar, float* out, float* scratch) {
  const int64_t T = r.T, D = r.D, lane = lane_floats(T);
  const Scratch sc(scratch, T, D);
  const V inv_h = simd::set1(1.0f / static_cast<float>(r.h)), iota = simd::iota();
  transpose_small(T, D, r.X, D, sc.Xt, T);
  float* abar = sc.lanes_a;  // Abar^T of the block
  for (int64_t b = 0; b < blocks(T); ++b) {
    const int64_t i0 = 16 * b, n = std::min<int64_t>(16, T - i0), jn = i0 + n;
    float* st = St + block_offset(b);
    // S's rows i0 .. i0 + n - 1 (s X X^T, keys < jn), into lanes.
    small_gemm_ld<float>(false, false, n, jn, D, r.s, r.X + i0 * D, D, sc.Xt, T, 0.0f, sc.rows, jn);
    rows_to_lanes(n, jn, sc.rows, st);
    const V query = simd::add(simd::set1(static_cast<float>(i0)), iota);
    for (int64_t k = 0; k < r.h; ++k) {
      float* p = P + k * lane + block_offset(b);
      const V beta = simd::set1(r.beta[k]), slope = simd::set1(r.slopes ? r.slopes[k] : 0.0f);
      V m = simd::set1(-INFINITY);
      for (int64_t j = 0; j < jn; ++j) {  // logits beta s - slope (i - j), -inf above the diagonal
        const V z = simd::fnmadd(slope, simd::sub(query, simd::set1(static_cast<float>(j))),
                                 simd::mul(beta, simd::load(st + 16 * j)));
        const V zm = _mm512_mask_mov_ps(simd::set1(-INFINITY), causal_lanes(j, i0), z);
        simd::store(p + 16 * j, zm);
        m = simd::max(m, zm);
      }
      V l = simd::zero();
      for (int64_t j = 0; j < jn; ++j) {
        const V e = _mm512_maskz_mov_ps(causal_lanes(j, i0), vm::exp_v(simd::sub(simd::load(p + 16 * j), m)));
        simd::store(p + 16 * j, e);
        l = simd::add(l, e);
      }
      const V inv = simd::div(simd::set1(1.0f), l);
      for (int64_t j = 0; j < jn; ++j) {
        const V pj = simd::mul(simd::load(p + 16 * j), inv);
        simd::store(p + 16 * j, pj);
        simd::store(abar + 16 * j, k == 0 ? simd::mul(inv_h, pj) : simd::fmadd(inv_h, pj, simd::load(abar + 16 * j)));
      }
    }
    // Abar's rows of the block (keys < jn), then out's: Abar X.
    transpose_small(jn, n, abar, 16, Abar + i0 * T, T);
    small_gemm_ld<float>(false, false, n, D, jn, 1.0f, Abar + i0 * T, T, r.X, D, 0.0f, out + i0 * D, D);
  }
}

void backward_row(const Row& r, const float* St, const float* P, const float* G, float* dS, double* dot_s,
                  float* scratch) {
  const int64_t T = r.T, D = r.D, lane = lane_floats(T);
  const Scratch sc(scratch, T, D);
  const V inv_h = simd::set1(1.0f / static_cast<float>(r.h));
  transpose_small(T, D, r.X, D, sc.Xt, T);
  float *da = sc.lanes_a, *ds = sc.lanes_b;  // dAbar^T and dS^T of the block
  for (int64_t b = 0; b < blocks(T); ++b) {
    const int64_t i0 = 16 * b, n = std::min<int64_t>(16, T - i0), jn = i0 + n;
    const float* st = St + block_offset(b);
    // dAbar's rows i0 .. i0 + n - 1 (G X^T, keys < jn), into lanes.
    small_gemm_ld<float>(false, false, n, jn, D, 1.0f, G + i0 * D, D, sc.Xt, T, 0.0f, sc.rows, jn);
    rows_to_lanes(n, jn, sc.rows, da);
    for (int64_t k = 0; k < r.h; ++k) {
      const float* p = P + k * lane + block_offset(b);
      const V beta = simd::set1(r.beta[k]);
      V dot = simd::zero();
      for (int64_t j = 0; j < jn; ++j) dot = simd::fmadd(simd::load(p + 16 * j), simd::load(da + 16 * j), dot);
      dot = simd::mul(dot, inv_h);
      V with_s = simd::zero();
      for (int64_t j = 0; j < jn; ++j) {
        const V dsk = simd::mul(simd::load(p + 16 * j), simd::sub(simd::mul(simd::load(da + 16 * j), inv_h), dot));
        with_s = simd::fmadd(dsk, simd::load(st + 16 * j), with_s);
        simd::store(ds + 16 * j, k == 0 ? simd::mul(beta, dsk) : simd::fmadd(beta, dsk, simd::load(ds + 16 * j)));
      }
      dot_s[k] += static_cast<double>(simd::reduce_add(with_s));
    }
    transpose_small(jn, n, ds, 16, dS + i0 * T, T);
  }
}

#pragma GCC diagnostic pop

#else

// Without AVX-512 the general path runs (mean_attention.cpp asks available() first).
bool available() { return false; }
void forward_row(const Row&, float*, float*, float*, float*, float*) {
  throw ValueError("kernels::mean_lanes::forward_row: this build has no AVX-512 (ask mean_lanes::available first)");
}
void backward_row(const Row&, const float*, const float*, const float*, float*, double*, float*) {
  throw ValueError("kernels::mean_lanes::backward_row: this build has no AVX-512 (ask mean_lanes::available first)");
}

#endif

}  // namespace liegrad::kernels::mean_lanes
