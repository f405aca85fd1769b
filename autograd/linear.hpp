// Fused dense layers: the product and its bias (and GELU) in one op instead of a
// matmul, a broadcast add and an activation, each a pass over the output.
//
//   linear:          y = x W + b
//   linear_residual: y = r + x W + b    (a residual branch's last layer and its add)
//   linear_gelu:     y = gelu(x W + b)  (exact GELU, x Phi(x))
// x: (..., K) with R rows; W: (K, N); b: (N) or an undefined Var (no bias); r and y: (..., N).
// Backward: dpre = dy (linear, linear_residual, which also adds dy to dr) or
//   dy gelu'(pre) (linear_gelu: its forward takes GELU and gelu' in one pass over each
//   block of rows while the block's product is in cache, and keeps gelu'),
//   dx += dpre W^T, dW += x^T dpre, db += column sums of dpre.
#pragma once
#include "autograd/var.hpp"

namespace liegrad::ag {

template <class T>
Var<T> linear(const Var<T>& x, const Var<T>& W, const Var<T>& b);
template <class T>
Var<T> linear_residual(const Var<T>& x, const Var<T>& W, const Var<T>& b, const Var<T>& r);
template <class T>
Var<T> linear_gelu(const Var<T>& x, const Var<T>& W, const Var<T>& b);

}  // namespace liegrad::ag
