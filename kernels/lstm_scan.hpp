// One LSTM layer over a window as a single fused tape op (gates ordered i, f, g, o):
//
//   a_t = xw_t + h_{t-1} W_hh                      xw (B,T,4h) = x W_ih + b, precomputed
//   i, f, o = sigmoid(a_i, a_f, a_o),  g = tanh(a_g)
//   c_t = f c_{t-1} + i g,  h_t = o tanh(c_t)
//
// Lanes (batch rows) split over the OpenMP threads, one parallel region for the
// window forward and one backward (instead of ~12 tape ops per step over the batch);
// within a thread the lanes advance in lockstep, so the recurrence is one
// (lanes x h) by (h x 4h) product per step. Backward through time, per step:
//   dc = dc_next + dh o (1 - tanh(c)^2),  da = [dc g i(1-i), dc c_{t-1} f(1-f),
//   dc i (1-g^2), dh tanh(c) o(1-o)],  dxw_t = da,  dh_{t-1} = da W_hh^T,
//   dc_{t-1} = dc f;  then, over the whole window at once, dW_hh += sum_t h_{t-1}^T da_t
//   as one (h x BT) by (BT x 4h) product (the da_t are xw's gradient, kept anyway).
#pragma once
#include <vector>

#include "autograd/var.hpp"

namespace liegrad::kernels {

using ag::Var;

// xw (B,T,4h), w_hh (h,4h), h0 and c0 (B,h). Returns the hidden states (B,T,h); the
// final cell states (B,h) are written to *c_last when it is not null.
template <class T>
Var<T> lstm_scan(const Var<T>& xw, const Var<T>& w_hh, const Var<T>& h0, const Var<T>& c0, Array<T>* c_last);

}  // namespace liegrad::kernels
