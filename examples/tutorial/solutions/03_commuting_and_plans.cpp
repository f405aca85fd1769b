// Solutions to chapter 3's exercises (docs/tutorial/03-exp-pullback.md), computed:
//
//   1. L_exp(A, E) = e^A E when A E = E A (every term A^j E A^(k-1-j) of the series is
//      A^(k-1) E), and not otherwise; L_exp(A, E) from the block route, which returns
//      L_exp(X^T, G) for (X, G), so X = A^T, G = E gives L_exp(A, E).
//   2. exp([[a, E], [0, a]]) = [[e^a, e^a E], [0, e^a]] for numbers a, E.
//   3. The plan for ||A||_1 = 10: 15+ (degree index 4 of {T1, T2, T4, T8, 15+, T18}) with
//      4 squarings, 8 products, as the thresholds 0.676 (15+) and 1.091 (T18) predict.
#include <cmath>
#include <cstdio>

#include "core/rng.hpp"
#include "groups/expm.hpp"
#include "groups/expm_kernel.hpp"
#include "../tutorial.hpp"

using namespace liegrad;
using tutorial::axpy;
using tutorial::mm;

namespace {

Array<double> expm_of(const Array<double>& A) {
  Array<double> Q(A.shape());
  groups::expm_forward<double>(1, A.shape().rows(), A.data(), Q.data());
  return Q;
}

// L_exp(A, E) by the block route: expm_pullback_block(A^T, E) adds L_exp((A^T)^T, E).
Array<double> frechet(const Array<double>& A, const Array<double>& E) {
  const int64_t n = A.shape().rows();
  Array<double> At(Shape{n, n}), L(Shape{n, n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) At.at(i, j) = A.at(j, i);
  groups::expm_pullback_block<double>(1, n, At.data(), E.data(), L.data());
  return L;
}

}  // namespace

int main() {
  tutorial::Checks check;
  Rng rng(3);
  const Array<double> A = axpy(Array<double>(Shape{4, 4}), 0.4, rng.normal_array<double>(Shape{4, 4}));
  const Array<double> I = Array<double>::eye(4);

  // 1. E = A^2 + 0.5 A + I commutes with A; a random E does not.
  const Array<double> E = axpy(axpy(mm(A, A), 0.5, A), 1.0, I), N = rng.normal_array<double>(Shape{4, 4});
  const double commuting = tutorial::rel_diff(frechet(A, E), mm(expm_of(A), E));
  const double generic = tutorial::rel_diff(frechet(A, N), mm(expm_of(A), N));
  std::printf("1. L_exp(A, E) vs e^A E: commuting E %.1e, random E %.2f\n", commuting, generic);
  check("commuting_E_gives_eA_E", "rel_err", commuting, 1e-13);
  check("random_E_does_not", "tol_over_diff", 1e-3 / generic, 1);

  // 2. The 2x2 block matrix of numbers a = 0.7, E = -1.3.
  const double a = 0.7, e1 = -1.3;
  const Array<double> Q = expm_of(Array<double>(Shape{2, 2}, {a, e1, 0, a}));
  const Array<double> want(Shape{2, 2}, {std::exp(a), std::exp(a) * e1, 0, std::exp(a)});
  std::printf("2. exp([[a, E], [0, a]])[0,1] = %.12f, e^a E = %.12f\n", Q[1], want[1]);
  check("block_of_numbers_is_derivative", "max_abs_err", max_abs_diff(Q, want), 1e-14);

  // 3. The plan at 1-norm 10.
  double norm1 = 0;
  for (int64_t j = 0; j < 4; ++j) {
    double col = 0;
    for (int64_t i = 0; i < 4; ++i) col += std::fabs(A.at(i, j));
    norm1 = std::fmax(norm1, col);
  }
  Array<double> A10 = axpy(Array<double>(Shape{4, 4}), 10 / norm1, A), scratch(Shape{groups::expm_forward_scratch(4)});
  const groups::ExpmPlan plan = groups::expm_plan<double>(4, A10.data(), scratch.data());
  std::printf("3. ||A||_1 = 10: degree index %d (4 = 15+), %d squarings, %d products\n", plan.degree, plan.squarings,
              plan.products());
  check("plan_at_10_is_15plus_4_squarings_8_products", "mismatches",
        (plan.degree != 4) + (plan.squarings != 4) + (plan.products() != 8), 0.5);
  return check.status();
}
