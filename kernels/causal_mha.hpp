// Causal multi-head self-attention with ALiBi as one fused op (the Transformer
// baseline's attention, docs/models.md §6):
//
//   qkv (B,T,3D) holds [q | k | v]; head k of D = h e uses columns k e .. (k+1) e - 1 of each;
//   S = scale q k^T - slope_k (i - j) for j <= i,  P = softmax_j(S),  o = P v;
//   out (B,T,D) with head k in columns k e .. (k+1) e - 1 (heads merged).
//
// Equal to slice -> split_heads -> matmul -> causal_attention_scores -> softmax ->
// matmul -> merge_heads, in one pass per (batch row, head) with OpenMP over those
// pairs, computing only the causal half of each T x T product. Backward:
//   dP = dO v^T, dv = P^T dO, dS = P .* (dP - rowsum(P .* dP)), dq = scale dS k, dk = scale dS^T q.
// The forward keeps P (B*h,T,T). In float without dropout, with heads up to 16 wide on
// AVX-512, each (batch row, head) runs kernels/causal_mha_lanes.hpp instead (a block of
// 16 queries in the lanes of a register; it keeps the causal half of the exponentials).
//
// Attention dropout (dropout > 0, training only): o = P~ v with P~ = P .* M / (1 - p),
// M_ij = 0 with probability p. The mask is drawn from rng exactly as ag::dropout would
// draw it for the (B*h,T,T) probabilities, one uniform per element in row-major order
// (above the diagonal too), so the op equals dropout(softmax(S), p, rng) followed by
// the product, and a model keeps its random stream whichever of the two it runs.
// Backward: dv = P~^T dO, dP = (dO v^T) .* M / (1 - p), then dS as above, its rowsum
// taken over P .* dP directly (equal to dO . o, as without dropout). The mask is kept
// as bytes.
//
// Memory: without dropout and for T > kKeepWeightsUpTo (or memory = Recompute) the op
// keeps only each row's log-normaliser (B*h,T) and rebuilds P block by block in the
// backward (kernels/attention_recompute.hpp), so its memory grows linearly in T; the
// kept-weights path above (memory = Keep) is its reference.
#pragma once
#include <vector>

#include "autograd/var.hpp"
#include "core/rng.hpp"
#include "kernels/attention_recompute.hpp"

namespace liegrad::kernels {

using ag::Var;

// qkv (B,T,3D) -> (B,T,D). dropout in [0, 1); rng is used (and must be given) only when dropout > 0.
template <class T>
Var<T> causal_self_attention(const Var<T>& qkv, int heads, const std::vector<T>& slopes, T scale,
                             double dropout = 0.0, Rng* rng = nullptr,
                             AttentionMemory memory = AttentionMemory::Auto);

}  // namespace liegrad::kernels
