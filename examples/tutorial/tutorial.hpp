// What the tutorial programs share (docs/tutorial/): the labelled check lines they print
// and a few plain matrix helpers that compute a formula "by hand", without the tape, so
// a program can compare it with what liegrad's tape or kernels give.
//
// A check line reads `check: NAME KIND=VALUE tol=TOL ok` (FAIL instead of ok when
// VALUE >= TOL or VALUE is NaN); examples/check_example.sh re-checks every such line
// and CTest expects the names each chapter lists (examples/tutorial/CMakeLists.txt).
#pragma once
#include <cmath>
#include <cstdio>

#include "core/array.hpp"

namespace tutorial {

using liegrad::Array;
using liegrad::Shape;

class Checks {
 public:
  // Prints one check line; passes when value < tol.
  bool operator()(const char* name, const char* kind, double value, double tol) {
    const bool ok = value < tol;  // false for NaN
    std::printf("check: %s %s=%.2e tol=%.0e %s\n", name, kind, value, tol, ok ? "ok" : "FAIL");
    failed_ += ok ? 0 : 1;
    return ok;
  }
  // 0 when every check passed; prints a summary line either way.
  int status() const {
    std::printf("%s\n", failed_ == 0 ? "all checks passed" : "SOME CHECKS FAILED");
    return failed_ == 0 ? 0 : 1;
  }

 private:
  int failed_ = 0;
};

// op(A) op(B) for 2-D arrays, op = transpose when the flag is set (plain loops).
inline Array<double> mm(const Array<double>& A, const Array<double>& B, bool ta = false, bool tb = false) {
  const int64_t M = ta ? A.shape().cols() : A.shape().rows(), K = ta ? A.shape().rows() : A.shape().cols();
  const int64_t N = tb ? B.shape().rows() : B.shape().cols();
  Array<double> C(Shape{M, N});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += (ta ? A.at(k, i) : A.at(i, k)) * (tb ? B.at(j, k) : B.at(k, j));
      C.at(i, j) = s;
    }
  return C;
}

// a + c b, element-wise.
inline Array<double> axpy(const Array<double>& a, double c, const Array<double>& b) {
  Array<double> out = a;
  for (int64_t i = 0; i < out.size(); ++i) out[i] += c * b[i];
  return out;
}

// sum_ij a_ij b_ij = tr(a^T b), the pairing reverse mode works in.
inline double dot(const Array<double>& a, const Array<double>& b) {
  double s = 0;
  for (int64_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// ||a - b||_F, the Frobenius distance.
inline double dist(const Array<double>& a, const Array<double>& b) {
  const Array<double> d = axpy(a, -1.0, b);
  return std::sqrt(dot(d, d));
}

// max |a_i - b_i| / max(1, max |b_i|): how far a route is from a reference.
inline double rel_diff(const Array<double>& a, const Array<double>& b) {
  double num = 0, den = 1;
  for (int64_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(a[i] - b[i]);
    if (std::isnan(d)) return d;  // a NaN must fail the check, not vanish in a max
    num = std::fmax(num, d);
    den = std::fmax(den, std::fabs(b[i]));
  }
  return num / den;
}

// The inverse of a 3x3 matrix by its adjugate (cofactors, transposed, over the determinant).
inline Array<double> inverse3(const Array<double>& M) {
  Array<double> out(Shape{3, 3});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      out.at(j, i) = M.at(i1, j1) * M.at(i2, j2) - M.at(i1, j2) * M.at(i2, j1);
    }
  double det = 0;
  for (int j = 0; j < 3; ++j) det += M.at(0, j) * out.at(j, 0);
  for (int64_t k = 0; k < 9; ++k) out[k] /= det;
  return out;
}

}  // namespace tutorial
