// Products. float: large products split over the OpenMP threads in blocks of C (gemm,
// gemm_group), each block run by single-threaded OpenBLAS when all its sides are large
// (and OpenBLAS runs kernels as wide as the CPU's, core/blas_core.hpp) and by
// core/small_gemm's register-blocked kernel otherwise; batches run one matrix per
// iteration (batched_gemm). double (gradient checks): CBLAS for gemm, loop nests
// ordered so the innermost loop runs over contiguous memory for small_gemm.
#include "core/linalg.hpp"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "core/blas_core.hpp"
#include "core/parallel.hpp"
#include "core/small_gemm.hpp"

namespace liegrad {

namespace {

// Whether blocks with every side >= kBlasMinSide go to OpenBLAS: always with the Blas
// backend; with Auto only when OpenBLAS's kernels are as wide as the CPU's (a fallback
// core such as Prescott on an AVX-512 CPU is slower than liegrad's kernel even on large
// square products: docs/performance.md).
bool large_blocks_through_blas() {
  const GemmBackend backend = gemm_backend();
  return backend == GemmBackend::Blas || (backend == GemmBackend::Auto && !openblas_core().below_cpu());
}

// One block of a float product: rows [lo, hi) of C, or columns [lo, hi) when by_rows is false.
struct Block {
  const GemmCall<float>* call;
  bool by_rows;
  int64_t lo, hi;
};

// Splits a product into blocks of about 1 MFLOP (rows in multiples of 16, or columns in
// multiples of 64 when there are few rows), at most 8 per thread. A product whose row
// blocks will run through OpenBLAS gets two blocks per thread instead: each OpenBLAS call
// packs its operands, so fewer, larger blocks amortise that. A product with every side
// at least kBlasMinSide but too few rows for such row blocks (a weight gradient X^T dY:
// M and N the layer's widths, K the batch's rows) stays with OpenBLAS: blocks of at
// least 64 columns, or the whole product as one block when N < 128. Cut into 16-row
// blocks for liegrad's kernel instead, each block would stream all K rows of B again
// (measured on the transformer's 64 x 192 x 4096 gradients: docs/performance.md). One
// block only when other products of the group (`shared`) keep the other threads busy.
void split(const GemmCall<float>& c, int threads, bool shared, std::vector<Block>& out) {
  const double flops = 2.0 * static_cast<double>(c.M) * static_cast<double>(c.N) * static_cast<double>(c.K);
  if (c.M < 2 * threads * kBlasMinSide && c.M >= kBlasMinSide && c.N >= (shared ? 1 : 2) * kBlasMinSide &&
      c.K >= kBlasMinSide && large_blocks_through_blas()) {
    const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(2 * threads, c.N / kBlasMinSide));
    const int64_t step = c.N / blocks / 16 * 16;  // blocks >= 64 columns, the last one takes the rest
    for (int64_t b = 0; b < blocks; ++b) out.push_back({&c, false, b * step, b + 1 == blocks ? c.N : (b + 1) * step});
    return;
  }
  const bool by_rows = c.M >= 16 * threads;
  const int64_t len = by_rows ? c.M : c.N;
  const int64_t unit = by_rows ? 16 : 64;
  const bool blas_rows = by_rows && large_blocks_through_blas() && c.N >= kBlasMinSide &&
                         c.K >= kBlasMinSide && c.M >= 2 * threads * kBlasMinSide;
  const int64_t want = blas_rows ? 2 * threads : std::max<int64_t>(1, static_cast<int64_t>(flops / 2e6));
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>({want, (len + unit - 1) / unit, 8 * threads}));
  const int64_t step = ((len + blocks - 1) / blocks + unit - 1) / unit * unit;
  for (int64_t lo = 0; lo < len; lo += step) out.push_back({&c, by_rows, lo, std::min(len, lo + step)});
}

