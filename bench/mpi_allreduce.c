/* The gradient allreduce alone (docs/distributed.md): MPI_Allreduce (sum, in place) of
 * N floats, ITERS times after a barrier each, and rank 0 prints the median and minimum
 * time. Not part of the CMake build; build and run with Open MPI's wrappers:
 *   mpicc -O2 bench/mpi_allreduce.c -o /tmp/mpi_allreduce
 *   mpirun -np 2 --oversubscribe --bind-to none /tmp/mpi_allreduce 102100 200
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 3 || atoi(argv[1]) < 1 || atoi(argv[2]) < 1) {
    if (rank == 0) fprintf(stderr, "usage: mpi_allreduce N ITERS (N floats, ITERS >= 1)\n");
    MPI_Finalize();
    return 2;
  }
  const int n = atoi(argv[1]), iters = atoi(argv[2]);
  float* buf = calloc((size_t)n, sizeof(float));     /* (n) */
  double* t = malloc((size_t)iters * sizeof(double)); /* (iters) seconds */
  for (int i = 0; i < iters; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    t[i] = MPI_Wtime() - t0;
  }
  qsort(t, (size_t)iters, sizeof(double), by_value);
  if (rank == 0) printf("%d floats: median %.1f us, min %.1f us\n", n, 1e6 * t[iters / 2], 1e6 * t[0]);
  free(buf);
  free(t);
  MPI_Finalize();
  return 0;
}
