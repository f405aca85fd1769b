// Head-averaged causal attention on one shared Gram matrix, as one fused op (the
// attention of OSMFormer, docs/models.md §5):
//
//   S_b    = s X_b X_b^T                                    X_b = X[b] (T,D), S_b (T,T)
//   P^k_b  = softmax_{j <= i}( beta_k S_b[i,j] - slope_k (i - j) ),  beta_k = exp(log_beta[k])
//   Abar_b = (1/h) sum_k P^k_b,       out_b = Abar_b X_b           (T,D)
//
// equal to gram -> causal_attention_scores -> softmax -> mean over heads -> matmul, but
// in one pass per batch row (OpenMP over b), computing only the causal half of every
// T x T product, with the backward written out:
//   dAbar = G X^T,  dX += Abar^T G,  dS^k = P^k .* (dAbar/h - rowsum(P^k .* dAbar/h)),
//   dS = sum_k beta_k dS^k (causal part),  dX += s (dS X + dS^T X) (two causal products),
//   dlog_beta_k = beta_k sum <dS^k, S>.
// The forward keeps S, Abar and every P^k. In float on AVX-512 the softmaxes run with a
// block of 16 queries in the lanes of a register (kernels/mean_attention_lanes.hpp),
// between the same products.
//
// Memory: for T > kKeepWeightsUpTo (or memory = Recompute) the op keeps only the
// per-head row log-normalisers (B,h,T) and rebuilds S, P^k and Abar block by block in the
// backward (kernels/attention_recompute.hpp), so its memory grows linearly in T; the
// kept path above (memory = Keep) is its reference.
#pragma once
#include <vector>

#include "autograd/var.hpp"
#include "kernels/attention_recompute.hpp"

namespace liegrad::kernels {

using ag::Var;

// X: any array of B*T rows of D (e.g. OSM states (B*T,n,n), D = n*n), read as (B,T,D);
// log_beta: (h); slopes: h fixed ALiBi slopes or empty. Returns an array of X's shape.
template <class T>
Var<T> mean_head_attention(const Var<T>& X, const Var<T>& log_beta, const std::vector<T>& slopes, T s, int64_t B,
                           int64_t T_, AttentionMemory memory = AttentionMemory::Auto);

}  // namespace liegrad::kernels
