// Thread control. liegrad parallelises with OpenMP over outer loops (tokens,
// batch rows, matrices of a batch). BLAS is only called from serial code, so a
// multithreaded BLAS never runs inside an OpenMP region (no oversubscription).
#pragma once
#include <cstdint>

namespace liegrad {

// Sets the thread count for OpenMP regions and for OpenBLAS (called outside them).
void set_num_threads(int n);
int num_threads();
// True when called from inside an active OpenMP parallel region.
bool in_parallel_region();

// Runs body(i) for i in [0, n), in parallel when there are at least
// 2 * min_per_thread iterations and we are not already inside a parallel region.
template <class F>
void parallel_for(int64_t n, int64_t min_per_thread, F&& body) {
#pragma omp parallel for schedule(static) if (n >= 2 * min_per_thread && !in_parallel_region())
  for (int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace liegrad