// One serial float product: OpenBLAS's packed kernel (single-threaded, in the calling
// thread) when every side is at least kBlasMinSide and large_blocks_through_blas(), else
// liegrad's register-blocked kernel, which wins on skinny and small shapes (one side of
// 16 or a short inner size: no packing to amortise).
void serial_product(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                    const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  const GemmBackend backend = gemm_backend();
  const bool blas = backend == GemmBackend::Blas ||
                    (M >= kBlasMinSide && N >= kBlasMinSide && K >= kBlasMinSide && large_blocks_through_blas());
  if (blas)
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(M), int(N), int(K),
                alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
  else
    sgemm_small(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void run_block(const Block& b) {
  const GemmCall<float>& c = *b.call;
  const int64_t n = b.hi - b.lo;
  if (b.by_rows)
    serial_product(c.trans_a, c.trans_b, n, c.N, c.K, c.alpha, c.trans_a ? c.A + b.lo : c.A + b.lo * c.lda, c.lda,
                   c.B, c.ldb, c.beta, c.C + b.lo * c.ldc, c.ldc);
  else
    serial_product(c.trans_a, c.trans_b, c.M, n, c.K, c.alpha, c.A, c.lda, c.trans_b ? c.B + b.lo * c.ldb : c.B + b.lo,
                   c.ldb, c.beta, c.C + b.lo, c.ldc);
}

double flops_of(const Block& b) {
  const GemmCall<float>& c = *b.call;
  return static_cast<double>(b.hi - b.lo) * static_cast<double>(b.by_rows ? c.N : c.M) * static_cast<double>(c.K);
}

std::atomic<int> g_backend{-1};  // -1: not read from LIEGRAD_GEMM yet

}  // namespace

GemmBackend gemm_backend() {
  int b = g_backend.load(std::memory_order_relaxed);
  if (b < 0) {
    const char* env = std::getenv("LIEGRAD_GEMM");
    const std::string v = env ? env : "auto";
    b = static_cast<int>(v == "own" ? GemmBackend::Own : v == "blas" ? GemmBackend::Blas : GemmBackend::Auto);
    g_backend.store(b, std::memory_order_relaxed);
  }
  return static_cast<GemmBackend>(b);
}

void set_gemm_backend(GemmBackend backend) { g_backend.store(static_cast<int>(backend), std::memory_order_relaxed); }

// float: blocks of C split over the OpenMP threads, each block one serial product
// over OpenMP threads in blocks of C when there is enough work, so one thread pool runs
// everything (OpenBLAS stays single-threaded; see parallel.hpp).
template <>
void gemm_group<float>(const std::vector<GemmCall<float>>& calls, const std::vector<std::function<void()>>& side) {
  double flops = 0;
  for (const auto& c : calls) flops += 2.0 * static_cast<double>(c.M) * static_cast<double>(c.N) * static_cast<double>(c.K);
  const int threads = num_threads();
  if (threads < 2 || flops < static_cast<double>(kMinParallelFlops) || in_parallel_region()) {
    for (const auto& c : calls)
      if (c.M > 0 && c.N > 0) serial_product(c.trans_a, c.trans_b, c.M, c.N, c.K, c.alpha, c.A, c.lda, c.B, c.ldb, c.beta, c.C, c.ldc);
    for (const auto& job : side) job();
    return;
  }
  std::vector<Block> blocks;
  for (const auto& c : calls)
    if (c.M > 0 && c.N > 0) split(c, threads, calls.size() > 1, blocks);
  // Largest blocks first, so a long one (a weight gradient through OpenBLAS) does not
  // start last while the other threads idle. The order changes no result.
  std::stable_sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) { return flops_of(a) > flops_of(b); });
  const int64_t jobs = static_cast<int64_t>(side.size()), count = jobs + static_cast<int64_t>(blocks.size());
#pragma omp parallel for schedule(dynamic, 1) if (count > 1)
  for (int64_t i = 0; i < count; ++i) {
    if (i < jobs)
      side[static_cast<size_t>(i)]();
    else
      run_block(blocks[static_cast<size_t>(i - jobs)]);
  }
}

template <>
void gemm<float>(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  gemm_group<float>({GemmCall<float>{ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc}});
}

template <>
void gemm<double>(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
                  const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(M), int(N), int(K),
              alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
}

template <>
void gemm_group<double>(const std::vector<GemmCall<double>>& calls, const std::vector<std::function<void()>>& side) {
  for (const auto& c : calls)
    gemm<double>(c.trans_a, c.trans_b, c.M, c.N, c.K, c.alpha, c.A, c.lda, c.B, c.ldb, c.beta, c.C, c.ldc);
  for (const auto& job : side) job();
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

// float: the register-blocked kernel of core/small_gemm.hpp.
template <>
void small_gemm<float>(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, const float* B,
                       float beta, float* C) {
  sgemm_small(ta, tb, M, N, K, alpha, A, ta ? M : K, B, tb ? K : N, beta, C, N);
}

template <class T>
void batched_gemm(int64_t batch, bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
                  int64_t stride_a, const T* B, int64_t stride_b, T beta, T* C, int64_t stride_c) {
  const int64_t lda = ta ? M : K, ldb = tb ? K : N;
  if constexpr (std::is_same_v<T, float>) {
    // Any size: the small kernel per matrix, OpenMP over the batch (one matrix: gemm splits it).
    if (batch == 1) {
      gemm<float>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, N);
      return;
    }
    parallel_for(batch, grain_for_flops(2 * M * N * K), [&](int64_t b) {
      sgemm_small(ta, tb, M, N, K, alpha, A + b * stride_a, lda, B + b * stride_b, ldb, beta, C + b * stride_c, N);
    });
    return;
  }
  const bool small = M <= kSmallGemmMaxSide && N <= kSmallGemmMaxSide && K <= kSmallGemmMaxSide;
  if (small) {
    parallel_for(batch, grain_for_flops(2 * M * N * K), [&](int64_t b) {
      small_gemm(ta, tb, M, N, K, alpha, A + b * stride_a, B + b * stride_b, beta, C + b * stride_c);
    });
    return;
  }
  for (int64_t b = 0; b < batch; ++b)  // serial: BLAS is never called inside a parallel region
    gemm(ta, tb, M, N, K, alpha, A + b * stride_a, lda, B + b * stride_b, ldb, beta, C + b * stride_c, N);
}

template void small_gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, const double*,
                                 double, double*);
template void batched_gemm<float>(int64_t, bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t,
                                  const float*, int64_t, float, float*, int64_t);
template void batched_gemm<double>(int64_t, bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t,
                                   const double*, int64_t, double, double*, int64_t);

}  // namespace liegrad
