// Thread control. liegrad parallelises with OpenMP over outer loops (tokens,
// batch rows, matrices of a batch, blocks of a large product). BLAS is only called
// from serial code and runs single-threaded (float products use liegrad's own kernel,
// core/small_gemm.hpp), so only one thread pool ever competes for the cores.
#pragma once
#include <cstdint>

namespace liegrad {

// Sets the thread count for OpenMP regions (called outside them); OpenBLAS gets 1.
void set_num_threads(int n);
int num_threads();
// True when called from inside an active OpenMP parallel region.
bool in_parallel_region();

// Work below which a thread is not worth waking. An OpenMP region costs microseconds
// on an idle machine but can cost a scheduler time slice (milliseconds) on a busy one,
// where a waiting worker has to be scheduled again; so only loops of about a
// millisecond or more go parallel:
//   kMinParallelWork:  memory-bound element operations per thread (~0.3-0.5 ms);
//   kMinParallelFlops: floating-point operations of a compute-bound kernel in total
//                      (products, exponentials; ~0.2 ms at liegrad's kernel speed).
inline constexpr int64_t kMinParallelWork = int64_t(1) << 19;
inline constexpr int64_t kMinParallelFlops = int64_t(1) << 24;

// The min_per_thread for parallel_for when each iteration costs `work` element operations.
inline int64_t grain_for(int64_t work) { return work >= kMinParallelWork ? 1 : kMinParallelWork / (work < 1 ? 1 : work); }
// The same for iterations that each touch one n x n matrix (element-wise group maps).
inline int64_t grain_for_matrices(int64_t n) { return grain_for(n * n); }
// The same for iterations of `flops` floating-point operations.
inline int64_t grain_for_flops(int64_t flops) {
  const int64_t per_thread = kMinParallelFlops / 2;
  return flops >= per_thread ? 1 : per_thread / (flops < 1 ? 1 : flops);
}

// Runs body(i) for i in [0, n), in parallel when there are at least
// 2 * min_per_thread iterations and we are not already inside a parallel region.
template <class F>
void parallel_for(int64_t n, int64_t min_per_thread, F&& body) {
#pragma omp parallel for schedule(static) if (n >= 2 * min_per_thread && !in_parallel_region())
  for (int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace liegrad
