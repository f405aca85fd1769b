// Fused head-averaged causal attention (see mean_attention.hpp).
#include "kernels/mean_attention.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>

#include "kernels/causal_softmax.hpp"
#include "kernels/mean_attention_lanes.hpp"
#include "autograd/tape.hpp"
#include "core/buffer.hpp"
#include "core/fp_mode.hpp"
#include "core/parallel.hpp"
#include "core/profile.hpp"
#include "core/small_gemm.hpp"

namespace liegrad::kernels {

using namespace ag;

namespace {

constexpr int64_t kRows = 16;  // row block of the causal products

template <class T>
struct Saved {
  int64_t B = 0, T_ = 0, D = 0, h = 0;
  std::vector<T> beta;
  // (B,T,T), (B,T,T), (B,h,T,T); only the causal part (j <= i) of S and P is written
  // or read; Abar is zeroed per batch row before it is summed into. On the lanes path
  // (float on AVX-512: mean_attention_lanes.hpp) S and P hold per batch row, and per
  // head, mean_lanes::lane_floats(T) floats (S^T and P^T in lane blocks) instead, and
  // Abar its causal part and the zeros above the diagonal within each 16-row block.
  Buffer<T> S, Abar, P;
  bool lanes = false;
  int64_t per_row = 0;  // floats of S per batch row, and of P per (batch row, head)
};

// C rows [i0, i0+rows) of a causal product: C[i, 0..i0+rows) = alpha * L[i, :] * R (cols i0+rows).
template <class T, class F>
void causal_blocks(int64_t T_, F&& f) {
  for (int64_t i0 = 0; i0 < T_; i0 += kRows) f(i0, std::min(kRows, T_ - i0));
}

bool go_parallel(int64_t B, int64_t T_, int64_t D) {
  return B > 1 && 4 * B * T_ * T_ * D >= kMinParallelFlops && !in_parallel_region();
}

template <class T>
void forward(const T* X, T* out, Saved<T>& sv, const std::vector<T>& slopes, T s) {
  const int64_t B = sv.B, T_ = sv.T_, D = sv.D, h = sv.h, TT = T_ * T_;
  const T inv_h = T(1) / static_cast<T>(h);
#pragma omp parallel if (go_parallel(B, T_, D))
  {
    const FlushSubnormals ftz(std::is_same_v<T, float>);  // float only; core/fp_mode.hpp says why
    std::vector<T> Xt(static_cast<size_t>(sv.lanes ? mean_lanes::scratch_floats(T_, D) : D * T_));
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < B; ++b) {
      const T* Xb = X + b * T_ * D;
      T* Sb = sv.S.data() + b * sv.per_row;
      T* Ab = sv.Abar.data() + b * TT;
      if constexpr (std::is_same_v<T, float>) {
        if (sv.lanes) {
          const mean_lanes::Row row{T_, D, h, Xb, sv.beta.data(), slopes.empty() ? nullptr : slopes.data(), s};
          mean_lanes::forward_row(row, Sb, sv.P.data() + b * h * sv.per_row, Ab, out + b * T_ * D, Xt.data());
          continue;
        }
      }
      transpose_ld(T_, D, Xb, D, Xt.data(), T_);
      causal_blocks<T>(T_, [&](int64_t i0, int64_t rows) {
        small_gemm_ld<T>(false, false, rows, i0 + rows, D, s, Xb + i0 * D, D, Xt.data(), T_, T(0), Sb + i0 * T_, T_);
      });
      std::fill(Ab, Ab + TT, T(0));
      for (int64_t k = 0; k < h; ++k) {
        const T bk = sv.beta[static_cast<size_t>(k)], sl = slopes.empty() ? T(0) : slopes[static_cast<size_t>(k)];
        T* Pk = sv.P.data() + (b * h + k) * TT;
        for (int64_t i = 0; i < T_; ++i) {
          T* pi = Pk + i * T_;
          causal_softmax_row(i, Sb + i * T_, bk, sl, pi);
          add_scaled_row(i + 1, inv_h, pi, Ab + i * T_);
        }
      }
      causal_blocks<T>(T_, [&](int64_t i0, int64_t rows) {
        small_gemm_ld<T>(false, false, rows, D, i0 + rows, T(1), Ab + i0 * T_, T_, Xb, D, T(0), out + (b * T_ + i0) * D, D);
      });
    }
  }
}

template <class T>
void backward(const Saved<T>& sv, const T* G, const T* X, T* dX, T* dlog_beta, T s) {
  const int64_t B = sv.B, T_ = sv.T_, D = sv.D, h = sv.h, TT = T_ * T_;
  const T inv_h = T(1) / static_cast<T>(h);
  const int threads = go_parallel(B, T_, D) ? num_threads() : 1;
  std::vector<double> dbeta(static_cast<size_t>(threads * h), 0.0);
#pragma omp parallel if (threads > 1)
  {
    const FlushSubnormals ftz(std::is_same_v<T, float>);  // float only; core/fp_mode.hpp says why
    const int t = omp_get_thread_num();
    std::vector<T> Xt(static_cast<size_t>(sv.lanes ? mean_lanes::scratch_floats(T_, D) : D * T_)),
        dA(sv.lanes ? 0 : static_cast<size_t>(TT)), dS(static_cast<size_t>(TT));
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < B; ++b) {
      const T* Xb = X + b * T_ * D;
      const T* Gb = G + b * T_ * D;
      const T* Sb = sv.S.data() + b * sv.per_row;
      const T* Ab = sv.Abar.data() + b * TT;
      if (!dlog_beta && !dX) continue;
      if (dX)
        causal_blocks<T>(T_, [&](int64_t i0, int64_t rows) {  // dX += Abar^T G
          small_gemm_ld<T>(true, false, rows, D, T_ - i0, T(1), Ab + i0 * T_ + i0, T_, Gb + i0 * D, D, T(1),
                           dX + (b * T_ + i0) * D, D);
        });
      bool done = false;  // dS and the dbeta sums from the lanes path
      if constexpr (std::is_same_v<T, float>) {
        if (sv.lanes) {
          const mean_lanes::Row row{T_, D, h, Xb, sv.beta.data(), nullptr, s};
          std::vector<double> dot_s(static_cast<size_t>(h), 0.0);
          mean_lanes::backward_row(row, Sb, sv.P.data() + b * h * sv.per_row, Gb, dS.data(), dot_s.data(), Xt.data());
          for (int64_t k = 0; k < h; ++k)
            dbeta[static_cast<size_t>(t * h + k)] += dot_s[static_cast<size_t>(k)] * static_cast<double>(sv.beta[static_cast<size_t>(k)]);
          done = true;
        }
      }
      if (!done) {
        transpose_ld(T_, D, Xb, D, Xt.data(), T_);
        causal_blocks<T>(T_, [&](int64_t i0, int64_t rows) {  // dAbar = G X^T (causal part)
          small_gemm_ld<T>(false, false, rows, i0 + rows, D, T(1), Gb + i0 * D, D, Xt.data(), T_, T(0),
                           dA.data() + i0 * T_, T_);
        });
        std::fill(dS.begin(), dS.end(), T(0));
        for (int64_t k = 0; k < h; ++k) {
          const T bk = sv.beta[static_cast<size_t>(k)];
          const T* Pk = sv.P.data() + (b * h + k) * TT;
          double acc = 0;
          for (int64_t i = 0; i < T_; ++i)
            acc += static_cast<double>(head_softmax_backward_row(i + 1, Pk + i * T_, dA.data() + i * T_, Sb + i * T_,
                                                                 inv_h, bk, dS.data() + i * T_));
          dbeta[static_cast<size_t>(t * h + k)] += acc * static_cast<double>(bk);
        }
      }
      if (dX) {
        // dX += s (dS + dS^T) X as two causal products (dS is lower triangular, its upper
        // part zero): rows i0.. of dS X read dS columns < i0 + rows, rows i0.. of dS^T X
        // read dS rows >= i0.
        T* dX_b = dX + b * T_ * D;
        causal_blocks<T>(T_, [&](int64_t i0, int64_t rows) {
          small_gemm_ld<T>(false, false, rows, D, i0 + rows, s, dS.data() + i0 * T_, T_, Xb, D, T(1), dX_b + i0 * D, D);
          small_gemm_ld<T>(true, false, rows, D, T_ - i0, s, dS.data() + i0 * T_ + i0, T_, Xb + i0 * D, D, T(1),
                           dX_b + i0 * D, D);
        });
      }
    }
  }
  if (dlog_beta)
    for (int64_t k = 0; k < h; ++k) {
      double acc = 0;
      for (int t = 0; t < threads; ++t) acc += dbeta[static_cast<size_t>(t * h + k)];
      dlog_beta[k] += static_cast<T>(acc);
    }
}

}  // namespace

