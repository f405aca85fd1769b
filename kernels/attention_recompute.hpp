// The two fused causal attentions (causal_mha.hpp, mean_attention.hpp) with memory
// linear in T: the forward keeps only each row's log-normaliser lse_i = log sum_j
// exp(z_ij) per head, and the backward rebuilds the weights P_ij = exp(z_ij - lse_i)
// one block of 16 query rows at a time from the inputs (as FlashAttention does, Dao et
// al. 2022), instead of keeping the (B*h,T,T) weights from the forward. Scratch is a few
// 16 x T blocks and a transposed T x width operand per thread. The backward formulas are
// those of the kept-weights paths (their headers), per row block:
//   multi-head: S = scale q k^T - slope (i - j), P = exp(S - lse), dP = dO v^T,
//     dS = P (dP - rowsum(P dP)), dq = scale dS k, dk += scale dS^T q, dv += P^T dO;
//   mean-head:  S = s X X^T, P^k = exp(beta_k S - slope_k (i - j) - lse^k), Abar = mean_k P^k,
//     dAbar = G X^T, dS = sum_k beta_k P^k (dAbar/h - rowsum(P^k dAbar/h)),
//     dX += Abar^T G + s (dS X + dS^T X),  dlog_beta_k = beta_k sum <dS^k, S>.
// Each costs one more score product than the kept path's backward.
// Used when the weights would be large (choose_recompute) or when asked (AttentionMemory).
#pragma once
#include <cstdint>
#include <vector>

namespace liegrad::kernels {

// Keep: the (B*h,T,T) weights from the forward; Recompute: this file's paths; Auto:
// Keep while T <= kKeepWeightsUpTo (the weights then cost at most as much as a few
// activations of width 256), Recompute above. Attention dropout always keeps (its mask
// is T x T anyway).
enum class AttentionMemory { Auto, Keep, Recompute };
inline constexpr int64_t kKeepWeightsUpTo = 256;
inline bool choose_recompute(AttentionMemory m, int64_t T) {
  return m == AttentionMemory::Recompute || (m == AttentionMemory::Auto && T > kKeepWeightsUpTo);
}

namespace recompute {

// Multi-head attention over qkv (B,T,3D) (heads of width e = D/h); lse (B*h,T).
template <class T>
struct MhaShape {
  int64_t B = 0, T_ = 0, D = 0, h = 0, e = 0;
  T scale = 1;
  const std::vector<T>* slopes = nullptr;  // h values or empty
};
// out (B,T,D); lse written.
template <class T>
void mha_forward(const MhaShape<T>& sh, const T* qkv, T* out, T* lse);
// Writes (fresh) or adds the gradient of qkv from G (B,T,D).
template <class T>
void mha_backward(const MhaShape<T>& sh, const T* qkv, const T* lse, const T* G, T* dqkv, bool fresh);

// Mean-head attention over X (B,T,D); lse (B,h,T).
template <class T>
struct MeanShape {
  int64_t B = 0, T_ = 0, D = 0, h = 0;
  const std::vector<T>* beta = nullptr;    // h values exp(log_beta)
  const std::vector<T>* slopes = nullptr;  // h values or empty
  T s = 1;
};
template <class T>
void mean_forward(const MeanShape<T>& sh, const T* X, T* out, T* lse);
// Adds the gradients of X (dX, may be null) and log_beta (dlog_beta (h), may be null) from G (B,T,D).
template <class T>
void mean_backward(const MeanShape<T>& sh, const T* X, const T* lse, const T* G, T* dX, T* dlog_beta);

}  // namespace recompute
}  // namespace liegrad::kernels
