// Matrix products on raw row-major buffers. float: gemm splits a large product into
// blocks of C over the OpenMP threads and runs each block serially, through OpenBLAS
// (single-threaded, so never a second thread pool) when every side of the block is at
// least kBlasMinSide, else through liegrad's register-blocked kernel
// (core/small_gemm.hpp), which is faster on the skinny and small shapes of the OSM
// models (docs/performance.md has the measurement); batched_gemm runs one matrix per
// iteration with OpenMP over the batch. double (gradient checks) uses CBLAS for gemm
// and plain loops for small matrices.
//
// Conventions: op(X) is X or X^T; C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C.
// lda/ldb/ldc are row strides of the stored (untransposed) matrices.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace liegrad {

// Which kernel runs a serial float block: Auto (the rule above; always small_gemm when
// OpenBLAS runs a fallback core narrower than the CPU, core/blas_core.hpp), Own (always
// small_gemm) or Blas (always OpenBLAS). The default comes from the environment variable
// LIEGRAD_GEMM = auto | own | blas, read once; `liegrad bench --op gemm` times each.
enum class GemmBackend { Auto, Own, Blas };
GemmBackend gemm_backend();
void set_gemm_backend(GemmBackend backend);
inline constexpr int64_t kBlasMinSide = 64;

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda,
          const T* B, int64_t ldb, T beta, T* C, int64_t ldc);

// Several independent products in one parallel region (float; double runs them in
// turn through gemm): e.g. a layer's two backward products dX = dY W^T and dW = X^T dY.
template <class T>
struct GemmCall {
  bool trans_a = false, trans_b = false;
  int64_t M = 0, N = 0, K = 0;
  T alpha = 1;
  const T* A = nullptr;
  int64_t lda = 0;
  const T* B = nullptr;
  int64_t ldb = 0;
  T beta = 0;
  T* C = nullptr;
  int64_t ldc = 0;
};
// `side`: jobs that run in the same parallel region as the products, each whole in one
// thread and before any block (e.g. a bias gradient's column sums beside the layer's two
// products, on a thread that would otherwise wait for the region to start). They must
// not read or write the products' outputs; serial parts inside them stay serial
// (in_parallel_region()).
template <class T>
void gemm_group(const std::vector<GemmCall<T>>& calls, const std::vector<std::function<void()>>& side = {});
template <>
void gemm_group<float>(const std::vector<GemmCall<float>>& calls, const std::vector<std::function<void()>>& side);
template <>
void gemm_group<double>(const std::vector<GemmCall<double>>& calls, const std::vector<std::function<void()>>& side);

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

// float runs the register-blocked kernel of core/small_gemm.hpp.
template <>
void small_gemm<float>(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                       const float* B, float beta, float* C);

// Largest side for which batched_gemm uses the small kernel.
inline constexpr int64_t kSmallGemmMaxSide = 64;

}  // namespace liegrad
