// LAPACKE wrappers (see lapack.hpp). Defining lapack_complex_* before lapacke.h makes
// it use std::complex (layout-compatible with Fortran COMPLEX*16), so no casts are needed.
#include "core/lapack.hpp"

#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>

#include <lapacke.h>

#include <string>
#include <type_traits>
#include <vector>

#include "core/errors.hpp"

namespace liegrad::lapack {

namespace {

void check(const char* routine, lapack_int info, int64_t m, int64_t n) {
  if (info != 0)
    throw NumericError(std::string("lapack: ") + routine + " failed on a " + std::to_string(m) + " x " +
                       std::to_string(n) + " matrix (info = " + std::to_string(info) + ")");
}

void require_tall(const char* op, int64_t m, int64_t n) {
  if (m < n || n < 0)
    throw ValueError(std::string("lapack: ") + op + " needs m >= n >= 0, got " + std::to_string(m) + " x " +
                     std::to_string(n));
}

}  // namespace

namespace {

// The Householder QR routines of one scalar type: ?geqrf, then ?orgqr (real) or ?ungqr (complex).
lapack_int geqrf(lapack_int M, lapack_int N, double* A, double* tau) {
  return LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, M, N, A, N, tau);
}
lapack_int geqrf(lapack_int M, lapack_int N, cplx* A, cplx* tau) {
  return LAPACKE_zgeqrf(LAPACK_ROW_MAJOR, M, N, A, N, tau);
}
lapack_int orgqr(lapack_int M, lapack_int N, double* A, const double* tau) {
  return LAPACKE_dorgqr(LAPACK_ROW_MAJOR, M, N, N, A, N, tau);
}
lapack_int orgqr(lapack_int M, lapack_int N, cplx* A, const cplx* tau) {
  return LAPACKE_zungqr(LAPACK_ROW_MAJOR, M, N, N, A, N, tau);
}

template <class S>
void qr_impl(int64_t m, int64_t n, S* A, S* r_diag) {
  constexpr bool real = std::is_same_v<S, double>;
  require_tall("qr", m, n);
  if (n == 0) return;
  std::vector<S> tau(static_cast<size_t>(n));
  const auto M = static_cast<lapack_int>(m), N = static_cast<lapack_int>(n);
  check(real ? "dgeqrf" : "zgeqrf", geqrf(M, N, A, tau.data()), m, n);
  for (int64_t i = 0; i < n; ++i) r_diag[i] = A[i * n + i];
  check(real ? "dorgqr" : "zungqr", orgqr(M, N, A, tau.data()), m, n);
}

}  // namespace

void qr(int64_t m, int64_t n, double* A, double* r_diag) { qr_impl(m, n, A, r_diag); }
void qr(int64_t m, int64_t n, cplx* A, cplx* r_diag) { qr_impl(m, n, A, r_diag); }

namespace {

// det = prod(diag(U)) * (-1)^(number of row swaps); a singular matrix has det 0.
template <class S, class F>
S lu_det(int64_t n, const S* A, const char* routine, F getrf) {
  if (n == 0) return S(1);
  std::vector<S> lu(A, A + n * n);
  std::vector<lapack_int> piv(static_cast<size_t>(n));
  const lapack_int info = getrf(static_cast<lapack_int>(n), lu.data(), piv.data());
  if (info < 0) check(routine, info, n, n);
  S d(1);
  for (int64_t i = 0; i < n; ++i) {
    d *= lu[static_cast<size_t>(i * n + i)];
    if (piv[static_cast<size_t>(i)] != static_cast<lapack_int>(i + 1)) d = -d;
  }
  return d;
}

}  // namespace

double det(int64_t n, const double* A) {
  return lu_det<double>(n, A, "dgetrf", [](lapack_int N, double* a, lapack_int* p) {
    return LAPACKE_dgetrf(LAPACK_ROW_MAJOR, N, N, a, N, p);
  });
}

cplx det(int64_t n, const cplx* A) {
  return lu_det<cplx>(n, A, "zgetrf", [](lapack_int N, cplx* a, lapack_int* p) {
    return LAPACKE_zgetrf(LAPACK_ROW_MAJOR, N, N, a, N, p);
  });
}

void schur(int64_t n, cplx* A, cplx* Z) {
  if (n == 0) return;
  const auto N = static_cast<lapack_int>(n);
  std::vector<cplx> w(static_cast<size_t>(n));
  lapack_int sdim = 0;
  check("zgees", LAPACKE_zgees(LAPACK_ROW_MAJOR, 'V', 'N', nullptr, N, A, N, &sdim, w.data(), Z, N), n, n);
}

void real_schur(int64_t n, double* A, double* Z) {
  if (n == 0) return;
  const auto N = static_cast<lapack_int>(n);
  std::vector<double> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n));
  lapack_int sdim = 0;
  check("dgees", LAPACKE_dgees(LAPACK_ROW_MAJOR, 'V', 'N', nullptr, N, A, N, &sdim, wr.data(), wi.data(), Z, N), n,
        n);
}

void solve(int64_t n, int64_t k, double* A, double* B) {
  if (n == 0 || k == 0) return;
  const auto N = static_cast<lapack_int>(n), K = static_cast<lapack_int>(k);
  std::vector<lapack_int> pivots(static_cast<size_t>(n));
  check("dgesv", LAPACKE_dgesv(LAPACK_ROW_MAJOR, N, K, A, N, pivots.data(), B, K), n, n);
}

void symmetric_eigen(int64_t n, double* A, double* w) {
  if (n == 0) return;
  const auto N = static_cast<lapack_int>(n);
  check("dsyev", LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', N, A, N, w), n, n);
}

}  // namespace liegrad::lapack
