// Causal attention with the queries of a block in the lanes of a register (see
// causal_mha_lanes.hpp for the formulas).
//
// Layout of `saved` for one head: the e_j in lane blocks (kernels/lane_blocks.hpp: block
// b, queries i0 = 16 b .. i0 + 15, one vector per key j < i0 + 16, lane r = query
// i0 + r), then 16 floats of 1 / l per block. Queries past T (the last block's unused
// lanes) hold finite values nothing reads back into a result: their q and dO rows load
// as zeros and are never stored.
//
// Each loop over keys takes them eight at a time, eight independent accumulators of E
// FMAs each (one FMA's latency is four cycles, two issue per cycle), with the
// remainder one at a time.
#include "kernels/causal_mha_lanes.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/errors.hpp"
#include "core/simd.hpp"
#include "core/vmath.hpp"
#include "kernels/lane_blocks.hpp"

namespace liegrad::kernels::lanes {

using lane_blocks::block_offset;
using lane_blocks::blocks;

int64_t saved_floats(int64_t T) { return block_offset(blocks(T)) + 16 * blocks(T); }

int64_t scratch_floats(int64_t T) { return 32 * T + 256 * blocks(T); }

#if defined(__AVX512F__)

// GCC 12's intrinsic headers trip -Wmaybe-uninitialized on their own undefined-vector idiom.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace {

using lane_blocks::causal_lanes;
using simd::V;
constexpr int kUnroll = 8;

// x[r] = row r (E floats, the rest 0) of a 16-row block at p with row stride ld; rows
// r >= n are 0.
template <int E>
inline void load_rows(const float* p, int64_t ld, int64_t n, V (&x)[16]) {
  const __mmask16 em = simd::tail_mask(E);
#pragma GCC unroll 16
  for (int r = 0; r < 16; ++r) x[r] = r < n ? _mm512_maskz_loadu_ps(em, p + r * ld) : simd::zero();
}

// dst (T x 16) = rows of E floats at src (row stride ld); columns E.. are not written.
// The key loops read their broadcasts from rows 64 bytes apart, a fixed offset from one
// pointer: at the row stride of qkv (3D floats) each of the eight rows needed its own
// general register, and GCC spilled them (a stack load before every FMA, `perf
// annotate`).
template <int E>
inline void pack_rows(const float* src, int64_t ld, int64_t T, float* dst) {
  const __mmask16 em = simd::tail_mask(E);
  for (int64_t j = 0; j < T; ++j) _mm512_mask_storeu_ps(dst + 16 * j, em, _mm512_maskz_loadu_ps(em, src + j * ld));
}

// acc[u] = sum_c broadcast(w[u ld + c]) x[c] for u < U: the dot products of U keys (rows
// of w) with the E lane-vectors x.
template <int E, int U>
inline void dots(const float* w, int64_t ld, const V* x, V (&acc)[kUnroll]) {
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) acc[u] = simd::zero();
#pragma GCC unroll 16
  for (int c = 0; c < E; ++c)
#pragma GCC unroll 8
    for (int u = 0; u < U; ++u) acc[u] = simd::fmadd(simd::set1(w[u * ld + c]), x[c], acc[u]);
}

// For keys 0 .. jn - 1, eight at a time: the dots over rows of w, then f(j, acc, U) for
// keys j .. j + U - 1 (U a std::integral_constant, so f's loop over them unrolls and
// acc stays in registers).
template <int E, class F>
inline void over_keys(int64_t jn, const float* w, int64_t ld, const V* x, F&& f) {
  int64_t j = 0;
  V acc[kUnroll];
  for (; j + kUnroll <= jn; j += kUnroll) {
    dots<E, kUnroll>(w + j * ld, ld, x, acc);
    f(j, acc, std::integral_constant<int, kUnroll>{});
  }
  for (; j < jn; ++j) {
    dots<E, 1>(w + j * ld, ld, x, acc);
    f(j, acc, std::integral_constant<int, 1>{});
  }
}

// For keys 0 .. jn - 1, eight at a time: acc[u] = sum_r broadcast(s[16 (j + u) + r]) y[r]
// (a row of width E: key j's share of a product with the block's 16 rows y), then
// g(j + u, acc[u]).
template <class G>
inline void over_keys_rows(int64_t jn, const float* s, const V (&y)[16], G&& g) {
  int64_t j = 0;
  for (; j + kUnroll <= jn; j += kUnroll) {
    V acc[kUnroll];
#pragma GCC unroll 8
    for (int u = 0; u < kUnroll; ++u) acc[u] = simd::zero();
#pragma GCC unroll 16
    for (int r = 0; r < 16; ++r)
#pragma GCC unroll 8
      for (int u = 0; u < kUnroll; ++u) acc[u] = simd::fmadd(simd::set1(s[16 * (j + u) + r]), y[r], acc[u]);
#pragma GCC unroll 8
    for (int u = 0; u < kUnroll; ++u) g(j + u, acc[u]);
  }
  for (; j < jn; ++j) {
    V acc = simd::zero();
#pragma GCC unroll 16
    for (int r = 0; r < 16; ++r) acc = simd::fmadd(simd::set1(s[16 * j + r]), y[r], acc);
    g(j, acc);
  }
}

