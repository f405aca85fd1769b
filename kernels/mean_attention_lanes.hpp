// The softmaxes of head-averaged attention (mean_attention.hpp) with a block of 16
// queries in the 16 lanes of an AVX-512 register: the float path of one batch row.
//
// mean_attention.cpp's general path softmaxes each row of each head across the lanes
// (two horizontal folds and a division per row and head, four passes over the row);
// `perf` of osmformer-identity put those rows at about a quarter of the attention's
// time (2026-12-06). Here the score block S[i0 .. i0+15, 0 .. i0+15] is transposed once into
// vectors S^T[j] (lane r = query i0 + r), and for each head k
//   z_j = beta_k S^T[j] - slope_k (i - j) (-inf for j > i),  P^k^T[j] = exp(z_j - max) / sum,
//   Abar^T[j] += P^k^T[j] / h,
// all lane-wise; Abar's block is transposed back into rows for the products. Backward:
//   dot = <P^k, dAbar> / h,  dS^k^T[j] = P^k^T[j] (dAbar^T[j] / h - dot),
//   dS^T[j] = sum_k beta_k dS^k^T[j],  <dS^k, S> accumulated lane-wise,
// and dS's block transposed back into rows. The products (S = s X X^T, out = Abar X and
// the backward's four) are the general path's small products on the same blocks.
#pragma once
#include <cstdint>

namespace liegrad::kernels::mean_lanes {

// True when this build has the path (AVX-512).
bool available();

// Floats of one T x T causal array in lane blocks (block b, queries 16 b .. 16 b + 15,
// holds keys 0 .. 16 b + 15 as 16-float vectors): S^T, or one head's P^T.
int64_t lane_floats(int64_t T);

// Floats of the scratch forward_row and backward_row take (the caller's, one per thread).
int64_t scratch_floats(int64_t T, int64_t D);

// One batch row: X (T,D) rows; beta (h) the heads' inverse temperatures, slopes (h) or
// nullptr; s the score scale.
struct Row {
  int64_t T = 0, D = 0, h = 0;
  const float* X = nullptr;
  const float* beta = nullptr;
  const float* slopes = nullptr;
  float s = 1;
};

// Writes St (lane_floats(T)), P (h x lane_floats(T)), the causal part of Abar (T x T
// rows; within each 16-row block the zeros above the diagonal too) and out (T x D).
void forward_row(const Row& r, float* St, float* P, float* Abar, float* out, float* scratch);

// From G (T x D), writes dS (T x T rows, causal part and the block zeros, as Abar) and
// adds <dS^k, S> to dot_s[k] (h; the caller multiplies by beta_k).
void backward_row(const Row& r, const float* St, const float* P, const float* G, float* dS, double* dot_s,
                  float* scratch);

}  // namespace liegrad::kernels::mean_lanes
