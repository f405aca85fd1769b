// Causal multi-head self-attention with ALiBi as one fused op (the Transformer
// baseline's attention, spec §6):
//
//   qkv (B,T,3D) holds [q | k | v]; head k of D = h e uses columns k e .. (k+1) e - 1 of each;
//   S = scale q k^T - slope_k (i - j) for j <= i,  P = softmax_j(S),  o = P v;
//   out (B,T,D) with head k in columns k e .. (k+1) e - 1 (heads merged).
//
// Equal to slice -> split_heads -> matmul -> causal_attention_scores -> softmax ->
// matmul -> merge_heads, in one pass per (batch row, head) with OpenMP over those
// pairs, computing only the causal half of each T x T product. Backward:
//   dP = dO v^T, dv = P^T dO, dS = P .* (dP - rowsum(P .* dP)), dq = scale dS k, dk = scale dS^T q.
// The forward keeps P (B*h,T,T).
#pragma once
#include <vector>

#include "autograd/var.hpp"

namespace liegrad::kernels {

using ag::Var;

template <class T>
Var<T> causal_self_attention(const Var<T>& qkv, int heads, const std::vector<T>& slopes, T scale);

}  // namespace liegrad::kernels