// Row j (E floats at p): p = acc, or p += acc.
template <int E>
inline void put_row(float* p, V acc, bool add) {
  const __mmask16 em = simd::tail_mask(E);
  if (add) acc = simd::add(acc, _mm512_maskz_loadu_ps(em, p));
  _mm512_mask_storeu_ps(p, em, acc);
}

// Rows r < n of a 16-row block at p (row stride ld) from the column registers x (E of
// them; x is transposed in place): written, or added with add.
template <int E>
inline void put_columns(V (&x)[16], float* p, int64_t ld, int64_t n, bool add) {
#pragma GCC unroll 16
  for (int c = E; c < 16; ++c) x[c] = simd::zero();
  simd::transpose16(x);
  for (int64_t r = 0; r < n; ++r) put_row<E>(p + r * ld, x[r], add);
}

template <int E>
void forward_e(const Head& h, float scale, float slope, float* saved, float* out, int64_t ldo, float* scratch) {
  const int64_t T = h.T, ld = h.ld, nb = blocks(T);
  float *kp = scratch, *vp = scratch + 16 * T;  // k and v rows, 16 floats apart
  pack_rows<E>(h.k, ld, T, kp);
  pack_rows<E>(h.v, ld, T, vp);
  const V vscale = simd::set1(scale), vslope = simd::set1(slope), lane = simd::iota();
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t i0 = 16 * b, n = std::min<int64_t>(16, T - i0), jn = i0 + n;
    float* e = saved + block_offset(b);  // e_j at e + 16 j
    V qt[16];
    load_rows<E>(h.q + i0 * ld, ld, n, qt);
    simd::transpose16(qt);  // qt[c] = q[i0 .., c]
    const V rows = simd::add(simd::set1(static_cast<float>(i0)), lane);
    // Logits scale q.k_j - slope (i - j), -inf above the diagonal, and their maximum.
    V m = simd::set1(-INFINITY);
    over_keys<E>(jn, kp, 16, qt, [&](int64_t j, const V(&acc)[kUnroll], auto U) {
#pragma GCC unroll 8
      for (int u = 0; u < decltype(U)::value; ++u) {
        const V s = simd::fnmadd(vslope, simd::sub(rows, simd::set1(static_cast<float>(j + u))), simd::mul(vscale, acc[u]));
        const V z = _mm512_mask_mov_ps(simd::set1(-INFINITY), causal_lanes(j + u, i0), s);
        simd::store(e + 16 * (j + u), z);
        m = simd::max(m, z);
      }
    });
    // e_j = exp(z_j - m), exactly 0 above the diagonal; l = sum_j e_j; o^T[c] = sum_j v[j,c] e_j.
    V l = simd::zero(), ot[16];
#pragma GCC unroll 16
    for (int c = 0; c < E; ++c) ot[c] = simd::zero();
    for (int64_t j = 0; j < jn; ++j) {
      const V ej = _mm512_maskz_mov_ps(causal_lanes(j, i0), vm::exp_v(simd::sub(simd::load(e + 16 * j), m)));
      simd::store(e + 16 * j, ej);
      l = simd::add(l, ej);
      const float* vj = vp + 16 * j;
#pragma GCC unroll 16
      for (int c = 0; c < E; ++c) ot[c] = simd::fmadd(simd::set1(vj[c]), ej, ot[c]);
    }
    const V inv = simd::div(simd::set1(1.0f), l);
    simd::store(saved + block_offset(nb) + 16 * b, inv);
#pragma GCC unroll 16
    for (int c = 0; c < E; ++c) ot[c] = simd::mul(ot[c], inv);
    put_columns<E>(ot, out + i0 * ldo, ldo, n, false);
  }
}

