// The matrix exponential of a batch of square matrices and its exact reverse-mode
// derivative (pullback), tape-free kernels plus the tape op.
//
// Shapes: A, Q, G, dA are (N, n, n) row-major batches. Q = exp(A) per matrix.
// Pullback: with G = dL/dQ, dL/dA = L(A^T, G), the Frechet derivative of exp at
// A^T in direction G (Mathias 1996).
#pragma once
#include <cstdint>

#include "autograd/var.hpp"

namespace liegrad::groups {

// Q_b = exp(A_b) for b < N.
template <class T>
void expm_forward(int64_t N, int64_t n, const T* A, T* Q);

// Reference pullback: dA_b += top-right n x n block of exp([[A_b^T, G_b], [0, A_b^T]]).
template <class T>
void expm_pullback_block(int64_t N, int64_t n, const T* A, const T* G, T* dA);

// Default pullback (the faster route, verified against expm_pullback_block): dA_b += L(A_b^T, G_b).
template <class T>
void expm_pullback(int64_t N, int64_t n, const T* A, const T* G, T* dA);

// Tape op: exp of an (n,n) matrix or an (N,n,n) batch.
template <class T>
ag::Var<T> expm(const ag::Var<T>& A);

}  // namespace liegrad::groups