// The recompute path (attention_recompute.hpp): keeps the (B,h,T) log-normalisers only.
template <class T>
Var<T> recomputed_mean_attention(const Var<T>& X, const Var<T>& log_beta, const std::vector<T>& slopes, T s,
                                 int64_t B, int64_t T_) {
  struct Kept {
    recompute::MeanShape<T> sh;
    std::vector<T> beta, slopes;
    Buffer<T> lse;
  };
  auto kp = std::make_shared<Kept>();
  const int64_t h = log_beta.size();
  for (int64_t k = 0; k < h; ++k) kp->beta.push_back(std::exp(log_beta.value()[k]));
  kp->slopes = slopes;
  kp->sh = recompute::MeanShape<T>{B, T_, X.size() / (B * T_), h, &kp->beta, &kp->slopes, s};
  kp->lse = Buffer<T>(B * h * T_);  // every entry written by mean_forward
  Array<T> out = Array<T>::uninitialized(X.shape());
  recompute::mean_forward(kp->sh, X.value().data(), out.data(), kp->lse.data());
  return record_op<T>(std::move(out), {&X, &log_beta}, [X, log_beta, kp](const Array<T>& G) {
    prof::Scope timed_b(prof::Family::Attention);
    recompute::mean_backward(kp->sh, X.value().data(), kp->lse.data(), G.data(),
                             X.requires_grad() ? X.node()->grad_ref().data() : nullptr,
                             log_beta.requires_grad() ? log_beta.node()->grad_ref().data() : nullptr);
  });
}

