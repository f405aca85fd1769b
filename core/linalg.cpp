// gemm via CBLAS; small_gemm as loop nests ordered so the innermost loop runs over
// contiguous memory (the compiler vectorises it); batched_gemm picks between them.
#include "core/linalg.hpp"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "core/parallel.hpp"

namespace liegrad {

template <>
void gemm<float>(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(M), int(N), int(K),
              alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
}

template <>
void gemm<double>(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
                  const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(M), int(N), int(K),
              alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
}

template <class T>
void small_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, const T* B, T beta, T* C) {
  // Scale C by beta first (beta == 0 overwrites, so NaNs in C do not leak through).
  if (beta == T(0))
    std::fill(C, C + M * N, T(0));
  else if (beta != T(1))
    for (int64_t i = 0; i < M * N; ++i) C[i] *= beta;
  if (!ta && !tb) {  // C[i,:] += alpha * A[i,k] * B[k,:]
    for (int64_t i = 0; i < M; ++i) {
      T* c = C + i * N;
      for (int64_t k = 0; k < K; ++k) {
        const T a = alpha * A[i * K + k];
        const T* b = B + k * N;
        for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
      }
    }
  } else if (!ta && tb) {  // C[i,j] += alpha * dot(A[i,:], B[j,:])
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const T* a = A + i * K;
        const T* b = B + j * K;
        T s = 0;
        for (int64_t k = 0; k < K; ++k) s += a[k] * b[k];
        C[i * N + j] += alpha * s;
      }
  } else if (ta && !tb) {  // C[i,:] += alpha * A[k,i] * B[k,:]
    for (int64_t k = 0; k < K; ++k) {
      const T* b = B + k * N;
      for (int64_t i = 0; i < M; ++i) {
        const T a = alpha * A[k * M + i];
        T* c = C + i * N;
        for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
      }
    }
  } else {  // C[i,j] += alpha * sum_k A[k,i] * B[j,k]
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        T s = 0;
        for (int64_t k = 0; k < K; ++k) s += A[k * M + i] * B[j * K + k];
        C[i * N + j] += alpha * s;
      }
  }
}

template <class T>
void batched_gemm(int64_t batch, bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
                  int64_t stride_a, const T* B, int64_t stride_b, T beta, T* C, int64_t stride_c) {
  const bool small = M <= kSmallGemmMaxSide && N <= kSmallGemmMaxSide && K <= kSmallGemmMaxSide;
  if (small) {
    parallel_for(batch, 4, [&](int64_t b) {
      small_gemm(ta, tb, M, N, K, alpha, A + b * stride_a, B + b * stride_b, beta, C + b * stride_c);
    });
    return;
  }
  const int64_t lda = ta ? M : K, ldb = tb ? K : N;
  for (int64_t b = 0; b < batch; ++b)  // serial: each gemm may use BLAS threads
    gemm(ta, tb, M, N, K, alpha, A + b * stride_a, lda, B + b * stride_b, ldb, beta, C + b * stride_c, N);
}

template void small_gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, const float*, float,
                                float*);
template void small_gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, const double*,
                                 double, double*);
template void batched_gemm<float>(int64_t, bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t,
                                  const float*, int64_t, float, float*, int64_t);
template void batched_gemm<double>(int64_t, bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t,
                                   const double*, int64_t, double, double*, int64_t);

}  // namespace liegrad
