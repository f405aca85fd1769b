// The expRNN recurrence over a window as a single fused tape op (Lezcano-Casado &
// Martínez-Rubio 2019, "Cheap orthogonal constraints in neural networks", eq. (1)):
//
//   z_t = h_{t-1} Q^T + x_t                      x (B,T,h) = U e_{x_t}, precomputed
//   h_t = modrelu(z_t, b) = sign(z_t) max(|z_t| + b, 0)     (Arjovsky et al. 2016)
//
// with Q = exp(A) orthogonal, formed once per window by the caller. Lanes (batch rows)
// split over the OpenMP threads, one parallel region for the window forward and one
// backward, instead of five tape ops per step over the batch (matmul, add, slice,
// modrelu, reshape) and their per-step allocations; within a thread the lanes advance in
// lockstep, so the recurrence is one (lanes x h) by (h x h) product per step. Backward
// through time, per step:
//   dz_t = (dh_t + dL/dh_t) [|z_t| + b > 0],   db += sign(z_t) dz_t,   dx_t = dz_t,
//   dh_{t-1} = dz_t Q;
// then, over the whole window at once, dQ += sum_t dz_t^T h_{t-1} as one (h x BT) by
// (BT x h) product (the dz_t are x's gradient, kept anyway), as lstm_scan does for W_hh.
#pragma once

#include "autograd/var.hpp"

namespace liegrad::kernels {

using ag::Var;

// x (B,T,h), Q (h,h), b (h), h0 (B,h). Returns the hidden states (B,T,h).
template <class T>
Var<T> exprnn_scan(const Var<T>& x, const Var<T>& Q, const Var<T>& b, const Var<T>& h0);

}  // namespace liegrad::kernels
