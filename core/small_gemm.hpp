// A register-blocked single-precision product for small matrices, with row strides,
// for kernels that run many small products inside their own OpenMP loops (expm, the
// fused group updates, recurrent cells). Serial, allocation-free, thread-safe.
//
//   C (M x N, row stride ldc) = alpha * op(A) op(B) + beta * C
//   op(A) (M x K): A stored (M x K, lda) or, with ta, (K x M, lda) and transposed;
//   op(B) (K x N): B stored (K x N, ldb) or, with tb, (N x K, ldb) and transposed.
// beta == 0 overwrites C (NaNs in C do not leak through). Any sizes; it is fast when
// N <= 64 per column panel (one to four 16-float vectors per row of C), K up to a few
// hundred. With tb, op(B) is first transposed into a stack buffer (K*N <= 64 x 64 per
// panel). With AVX-512 (-march=native on a machine that has it) the micro-kernel keeps
// a block of C rows in zmm registers and broadcasts op(A) entries; without it, plain
// loops the compiler vectorises.
#pragma once
#include <cstdint>

namespace liegrad {

void sgemm_small(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// out (c x r, ldo) = in^T, in (r x c, ldi).
void transpose_small(int64_t r, int64_t c, const float* in, int64_t ldi, float* out, int64_t ldo);

// The kernel sgemm_small runs for dense n x n operands (lda = ldb = n, M = N = K = n,
// alpha != 0), looked up once, for callers that run many products of one size (the
// exponential's programs): C (n x n, ldc) = alpha op(A) op(B) + beta C, the same bits as
// through sgemm_small. Null where sgemm_small has no such kernel (n outside 8..24, or a
// build without AVX-512).
using DenseProductFn = void (*)(const float* A, const float* B, float* C, int64_t ldc, float alpha, float beta);
DenseProductFn dense_product_for(int64_t n, bool ta, bool tb);

// The same transpose for either scalar type: float runs transpose_small's register tiles,
// double a loop (double serves gradient checks).
template <class T>
void transpose_ld(int64_t r, int64_t c, const T* in, int64_t ldi, T* out, int64_t ldo);

// The same product for either scalar type: float runs sgemm_small, double plain loops
// (double serves gradient checks, where speed does not matter).
template <class T>
void small_gemm_ld(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                   int64_t ldb, T beta, T* C, int64_t ldc);

}  // namespace liegrad
