// The matrix exponential of a batch of square matrices and its exact reverse-mode
// derivative (pullback), tape-free kernels plus the tape op.
//
// Shapes: A, Q, G, dA are (N, n, n) row-major batches. Q = exp(A) per matrix.
// Pullback: with G = dL/dQ, dL/dA = L(A^T, G), the Frechet derivative of exp at
// A^T in direction G (Mathias 1996).
#pragma once
#include <cstdint>
#include <vector>

#include "autograd/gradcheck.hpp"
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

// The tape op keeps its forward matrix products (about (products - 1) n^2 per matrix,
// e.g. 3 n^2 at ||A||_1 ~ 1) so its backward costs 2 instead of 3 products per
// forward product; above this many bytes per call it recomputes them instead.
// Default 256 MiB; 0 turns caching off. Throws ValueError when negative.
void set_expm_cache_budget(int64_t bytes);

// check_vjp of the expm tape op in double at (3,3), (4,5,5) and (2,16,16), with inputs
// small enough for low Taylor degrees and large enough (norm ~5, ~30) to need squaring.
std::vector<ag::OpCheck> expm_op_checks();

// Median matrices per second of forward + pullback in float on N random skew-symmetric
// n x n matrices of Frobenius norm 1 (cotangents of Frobenius norm 1), over `repeats`
// timed runs after one warm-up, using the current thread count.
//   Fast:   expm_forward + expm_pullback (the kernels; forward recomputed in the pullback)
//   Cached: the expm tape op, forward then backward (which replays the forward's products)
//   Block:  expm_forward + expm_pullback_block
enum class ExpmRoute { Fast, Cached, Block };
double expm_throughput(int64_t n, int64_t N, int repeats, ExpmRoute route);
// The Fast route.
double expm_throughput(int64_t n, int64_t N, int repeats);

}  // namespace liegrad::groups
