// The fused attentions with rebuilt weights (see attention_recompute.hpp).
#include "kernels/attention_recompute.hpp"

#include <omp.h>

#include <algorithm>
#include <type_traits>

#include "core/fp_mode.hpp"
#include "core/parallel.hpp"
#include "core/small_gemm.hpp"
#include "kernels/causal_softmax.hpp"

namespace liegrad::kernels::recompute {

namespace {

constexpr int64_t kRows = 16;  // query rows per block

template <class F>
void row_blocks(int64_t T_, F&& f) {
  for (int64_t i0 = 0; i0 < T_; i0 += kRows) f(i0, std::min(kRows, T_ - i0));
}

// items independent work items of a causal T x T x width product each.
bool go_parallel(int64_t items, int64_t T_, int64_t width) {
  return items > 1 && 4 * items * T_ * T_ * width >= kMinParallelFlops && !in_parallel_region();
}

template <class T>
T slope_of(const std::vector<T>* slopes, int64_t k) {
  return slopes && !slopes->empty() ? (*slopes)[static_cast<size_t>(k)] : T(0);
}

// Zeroes the columns i + 1 .. end - 1 of row i of a block (row r = query i0 + r, stride ld).
template <class T>
void zero_above_diagonal(T* block, int64_t ld, int64_t i0, int64_t rows) {
  for (int64_t r = 0; r < rows; ++r) std::fill(block + r * ld + i0 + r + 1, block + r * ld + i0 + rows, T(0));
}

}  // namespace

template <class T>
void mha_forward(const MhaShape<T>& sh, const T* qkv, T* out, T* lse) {
  const int64_t T_ = sh.T_, D = sh.D, h = sh.h, e = sh.e, ld = 3 * D;
#pragma omp parallel if (go_parallel(sh.B * h, T_, e))
  {
    std::vector<T> kt(static_cast<size_t>(e * T_)), P(static_cast<size_t>(kRows * T_));
#pragma omp for schedule(dynamic, 1)
    for (int64_t bk = 0; bk < sh.B * h; ++bk) {
      const int64_t b = bk / h, k = bk % h;
      const T* q = qkv + b * T_ * ld + k * e;
      const T *kk = q + D, *v = q + 2 * D;
      const T sl = slope_of(sh.slopes, k);
      transpose_ld(T_, e, kk, ld, kt.data(), T_);
      row_blocks(T_, [&](int64_t i0, int64_t rows) {
        small_gemm_ld<T>(false, false, rows, i0 + rows, e, sh.scale, q + i0 * ld, ld, kt.data(), T_, T(0), P.data(), T_);
        for (int64_t r = 0; r < rows; ++r)
          causal_softmax_row(i0 + r, P.data() + r * T_, T(1), sl, P.data() + r * T_, lse + bk * T_ + i0 + r);
        zero_above_diagonal(P.data(), T_, i0, rows);
        small_gemm_ld<T>(false, false, rows, e, i0 + rows, T(1), P.data(), T_, v, ld, T(0),
                         out + (b * T_ + i0) * D + k * e, D);
      });
    }
  }
}

template <class T>
void mha_backward(const MhaShape<T>& sh, const T* qkv, const T* lse, const T* G, T* dqkv, bool fresh) {
  const int64_t T_ = sh.T_, D = sh.D, h = sh.h, e = sh.e, ld = 3 * D;
#pragma omp parallel if (go_parallel(sh.B * h, T_, e))
  {
    std::vector<T> kt(static_cast<size_t>(e * T_)), vt(static_cast<size_t>(e * T_)),
        P(static_cast<size_t>(kRows * T_)), dP(static_cast<size_t>(kRows * T_));
#pragma omp for schedule(dynamic, 1)
    for (int64_t bk = 0; bk < sh.B * h; ++bk) {
      const int64_t b = bk / h, k = bk % h;
      const T* q = qkv + b * T_ * ld + k * e;
      const T *kk = q + D, *v = q + 2 * D;
      T* dq = dqkv + b * T_ * ld + k * e;
      T *dk = dq + D, *dv = dq + 2 * D;
      const T* dO = G + b * T_ * D + k * e;
      const T* lse_h = lse + bk * T_;
      const T sl = slope_of(sh.slopes, k);
      if (fresh)  // dk and dv are sums over the row blocks: start them at zero
        for (int64_t t = 0; t < T_; ++t) {
          std::fill(dk + t * ld, dk + t * ld + e, T(0));
          std::fill(dv + t * ld, dv + t * ld + e, T(0));
        }
      transpose_ld(T_, e, kk, ld, kt.data(), T_);
      transpose_ld(T_, e, v, ld, vt.data(), T_);
      row_blocks(T_, [&](int64_t i0, int64_t rows) {
        const int64_t cols = i0 + rows;
        // P rebuilt from the scores and lse; dP = dO v^T.
        small_gemm_ld<T>(false, false, rows, cols, e, sh.scale, q + i0 * ld, ld, kt.data(), T_, T(0), P.data(), T_);
        for (int64_t r = 0; r < rows; ++r)
          causal_exp_row(i0 + r, P.data() + r * T_, T(1), sl, lse_h[i0 + r], P.data() + r * T_);
        zero_above_diagonal(P.data(), T_, i0, rows);
        small_gemm_ld<T>(false, false, rows, cols, e, T(1), dO + i0 * D, D, vt.data(), T_, T(0), dP.data(), T_);
        for (int64_t r = 0; r < rows; ++r) softmax_backward_row(i0 + r + 1, P.data() + r * T_, dP.data() + r * T_);
        zero_above_diagonal(dP.data(), T_, i0, rows);
        // dq (this block's rows, one product) = scale dS k; dk, dv (rows < cols) += scale dS^T q, P^T dO.
        small_gemm_ld<T>(false, false, rows, e, cols, sh.scale, dP.data(), T_, kk, ld, fresh ? T(0) : T(1),
                         dq + i0 * ld, ld);
        small_gemm_ld<T>(true, false, cols, e, rows, sh.scale, dP.data(), T_, q + i0 * ld, ld, T(1), dk, ld);
        small_gemm_ld<T>(true, false, cols, e, rows, T(1), P.data(), T_, dO + i0 * D, D, T(1), dv, ld);
      });
    }
  }
}

template <class T>
void mean_forward(const MeanShape<T>& sh, const T* X, T* out, T* lse) {
  const int64_t T_ = sh.T_, D = sh.D, h = sh.h;
  const T inv_h = T(1) / static_cast<T>(h);
#pragma omp parallel if (go_parallel(sh.B, T_, D))
  {
    const FlushSubnormals ftz(std::is_same_v<T, float>);  // as the kept path (core/fp_mode.hpp)
    std::vector<T> Xt(static_cast<size_t>(D * T_)), S(static_cast<size_t>(kRows * T_)),
        A(static_cast<size_t>(kRows * T_)), p(static_cast<size_t>(T_));
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < sh.B; ++b) {
      const T* Xb = X + b * T_ * D;
      transpose_ld(T_, D, Xb, D, Xt.data(), T_);
      row_blocks(T_, [&](int64_t i0, int64_t rows) {
        const int64_t cols = i0 + rows;
        small_gemm_ld<T>(false, false, rows, cols, D, sh.s, Xb + i0 * D, D, Xt.data(), T_, T(0), S.data(), T_);
        for (int64_t r = 0; r < rows; ++r) std::fill(A.data() + r * T_, A.data() + r * T_ + cols, T(0));
        for (int64_t k = 0; k < h; ++k) {
          const T bk = (*sh.beta)[static_cast<size_t>(k)], sl = slope_of(sh.slopes, k);
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t i = i0 + r;
            causal_softmax_row(i, S.data() + r * T_, bk, sl, p.data(), lse + (b * h + k) * T_ + i);
            add_scaled_row(i + 1, inv_h, p.data(), A.data() + r * T_);
          }
        }
        small_gemm_ld<T>(false, false, rows, D, cols, T(1), A.data(), T_, Xb, D, T(0), out + (b * T_ + i0) * D, D);
      });
    }
  }
}

