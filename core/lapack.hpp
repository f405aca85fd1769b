// Thin LAPACKE wrappers for the few dense factorisations liegrad needs outside
// the training hot path (Haar sampling, determinants, matrix logarithms).
// Matrices are row-major; complex matrices are std::complex<double> arrays.
// Every routine throws NumericError naming the LAPACK routine when info != 0.
//
// These call LAPACK, which may call a multithreaded BLAS: call them from serial
// code only, never inside an OpenMP region (core/parallel.hpp).
#pragma once
#include <complex>
#include <cstdint>

namespace liegrad::lapack {

using cplx = std::complex<double>;

// Householder QR of an m x n matrix (m >= n), in place: A <- Q (m x n, orthonormal
// columns) and r_diag <- the n diagonal entries of R (dgeqrf + dorgqr / zgeqrf + zungqr).
void qr(int64_t m, int64_t n, double* A, double* r_diag);
void qr(int64_t m, int64_t n, cplx* A, cplx* r_diag);

// Determinant of an n x n matrix by LU with partial pivoting (dgetrf / zgetrf);
// A is not modified. The determinant of a 0 x 0 matrix is 1.
double det(int64_t n, const double* A);
cplx det(int64_t n, const cplx* A);

// Complex Schur decomposition A = Z T Z* (zgees): A <- T (upper triangular, the
// eigenvalues on its diagonal), Z <- the unitary Schur vectors (n x n).
void schur(int64_t n, cplx* A, cplx* Z);

// Real Schur decomposition A = Z T Z^T (dgees): A <- T (quasi upper triangular: 1 x 1
// blocks for real eigenvalues, 2 x 2 blocks [[a, b], [c, a]] with b c < 0 for complex
// pairs), Z <- the orthogonal Schur vectors (n x n).
void real_schur(int64_t n, double* A, double* Z);

// Solves A X = B for X (n x k), A (n x n), B (n x k), by LU with partial pivoting
// (dgesv): B <- X; A is overwritten by its factors. NumericError for a singular A.
void solve(int64_t n, int64_t k, double* A, double* B);

// Eigendecomposition of a symmetric n x n matrix (dsyev): A <- the orthonormal
// eigenvectors as columns, w <- the n eigenvalues in ascending order.
void symmetric_eigen(int64_t n, double* A, double* w);

}  // namespace liegrad::lapack
