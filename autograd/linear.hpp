// Fused dense layers: the product and its bias (and GELU) in one op instead of a
// matmul, a broadcast add and an activation, each a pass over the output.
//
//   linear:      y = x W + b
//   linear_gelu: y = gelu(x W + b)      (exact GELU, x Phi(x))
// x: (..., K) with R rows; W: (K, N); b: (N) or an undefined Var (no bias); y: (..., N).
// Backward: dpre = dy (linear) or dy gelu'(pre) (saved pre-activation),
//   dx += dpre W^T, dW += x^T dpre, db += column sums of dpre.
#pragma once
#include "autograd/var.hpp"

namespace liegrad::ag {

template <class T>
Var<T> linear(const Var<T>& x, const Var<T>& W, const Var<T>& b);
template <class T>
Var<T> linear_gelu(const Var<T>& x, const Var<T>& W, const Var<T>& b);

}  // namespace liegrad::ag