template <int E>
void backward_e(const Head& h, float scale, const float* saved, const float* dO, int64_t ldo, float* dq, float* dk,
                float* dv, bool fresh, float* scratch) {
  const int64_t T = h.T, ld = h.ld, nb = blocks(T);
  float *kp = scratch, *vp = scratch + 16 * T, *ds = scratch + 32 * T;  // ds: 16 floats per key up to 16 nb
  pack_rows<E>(h.k, ld, T, kp);
  pack_rows<E>(h.v, ld, T, vp);
  const V vscale = simd::set1(scale);
  // Last block first: it reaches every key, so with a fresh gradient it writes dk and dv
  // and the blocks after it add.
  for (int64_t b = nb - 1; b >= 0; --b) {
    const int64_t i0 = 16 * b, n = std::min<int64_t>(16, T - i0), jn = i0 + n;
    const bool add_kv = !fresh || b != nb - 1;
    const float* e = saved + block_offset(b);
    const float* inv_l = saved + block_offset(nb) + 16 * b;
    const V inv = simd::load(inv_l);
    V y[16];
    // dP^T[j] into ds, and rho = sum_j P^T[j] dP^T[j].
    load_rows<E>(dO + i0 * ldo, ldo, n, y);
    simd::transpose16(y);  // y[c] = dO[i0 .., c]
    V rho = simd::zero();
    over_keys<E>(jn, vp, 16, y, [&](int64_t j, const V(&acc)[kUnroll], auto U) {
#pragma GCC unroll 8
      for (int u = 0; u < decltype(U)::value; ++u) {
        simd::store(ds + 16 * (j + u), acc[u]);
        rho = simd::fmadd(simd::mul(simd::load(e + 16 * (j + u)), inv), acc[u], rho);
      }
    });
    // dS^T[j] = P^T[j] (dP^T[j] - rho) in place; dq^T[c] = scale sum_j k[j,c] dS^T[j].
    V dqt[16];
#pragma GCC unroll 16
    for (int c = 0; c < E; ++c) dqt[c] = simd::zero();
    for (int64_t j = 0; j < jn; ++j) {
      const V dsj = simd::mul(simd::mul(simd::load(e + 16 * j), inv), simd::sub(simd::load(ds + 16 * j), rho));
      simd::store(ds + 16 * j, dsj);
      const float* kj = kp + 16 * j;
#pragma GCC unroll 16
      for (int c = 0; c < E; ++c) dqt[c] = simd::fmadd(simd::set1(kj[c]), dsj, dqt[c]);
    }
#pragma GCC unroll 16
    for (int c = 0; c < E; ++c) dqt[c] = simd::mul(dqt[c], vscale);
    put_columns<E>(dqt, dq + i0 * ld, ld, n, !fresh);
    // dv[j] += sum_r e_j[r] (dO[r] / l_r).
    load_rows<E>(dO + i0 * ldo, ldo, n, y);
#pragma GCC unroll 16
    for (int r = 0; r < 16; ++r) y[r] = simd::mul(y[r], simd::set1(inv_l[r]));
    over_keys_rows(jn, e, y, [&](int64_t j, V acc) { put_row<E>(dv + j * ld, acc, add_kv); });
    // dk[j] += sum_r dS^T[j][r] (scale q[r]).
    load_rows<E>(h.q + i0 * ld, ld, n, y);
#pragma GCC unroll 16
    for (int r = 0; r < 16; ++r) y[r] = simd::mul(y[r], vscale);
    over_keys_rows(jn, ds, y, [&](int64_t j, V acc) { put_row<E>(dk + j * ld, acc, add_kv); });
  }
}

using Forward = void (*)(const Head&, float, float, float*, float*, int64_t, float*);
using Backward = void (*)(const Head&, float, const float*, const float*, int64_t, float*, float*, float*, bool, float*);

template <int... Es>
struct Table {
  static constexpr Forward forward[] = {forward_e<Es>...};
  static constexpr Backward backward[] = {backward_e<Es>...};
};
using Kernels = Table<1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16>;

}  // namespace

#pragma GCC diagnostic pop

bool available(int64_t e) { return e >= 1 && e <= 16; }

void forward(const Head& h, float scale, float slope, float* saved, float* out, int64_t ldo, float* scratch) {
  Kernels::forward[h.e - 1](h, scale, slope, saved, out, ldo, scratch);
}

void backward(const Head& h, float scale, const float* saved, const float* dO, int64_t ldo, float* dq, float* dk,
              float* dv, bool fresh, float* scratch) {
  Kernels::backward[h.e - 1](h, scale, saved, dO, ldo, dq, dk, dv, fresh, scratch);
}

#else

// Without AVX-512 the general path runs (causal_mha.cpp asks available() first).
bool available(int64_t) { return false; }
void forward(const Head&, float, float, float*, float*, int64_t, float*) {
  throw ValueError("kernels::lanes::forward: this build has no AVX-512 (ask lanes::available first)");
}
void backward(const Head&, float, const float*, const float*, int64_t, float*, float*, float*, bool, float*) {
  throw ValueError("kernels::lanes::backward: this build has no AVX-512 (ask lanes::available first)");
}

#endif

}  // namespace liegrad::kernels::lanes
