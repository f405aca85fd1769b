// OpenMP and OpenBLAS thread-count plumbing.
#include "core/parallel.hpp"

#include <cblas.h>
#include <omp.h>

#include "core/errors.hpp"

namespace liegrad {

void set_num_threads(int n) {
  if (n < 1) throw ValueError("set_num_threads: thread count must be >= 1, got " + std::to_string(n));
  omp_set_num_threads(n);
  // liegrad's float products run its own kernels on the OpenMP threads (core/linalg);
  // BLAS, left for double precision and LAPACK, stays single-threaded so that two
  // thread pools never compete for the cores.
  openblas_set_num_threads(1);
}

int num_threads() { return omp_get_max_threads(); }

bool in_parallel_region() { return omp_in_parallel() != 0; }

}  // namespace liegrad
