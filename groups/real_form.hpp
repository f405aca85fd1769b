// The real form of complex matrices and the u(d) kernels shared by U(d), SU(d), T(d)
// and complexified real factors of products.
//
// Real form of a complex d x d matrix Z = X + iY (stored 2d x 2d, row stride ld):
//     R = [[X, -Y], [Y, X]],   i.e. R[i][j] = R[d+i][d+j] = X_ij, R[d+i][j] = -R[i][d+j] = Y_ij.
// The real forms are a subspace C of the real 2d x 2d matrices. Its orthogonal projection
// under <M, N> = tr(M^T N) minimises ||M11 - X||^2 + ||M22 - X||^2 + ||M12 + Y||^2 + ||M21 - Y||^2:
//     Pi_C(M):  X = (M11 + M22) / 2,  Y = (M21 - M12) / 2.
// On C the real inner product is twice Re tr(Z* W), so within C "orthogonal" means the same
// under both, and Pi_C commutes with transposition (an isometry mapping C onto C).
//
// Projection onto the real form of u(d) = {Z : Z* = -Z} = {R in C : R^T = -R}: it is the
// intersection of C with the skew-symmetric matrices, and the two orthogonal projections
// Pi_C and Pi_skew(M) = (M - M^T)/2 commute, so their product is the orthogonal projection
// onto the intersection (self-adjoint and idempotent under the real trace inner product,
// which is what autograd sees):
//     X = (S - S^T) / 2 with S = (M11 + M22) / 2,   Y = (K + K^T) / 2 with K = (M21 - M12) / 2.
// On a real form (M in C) this is the complex skew-Hermitian part (Z - Z*)/2 of the spec.
//
// u(d) coordinates (complex-isometric, ||hat(u)||_c = ||u||), for A = X + iY in u(d):
//     diagonal:  y_j = Y_jj = Im A_jj                     (d values)
//     real:      sqrt(2) X_ij for i < j, row-major        (d(d-1)/2 values; the so(d) coordinates)
//     imaginary: sqrt(2) Y_ij for i < j, row-major        (d(d-1)/2 values)
// The readers below take any 2d x 2d M and return the coordinates of Pi_u(M) (vee = hat^T / 2).
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>

namespace liegrad::groups::real_form {

using cplx = std::complex<double>;

inline constexpr double kSqrt2 = 1.41421356237309504880;
inline constexpr double kInvSqrt2 = 0.70710678118654752440;

// Writes the complex entry (x + iy) at (i, j) of a real form of half-side d.
template <class T>
inline void put(T* R, int64_t ld, int64_t d, int64_t i, int64_t j, T x, T y) {
  R[i * ld + j] = x;
  R[(d + i) * ld + d + j] = x;
  R[(d + i) * ld + j] = y;
  R[i * ld + d + j] = -y;
}

// Zeroes an r x r block with row stride ld.
template <class T>
inline void zero_block(T* R, int64_t ld, int64_t r) {
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < r; ++j) R[i * ld + j] = T(0);
}

// Z = Pi_C(R) as a complex d x d matrix (row-major, dense).
inline void to_complex(int64_t d, const double* R, int64_t ld, cplx* Z) {
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) {
      const double x = 0.5 * (R[i * ld + j] + R[(d + i) * ld + d + j]);
      const double y = 0.5 * (R[(d + i) * ld + j] - R[i * ld + d + j]);
      Z[i * d + j] = cplx(x, y);
    }
}

// R = real form of the complex d x d matrix Z.
inline void from_complex(int64_t d, const cplx* Z, double* R, int64_t ld) {
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) put(R, ld, d, i, j, Z[i * d + j].real(), Z[i * d + j].imag());
}

// Real Frobenius distance of M from C: ||M - Pi_C(M)||^2 = (||M11 - M22||^2 + ||M12 + M21||^2) / 2.
// M <- Pi_C(M) in place: X = (M11 + M22) / 2, Y = (M21 - M12) / 2 (head comment).
template <class T>
inline void project_c_inplace(int64_t d, T* M, int64_t ld) {
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) {
      const T x = T(0.5) * (M[i * ld + j] + M[(d + i) * ld + d + j]);
      const T y = T(0.5) * (M[(d + i) * ld + j] - M[i * ld + d + j]);
      put(M, ld, d, i, j, x, y);
    }
}

inline double distance_from_c(int64_t d, const double* M, int64_t ld) {
  double s = 0;
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) {
      const double a = M[i * ld + j] - M[(d + i) * ld + d + j];
      const double b = M[i * ld + d + j] + M[(d + i) * ld + j];
      s += a * a + b * b;
    }
  return std::sqrt(0.5 * s);
}

// out = Pi_u(M) (formula in the head comment); every entry of the 2d x 2d block is written.
template <class T>
void project_u(int64_t d, const T* M, int64_t ldm, T* out, int64_t ldo) {
  auto m = [&](int64_t i, int64_t j) { return M[i * ldm + j]; };
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = i; j < d; ++j) {
      const T x = (m(i, j) + m(d + i, d + j) - m(j, i) - m(d + j, d + i)) / T(4);
      const T y = (m(d + i, j) - m(i, d + j) + m(d + j, i) - m(j, d + i)) / T(4);
      put(out, ldo, d, i, j, x, y);
      if (j != i) put(out, ldo, d, j, i, T(-x), y);
    }
}

// The diagonal imaginary parts y_j = Y_jj of Pi_u(M).
template <class T>
inline T diag_imag(int64_t d, const T* M, int64_t ldm, int64_t j) {
  return (M[(d + j) * ldm + j] - M[j * ldm + d + j]) / T(2);
}

// Writes the off-diagonal entries (i != j) of hat(u) from the real and imaginary
// coordinate runs (d(d-1)/2 each); the diagonal is left to the caller.
template <class T>
void hat_u_offdiag(int64_t d, const T* u_re, const T* u_im, T* out, int64_t ldo) {
  const T c = static_cast<T>(kInvSqrt2);
  int64_t p = 0;
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = i + 1; j < d; ++j, ++p) {
      const T x = c * u_re[p], y = c * u_im[p];
      put(out, ldo, d, i, j, x, y);
      put(out, ldo, d, j, i, T(-x), y);
    }
}

// Reads the real and imaginary coordinate runs of Pi_u(M).
template <class T>
void vee_u_offdiag(int64_t d, const T* M, int64_t ldm, T* u_re, T* u_im) {
  auto m = [&](int64_t i, int64_t j) { return M[i * ldm + j]; };
  const T c = static_cast<T>(kSqrt2 / 4);
  int64_t p = 0;
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = i + 1; j < d; ++j, ++p) {
      u_re[p] = c * (m(i, j) + m(d + i, d + j) - m(j, i) - m(d + j, d + i));
      u_im[p] = c * (m(d + i, j) - m(i, d + j) + m(d + j, i) - m(j, d + i));
    }
}

}  // namespace liegrad::groups::real_form