template <class T>
void mean_backward(const MeanShape<T>& sh, const T* X, const T* lse, const T* G, T* dX, T* dlog_beta) {
  const int64_t T_ = sh.T_, D = sh.D, h = sh.h;
  const T inv_h = T(1) / static_cast<T>(h);
  const int threads = go_parallel(sh.B, T_, D) ? num_threads() : 1;
  std::vector<double> dbeta(static_cast<size_t>(threads * h), 0.0);  // per thread, then summed in order
#pragma omp parallel if (threads > 1)
  {
    const FlushSubnormals ftz(std::is_same_v<T, float>);
    const int t = omp_get_thread_num();
    std::vector<T> Xt(static_cast<size_t>(D * T_)), S(static_cast<size_t>(kRows * T_)),
        A(static_cast<size_t>(kRows * T_)), dA(static_cast<size_t>(kRows * T_)), dS(static_cast<size_t>(kRows * T_)),
        p(static_cast<size_t>(T_));
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < sh.B; ++b) {
      const T* Xb = X + b * T_ * D;
      const T* Gb = G + b * T_ * D;
      transpose_ld(T_, D, Xb, D, Xt.data(), T_);
      row_blocks(T_, [&](int64_t i0, int64_t rows) {
        const int64_t cols = i0 + rows;
        small_gemm_ld<T>(false, false, rows, cols, D, sh.s, Xb + i0 * D, D, Xt.data(), T_, T(0), S.data(), T_);
        small_gemm_ld<T>(false, false, rows, cols, D, T(1), Gb + i0 * D, D, Xt.data(), T_, T(0), dA.data(), T_);
        for (int64_t r = 0; r < rows; ++r) {
          std::fill(A.data() + r * T_, A.data() + r * T_ + cols, T(0));
          std::fill(dS.data() + r * T_, dS.data() + r * T_ + cols, T(0));
        }
        for (int64_t k = 0; k < h; ++k) {
          const T bk = (*sh.beta)[static_cast<size_t>(k)], sl = slope_of(sh.slopes, k);
          double acc = 0;
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t i = i0 + r;
            causal_exp_row(i, S.data() + r * T_, bk, sl, lse[(b * h + k) * T_ + i], p.data());
            add_scaled_row(i + 1, inv_h, p.data(), A.data() + r * T_);
            acc += static_cast<double>(head_softmax_backward_row(i + 1, p.data(), dA.data() + r * T_, S.data() + r * T_,
                                                                 inv_h, bk, dS.data() + r * T_));
          }
          dbeta[static_cast<size_t>(t * h + k)] += acc * static_cast<double>(bk);
        }
        if (!dX) return;
        T* dXb = dX + b * T_ * D;
        // dX += Abar^T G (rows < cols), s dS X (this block's rows), s dS^T X (rows < cols).
        small_gemm_ld<T>(true, false, cols, D, rows, T(1), A.data(), T_, Gb + i0 * D, D, T(1), dXb, D);
        small_gemm_ld<T>(false, false, rows, D, cols, sh.s, dS.data(), T_, Xb, D, T(1), dXb + i0 * D, D);
        small_gemm_ld<T>(true, false, cols, D, rows, sh.s, dS.data(), T_, Xb + i0 * D, D, T(1), dXb, D);
      });
    }
  }
  if (dlog_beta)
    for (int64_t k = 0; k < h; ++k) {
      double acc = 0;
      for (int t = 0; t < threads; ++t) acc += dbeta[static_cast<size_t>(t * h + k)];
      dlog_beta[k] += static_cast<T>(acc);
    }
}

#define LIEGRAD_INSTANTIATE(T)                                                                           \
  template void mha_forward(const MhaShape<T>&, const T*, T*, T*);                                       \
  template void mha_backward(const MhaShape<T>&, const T*, const T*, const T*, T*, bool);                \
  template void mean_forward(const MeanShape<T>&, const T*, T*, T*);                                     \
  template void mean_backward(const MeanShape<T>&, const T*, const T*, const T*, T*, T*);
LIEGRAD_INSTANTIATE(float)
LIEGRAD_INSTANTIATE(double)
#undef LIEGRAD_INSTANTIATE

}  // namespace liegrad::kernels::recompute
