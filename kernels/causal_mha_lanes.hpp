// Causal attention of one (batch row, head) with a block of 16 queries in the 16 lanes
// of an AVX-512 register: the float fast path of the fused attention (causal_mha.cpp)
// for heads up to 16 wide without dropout.
//
// The general path computes a block's scores as a 16 x (i0+16) product in memory and
// then softmaxes each row across the lanes: three passes, two horizontal folds and
// strided broadcasts of P per row (a quarter of the transformer's attention time,
// `perf` of 2026-12-06). Here a key j gives one register holding S[i0 .. i0+15, j], so
// the softmax's max and sum are lane-wise over registers and every product is E FMAs
// per key with its other operand broadcast from a contiguous row:
//
//   forward   S^T[j] = scale sum_c k[j,c] q^T[c] - slope (i - j),  m = max_j S^T[j],
//             e_j = exp(S^T[j] - m) (0 where j > i),  l = sum_j e_j,  o^T[c] = (sum_j v[j,c] e_j) / l;
//   backward  dP^T[j] = sum_c v[j,c] dO^T[c],  rho = sum_j P^T[j] dP^T[j]  (P = e / l),
//             dS^T[j] = P^T[j] (dP^T[j] - rho),  dq^T[c] = scale sum_j k[j,c] dS^T[j],
//             dv[j,:] += sum_r P[r,j] dO[r,:],  dk[j,:] += scale sum_r dS[r,j] q[r,:]
// (Vaswani et al. 2017 for attention; the unnormalised exponentials with a kept
// normaliser as in FlashAttention, Dao et al. 2022). Each (batch row, head) is one
// caller's work item, so its bits do not depend on the thread count.
#pragma once
#include <cstdint>

namespace liegrad::kernels::lanes {

// True when this build has the path (AVX-512) and e (the head width) is in 1..16.
bool available(int64_t e);

// Floats kept per (batch row, head) for T queries: the blocks' e_j (16 lanes per key,
// keys 0 .. i0+15 for the block at i0) and each block's 1 / l (16 lanes).
int64_t saved_floats(int64_t T);

// One head's operands: q, k, v rows of width e at row stride ld (qkv's 3D columns).
struct Head {
  int64_t T = 0, e = 0, ld = 0;
  const float *q = nullptr, *k = nullptr, *v = nullptr;
};

// Floats of the scratch forward and backward take (the caller's, one per thread).
int64_t scratch_floats(int64_t T);

// out (T x e, row stride ldo) = the head's attention; saved (saved_floats(T)) is written
// for backward.
void forward(const Head& h, float scale, float slope, float* saved, float* out, int64_t ldo, float* scratch);

// With dO (T x e, row stride ldo), writes or (fresh = false) adds the gradients of q, k
// and v at dq, dk, dv (row stride h.ld).
void backward(const Head& h, float scale, const float* saved, const float* dO, int64_t ldo, float* dq, float* dk,
              float* dv, bool fresh, float* scratch);

}  // namespace liegrad::kernels::lanes