template <class T>
Var<T> mean_head_attention(const Var<T>& X, const Var<T>& log_beta, const std::vector<T>& slopes, T s, int64_t B,
                           int64_t T_, AttentionMemory memory) {
  const int64_t h = log_beta.size();
  if (B < 1 || T_ < 1 || X.size() % (B * T_) != 0)
    throw ShapeError("mean_head_attention: " + X.shape().str() + " does not hold " + std::to_string(B) + " x " +
                     std::to_string(T_) + " rows");
  if (h < 1 || log_beta.shape().ndim != 1)
    throw ShapeError("mean_head_attention: log_beta must be (h), got " + log_beta.shape().str());
  if (!slopes.empty() && static_cast<int64_t>(slopes.size()) != h)
    throw ShapeError("mean_head_attention: " + std::to_string(slopes.size()) + " slopes for " + std::to_string(h) +
                     " heads");
  prof::Scope timed(prof::Family::Attention);
  if (choose_recompute(memory, T_)) return recomputed_mean_attention(X, log_beta, slopes, s, B, T_);
  auto sv = std::make_shared<Saved<T>>();
  sv->B = B;
  sv->T_ = T_;
  sv->D = X.size() / (B * T_);
  sv->h = h;
  for (int64_t k = 0; k < h; ++k) sv->beta.push_back(std::exp(log_beta.value()[k]));
  sv->lanes = std::is_same_v<T, float> && mean_lanes::available();
  sv->per_row = sv->lanes ? mean_lanes::lane_floats(T_) : T_ * T_;
  sv->S = Buffer<T>(B * sv->per_row);
  sv->Abar = Buffer<T>(B * T_ * T_);
  sv->P = Buffer<T>(B * h * sv->per_row);
  Array<T> out = Array<T>::uninitialized(X.shape());  // every row written by forward
  forward(X.value().data(), out.data(), *sv, slopes, s);
  return record_op<T>(std::move(out), {&X, &log_beta}, [X, log_beta, sv, s](const Array<T>& G) {
    prof::Scope timed_b(prof::Family::Attention);
    backward(*sv, G.data(), X.value().data(), X.requires_grad() ? X.node()->grad_ref().data() : nullptr,
             log_beta.requires_grad() ? log_beta.node()->grad_ref().data() : nullptr, s);
  });
}

template Var<float> mean_head_attention(const Var<float>&, const Var<float>&, const std::vector<float>&, float,
                                        int64_t, int64_t, AttentionMemory);
template Var<double> mean_head_attention(const Var<double>&, const Var<double>&, const std::vector<double>&, double,
                                         int64_t, int64_t, AttentionMemory);

}  // namespace liegrad::kernels
