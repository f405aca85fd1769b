// A real logarithm of every rotation (see rotation_log.hpp).
#include "groups/rotation_log.hpp"

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/lapack.hpp"

namespace liegrad::groups {

void rotation_log(int64_t n, const double* Q, double* A) {
  const auto at = [n](std::vector<double>& M, int64_t i, int64_t j) -> double& {
    return M[static_cast<size_t>(i * n + j)];
  };
  double defect = 0;  // ||Q^T Q - I||_max
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = i == j ? -1.0 : 0.0;
      for (int64_t k = 0; k < n; ++k) s += Q[k * n + i] * Q[k * n + j];
      defect = std::max(defect, std::abs(s));
    }
  if (!(defect <= 1e-6))
    throw ValueError("rotation_log: the matrix is not orthogonal (max |Q^T Q - I| = " + std::to_string(defect) + ")");
  std::vector<double> T(Q, Q + n * n), Z(static_cast<size_t>(n * n)), L(static_cast<size_t>(n * n), 0.0);
  lapack::real_schur(n, T.data(), Z.data());
  std::vector<int64_t> minus_one;  // 1 x 1 blocks at -1, paired below
  for (int64_t i = 0; i < n;) {
    if (i + 1 < n && at(T, i + 1, i) != 0.0) {  // a 2 x 2 block
      const double theta = std::atan2((at(T, i + 1, i) - at(T, i, i + 1)) / 2, (at(T, i, i) + at(T, i + 1, i + 1)) / 2);
      at(L, i + 1, i) = theta;
      at(L, i, i + 1) = -theta;
      i += 2;
    } else {
      if (at(T, i, i) < 0) minus_one.push_back(i);
      i += 1;
    }
  }
  if (minus_one.size() % 2 != 0)
    throw ValueError("rotation_log: the matrix has determinant -1 (an odd number of eigenvalues -1): no real logarithm");
  for (size_t k = 0; k < minus_one.size(); k += 2) {
    const int64_t i = minus_one[k], j = minus_one[k + 1];
    at(L, j, i) = std::numbers::pi;
    at(L, i, j) = -std::numbers::pi;
  }
  // A = Z L Z^T, then (A - A^T) / 2.
  std::vector<double> ZL(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k)
      if (const double z = at(Z, i, k); z != 0.0)
        for (int64_t j = 0; j < n; ++j) at(ZL, i, j) += z * at(L, k, j);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += at(ZL, i, k) * at(Z, j, k);
      A[i * n + j] = s;
    }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i; j < n; ++j) {
      const double skew = (A[i * n + j] - A[j * n + i]) / 2;
      A[i * n + j] = skew;
      A[j * n + i] = -skew;
    }
}

}  // namespace liegrad::groups
