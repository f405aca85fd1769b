// Causal attention scores with a per-head scale and an additive ALiBi bias.
//
//   out[b*h + k, i, j] = scale[k] * S[src, i, j] - slope[k] * (i - j)   for j <= i
//                      = -inf                                           for j >  i
// where S is either (B, T, T), shared by all h heads (src = b; OSMFormer's
// Re tr(H_i* H_j) is one Gram matrix for all heads), or (B*h, T, T), one per head
// (src = b*h + k; a Transformer's Q K^T). scale is a Var of shape (h) (a learned
// beta, or a constant 1/sqrt(d_head)); slopes are fixed (empty = no bias).
// ALiBi: Press, Smith, Lewis 2022, "Train Short, Test Long", slopes 2^(-8k/h).
// Follow with softmax over rows; masked entries get probability 0.
#pragma once
#include <vector>

#include "autograd/var.hpp"

namespace liegrad::ag {

// per_head = false: S is (B,T,T) shared by the heads; true: S is (B*h,T,T).
template <class T>
Var<T> causal_attention_scores(const Var<T>& S, const Var<T>& scale, const std::vector<T>& slopes, int heads,
                               bool per_head);

// (B,T,h*e) -> (B*h,T,e): head k of batch row b becomes matrix b*h + k.
template <class T>
Var<T> split_heads(const Var<T>& x, int heads);
// (B*h,T,e) -> (B,T,h*e), the inverse of split_heads.
template <class T>
Var<T> merge_heads(const Var<T>& x, int heads);

// The standard ALiBi slopes for h heads: slope_k = 2^(-8 (k+1) / h), k = 0..h-1.
std::vector<double> alibi_slopes(int heads);

}  // namespace liegrad::ag
