// Matrix products on raw row-major buffers: a thin cblas_?gemm wrapper for large
// products, and a batched product for many small matrices (every side <= 64) that
// runs a hand-written kernel per matrix with OpenMP over the batch instead of
// paying one BLAS call per matrix.
//
// Conventions: op(X) is X or X^T; C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C.
// lda/ldb/ldc are row strides of the stored (untransposed) matrices.
#pragma once
#include <cstdint>

namespace liegrad {

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda,
          const T* B, int64_t ldb, T beta, T* C, int64_t ldc);

// For b in [0, batch): C_b = alpha * op(A_b) * op(B_b) + beta * C_b, where
// X_b = X + b * stride_x. A stride of 0 broadcasts one matrix over the batch
// (stride_c must not be 0 when batch > 1). Matrices are densely stored.
template <class T>
void batched_gemm(int64_t batch, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha,
                  const T* A, int64_t stride_a, const T* B, int64_t stride_b, T beta, T* C, int64_t stride_c);

// The hand-written kernel used by batched_gemm for one small product; exposed for
// kernels that already run inside their own parallel loop.
template <class T>
void small_gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A, const T* B,
                T beta, T* C);

// Largest side for which batched_gemm uses the small kernel.
inline constexpr int64_t kSmallGemmMaxSide = 64;

}  // namespace liegrad
