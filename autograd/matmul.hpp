// Matrix products and transposes on the tape.
//
// matmul(a, b, trans_a, trans_b) computes op(a) @ op(b):
//   (M,K) @ (K,N)            -> (M,N)        2-D, one BLAS gemm
//   (B,M,K) @ (B,K,N)        -> (B,M,N)      batched (small-matrix kernel when every side <= 64)
//   (B,M,K) @ (K,N)          -> (B,M,N)      a shared right operand (e.g. a weight), as one gemm
// Transposition flags swap the last two axes of the corresponding operand.
#pragma once
#include "autograd/var.hpp"

namespace liegrad::ag {

template <class T>
Var<T> matmul(const Var<T>& a, const Var<T>& b, bool trans_a = false, bool trans_b = false);

// Swaps the last two axes: (M,N) -> (N,M), (B,M,N) -> (B,N,M).
template <class T>
Var<T> transpose(const Var<T>& x);

// Tape-free kernels. out (B,M,N) = op(a) @ op(b) with batch strides (0 = shared operand).
template <class T>
void matmul_forward(Array<T>& out, const Array<T>& a, const Array<T>& b, bool ta, bool tb);
// da += dout @ op(b)^T (arranged for ta), db += op(a)^T @ dout (arranged for tb); null skips.
template <class T>
void matmul_backward(Array<T>* da, Array<T>* db, const Array<T>& dout, const Array<T>& a, const Array<T>& b,
                     bool ta, bool tb);

}  // namespace liegrad::ag
