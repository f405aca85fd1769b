// Fused causal multi-head self-attention (see causal_mha.hpp).
#include "kernels/causal_mha.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>

#include "kernels/causal_mha_lanes.hpp"
#include "kernels/causal_softmax.hpp"
#include "autograd/tape.hpp"
#include "core/buffer.hpp"
#include "core/parallel.hpp"
#include "core/profile.hpp"
#include "core/small_gemm.hpp"

namespace liegrad::kernels {

using namespace ag;

namespace {

constexpr int64_t kRows = 16;

template <class T>
struct Saved {
  int64_t B = 0, T_ = 0, D = 0, h = 0, e = 0;
  T scale = 1;
  std::vector<T> slopes;
  // (B*h,T,T): row i written up to the end of its 16-row block, zero above the diagonal;
  // the products read no further (o's and dq's rows i0.. read columns < i0 + rows, dv's
  // and dk's the columns of block i0 in rows >= i0). Past the block it is never written.
  // On the lanes path (lanes: float, AVX-512, e <= 16, no dropout) it holds instead
  // lanes::saved_floats(T) floats per (batch row, head).
  Buffer<T> P;
  bool lanes = false;
  int64_t per_head = 0;  // P's floats per (batch row, head)
  // Attention dropout: keep (B*h,T,T) is 1 where P's entry is kept, 0 where dropped;
  // empty without dropout. keep_scale = 1 / (1 - p).
  std::vector<uint8_t> keep;
  T keep_scale = 1;
};

// P~ rows i0 .. i0+rows-1 of one (b, head) into pd (same layout as P): P .* M / (1 - p).
// Only the causal part is written: pd starts zeroed and nothing writes above the diagonal,
// so the row-block products, which read past it up to the block's end, read zeros there as in P.
template <class T>
void dropped_rows(const Saved<T>& sv, const T* P, const uint8_t* keep, int64_t i0, int64_t rows, T* pd) {
  const int64_t T_ = sv.T_;
  for (int64_t i = i0; i < i0 + rows; ++i) {
    const T* pi = P + i * T_;
    const uint8_t* ki = keep + i * T_;
    T* oi = pd + i * T_;
#pragma omp simd
    for (int64_t j = 0; j <= i; ++j) oi[j] = ki[j] ? pi[j] * sv.keep_scale : T(0);
  }
}

template <class F>
void row_blocks(int64_t T_, F&& f) {
  for (int64_t i0 = 0; i0 < T_; i0 += kRows) f(i0, std::min(kRows, T_ - i0));
}

// The same blocks, last first.
template <class F>
void row_blocks_reversed(int64_t T_, F&& f) {
  for (int64_t i0 = (T_ - 1) / kRows * kRows; i0 >= 0; i0 -= kRows) f(i0, std::min(kRows, T_ - i0));
}

// Head k of batch row b in a (B,T,3D) q|k|v array: its q, k and v columns (row stride 3D).
template <class Ptr>
struct HeadSlices {
  Ptr q, k, v;
};
template <class Ptr>
HeadSlices<Ptr> head_slices(Ptr qkv, int64_t b, int64_t k, int64_t T_, int64_t D, int64_t e) {
  Ptr q = qkv + b * T_ * 3 * D + k * e;
  return {q, q + D, q + 2 * D};
}

bool go_parallel(int64_t items, int64_t T_, int64_t e) {
  return items > 1 && 4 * items * T_ * T_ * e >= kMinParallelFlops && !in_parallel_region();
}

template <class T>
void forward(Saved<T>& sv, const T* qkv, T* out) {
  const int64_t B = sv.B, T_ = sv.T_, D = sv.D, h = sv.h, e = sv.e, ld = 3 * D, TT = T_ * T_;
  const bool drop = !sv.keep.empty();
#pragma omp parallel if (go_parallel(B * h, T_, e))
  {
    std::vector<T> kt(static_cast<size_t>(sv.lanes ? lanes::scratch_floats(T_) : e * T_)),
        pd(drop ? static_cast<size_t>(TT) : 0);
#pragma omp for schedule(dynamic, 1)
    for (int64_t bk = 0; bk < B * h; ++bk) {
      const int64_t b = bk / h, k = bk % h;
      const auto [q, kk, v] = head_slices(qkv, b, k, T_, D, e);
      T* P = sv.P.data() + bk * sv.per_head;
      const uint8_t* keep = drop ? sv.keep.data() + bk * TT : nullptr;
      const T sl = sv.slopes.empty() ? T(0) : sv.slopes[static_cast<size_t>(k)];
      if constexpr (std::is_same_v<T, float>) {
        if (sv.lanes) {
          lanes::forward(lanes::Head{T_, e, ld, q, kk, v}, sv.scale, sl, P, out + b * T_ * D + k * e, D, kt.data());
          continue;
        }
      }
      // kt (e, T) = the head's e columns of k's T rows (row stride ld), transposed through
      // register tiles for float: a scalar loop's strided stores were a quarter of the
      // backward's own time (perf annotate, 2026-12-04).
      transpose_ld(T_, e, kk, ld, kt.data(), T_);
      // One block of rows at a time, from its scores to its output while it is in L1
      // (o's rows i0.. need P's rows i0.. only, up to column i0 + rows).
      row_blocks(T_, [&](int64_t i0, int64_t rows) {
        // S = scale q k^T, causal part
        small_gemm_ld<T>(false, false, rows, i0 + rows, e, sv.scale, q + i0 * ld, ld, kt.data(), T_, T(0), P + i0 * T_, T_);
        for (int64_t i = i0; i < i0 + rows; ++i) {  // P = causal softmax of S, in place
          T* pi = P + i * T_;
          causal_softmax_row(i, pi, T(1), sl, pi);
          std::fill(pi + i + 1, pi + i0 + rows, T(0));
        }
        // o = P v, or P~ v with dropout
        const T* Pu = P;
        if (drop) {
          dropped_rows(sv, P, keep, i0, rows, pd.data());
          Pu = pd.data();
        }
        small_gemm_ld<T>(false, false, rows, e, i0 + rows, T(1), Pu + i0 * T_, T_, v, ld, T(0),
                         out + (b * T_ + i0) * D + k * e, D);
      });
    }
  }
}

// dqkv: qkv's gradient; fresh (not written yet): its blocks are assigned, not added to,
// which is exact because each block of dq, dk and dv is written by one product.
template <class T>
void backward(const Saved<T>& sv, const T* G, const T* qkv, T* dqkv, bool fresh) {
  const T acc = fresh ? T(0) : T(1);  // beta of the dq, dk and dv products
  const int64_t B = sv.B, T_ = sv.T_, D = sv.D, h = sv.h, e = sv.e, ld = 3 * D, TT = T_ * T_;
  const bool drop = !sv.keep.empty();
#pragma omp parallel if (go_parallel(B * h, T_, e))
  {
    std::vector<T> vt(sv.lanes ? 0 : static_cast<size_t>(e * T_)),
        dP(static_cast<size_t>(sv.lanes ? lanes::scratch_floats(T_) : TT)), pd(drop ? static_cast<size_t>(TT) : 0);
#pragma omp for schedule(dynamic, 1)
    for (int64_t bk = 0; bk < B * h; ++bk) {
      const int64_t b = bk / h, k = bk % h;
      const auto [q, kk, v] = head_slices(qkv, b, k, T_, D, e);
      const auto [dq, dk, dv] = head_slices(dqkv, b, k, T_, D, e);
      const T* P = sv.P.data() + bk * sv.per_head;
      const uint8_t* keep = drop ? sv.keep.data() + bk * TT : nullptr;
      const T* dO = G + b * T_ * D + k * e;
      if constexpr (std::is_same_v<T, float>) {
        if (sv.lanes) {
          lanes::backward(lanes::Head{T_, e, ld, q, kk, v}, sv.scale, P, dO, D, dq, dk, dv, fresh, dP.data());
          continue;
        }
      }
      transpose_ld(T_, e, v, ld, vt.data(), T_);  // vt (e, T), as kt
      if (drop) dropped_rows(sv, P, keep, 0, T_, pd.data());  // P~, read by dv's product below
      const T* Pu = drop ? pd.data() : P;
      // One block of rows at a time, last first: dk's rows i0.. need dS's rows i0..T,
      // which the blocks after i0 have finished. Each block of dq, dk and dv is one
      // product, as in any order, so the order changes no result.
      row_blocks_reversed(T_, [&](int64_t i0, int64_t rows) {
        // dP~ = dO v^T (causal part); dv += P~^T dO (P~ = P without dropout).
        small_gemm_ld<T>(false, false, rows, i0 + rows, e, T(1), dO + i0 * D, D, vt.data(), T_, T(0),
                         dP.data() + i0 * T_, T_);
        small_gemm_ld<T>(true, false, rows, e, T_ - i0, T(1), Pu + i0 * T_ + i0, T_, dO + i0 * D, D, acc,
                         dv + i0 * ld, ld);
        for (int64_t i = i0; i < i0 + rows; ++i) {  // dS = P (dP - rowsum(P dP)), in place in dP
          const T* pi = P + i * T_;
          T* di = dP.data() + i * T_;
          if (drop) {  // dP = dP~ .* M / (1 - p)
            const uint8_t* ki = keep + i * T_;
#pragma omp simd
            for (int64_t j = 0; j <= i; ++j) di[j] = ki[j] ? di[j] * sv.keep_scale : T(0);
          }
          softmax_backward_row(i + 1, pi, di);
          std::fill(di + i + 1, di + i0 + rows, T(0));  // dS as P: zero to the block's end
        }
        // dq += scale dS k;  dk += scale dS^T q.
        small_gemm_ld<T>(false, false, rows, e, i0 + rows, sv.scale, dP.data() + i0 * T_, T_, kk, ld, acc,
                         dq + i0 * ld, ld);
        small_gemm_ld<T>(true, false, rows, e, T_ - i0, sv.scale, dP.data() + i0 * T_ + i0, T_, q + i0 * ld, ld, acc,
                         dk + i0 * ld, ld);
      });
    }
  }
}

}  // namespace

// The recompute path (attention_recompute.hpp): keeps the (B*h,T) log-normalisers only.
template <class T>
Var<T> recomputed_attention(const Var<T>& qkv, int heads, const std::vector<T>& slopes, T scale) {
  const Shape& s = qkv.shape();
  auto sh = std::make_shared<recompute::MhaShape<T>>();
  auto kept = std::make_shared<std::pair<std::vector<T>, Buffer<T>>>();  // the slopes and lse
  kept->first = slopes;
  sh->B = s[0];
  sh->T_ = s[1];
  sh->D = s[2] / 3;
  sh->h = heads;
  sh->e = sh->D / heads;
  sh->scale = scale;
  sh->slopes = &kept->first;
  kept->second = Buffer<T>(sh->B * heads * sh->T_);  // every entry written by mha_forward
  Array<T> out = Array<T>::uninitialized(Shape{sh->B, sh->T_, sh->D});
  recompute::mha_forward(*sh, qkv.value().data(), out.data(), kept->second.data());
  return record_op<T>(std::move(out), {&qkv}, [qkv, sh, kept](const Array<T>& G) {
    prof::Scope timed_b(prof::Family::Attention);
    bool fresh = false;
    T* dqkv = qkv.node()->grad_for_write(&fresh).data();
    recompute::mha_backward(*sh, qkv.value().data(), kept->second.data(), G.data(), dqkv, fresh);
  });
}

template <class T>
Var<T> causal_self_attention(const Var<T>& qkv, int heads, const std::vector<T>& slopes, T scale, double dropout,
                             Rng* rng, AttentionMemory memory) {
  const Shape& s = qkv.shape();
  if (s.ndim != 3 || heads < 1 || s[2] % (3 * heads) != 0)
    throw ShapeError("causal_self_attention: expected qkv (B,T,3D) with D divisible by " + std::to_string(heads) +
                     " heads, got " + s.str());
  if (!slopes.empty() && static_cast<int>(slopes.size()) != heads)
    throw ShapeError("causal_self_attention: " + std::to_string(slopes.size()) + " slopes for " +
                     std::to_string(heads) + " heads");
  if (!(dropout >= 0 && dropout < 1))
    throw ValueError("causal_self_attention: dropout must be in [0, 1), got " + std::to_string(dropout));
  if (dropout > 0 && rng == nullptr) throw ValueError("causal_self_attention: dropout > 0 needs a random generator");
  prof::Scope timed(prof::Family::Attention);
  if (dropout == 0 && choose_recompute(memory, s[1])) return recomputed_attention(qkv, heads, slopes, scale);
  auto sv = std::make_shared<Saved<T>>();
  sv->B = s[0];
  sv->T_ = s[1];
  sv->D = s[2] / 3;
  sv->h = heads;
  sv->e = sv->D / heads;
  sv->scale = scale;
  sv->slopes = slopes;
  sv->lanes = std::is_same_v<T, float> && dropout == 0 && lanes::available(sv->e);
  sv->per_head = sv->lanes ? lanes::saved_floats(sv->T_) : sv->T_ * sv->T_;
  sv->P = Buffer<T>(sv->B * heads * sv->per_head);
  if (dropout > 0) {  // ag::dropout's draws, in its order (see the header)
    sv->keep.resize(static_cast<size_t>(sv->P.size()));
    rng->draw_keep_mask(dropout, sv->keep.data(), static_cast<int64_t>(sv->keep.size()));
    sv->keep_scale = static_cast<T>(1.0 / (1.0 - dropout));
  }
  Array<T> out = Array<T>::uninitialized(Shape{sv->B, sv->T_, sv->D});  // every row written by forward
  forward(*sv, qkv.value().data(), out.data());
  return record_op<T>(std::move(out), {&qkv}, [qkv, sv](const Array<T>& G) {
    prof::Scope timed_b(prof::Family::Attention);
    bool fresh = false;
    T* dqkv = qkv.node()->grad_for_write(&fresh).data();
    backward(*sv, G.data(), qkv.value().data(), dqkv, fresh);
  });
}

template Var<float> causal_self_attention(const Var<float>&, int, const std::vector<float>&, float, double, Rng*,
                                          AttentionMemory);
template Var<double> causal_self_attention(const Var<double>&, int, const std::vector<double>&, double, double, Rng*,
                                           AttentionMemory);

}  // namespace liegrad::kernels
