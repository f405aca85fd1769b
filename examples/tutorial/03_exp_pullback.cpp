// Tutorial chapter 3 (docs/tutorial/03-exp-pullback.md): three routes to the pullback of
// Q = exp(A), dloss/dA = Lexp(A^T, G) with G = dloss/dQ (Mathias 1996; docs/groups.md §3):
//
//   series  the Frechet derivative from its power series,
//           Lexp(X, E) = sum_{k>=1} (1/k!) sum_{j<k} X^j E X^{k-1-j},  summed until it stops changing;
//   block   exp([[X, E], [0, X]]) = [[e^X, Lexp(X, E)], [0, e^X]]: one exponential of a 2n x 2n matrix;
//   tape    liegrad's expm op: the derivative of the scaling-and-squaring polynomial program.
//
// Plus the adjoint identity <G, Lexp(A, E)> = <Lexp(A^T, G), E> with Lexp(A, E) from central
// differences of exp, for a general 4 x 4 matrix of 1-norm 2.5 and a skew-symmetric one.
// First the plan liegrad runs for the general one (expm_plan): Sastre et al.'s 15+ with
// 2 squarings, and the thresholds that decide it, found by bisection over multiples of A.
#include <cmath>
#include <cstdio>
#include <string>

#include "autograd/ops.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"
#include "groups/expm_kernel.hpp"
#include "tutorial.hpp"

using namespace liegrad;
using tutorial::mm;

namespace {

Array<double> transposed(const Array<double>& X) {
  Array<double> T(Shape{X.shape().cols(), X.shape().rows()});
  for (int64_t i = 0; i < T.shape().rows(); ++i)
    for (int64_t j = 0; j < T.shape().cols(); ++j) T.at(i, j) = X.at(j, i);
  return T;
}

// Lexp(X, E) from the series, with D_k = sum_{j<k} X^j E X^{k-1-j}, D_{k+1} = X D_k + E X^k.
Array<double> frechet_series(const Array<double>& X, const Array<double>& E) {
  const int64_t n = X.shape().rows();
  Array<double> Xk = Array<double>::eye(n), D = E, sum = E;  // k = 1: D_1 = E, 1/1! = 1
  double fact = 1;
  for (int k = 1; k < 80; ++k) {
    Xk = mm(Xk, X);                                // X^k
    D = tutorial::axpy(mm(X, D), 1.0, mm(E, Xk));  // D_{k+1}
    fact *= k + 1;
    sum = tutorial::axpy(sum, 1.0 / fact, D);
  }
  return sum;
}

// The plan liegrad runs for c A: {T_1, T_2, T_4, T_8, 15+, T_18}[degree] and squarings.
groups::ExpmPlan plan_of(const Array<double>& A, double c) {
  const int64_t n = A.shape().rows();
  Array<double> cA = tutorial::axpy(Array<double>(A.shape()), c, A), scratch(Shape{groups::expm_forward_scratch(n)});
  return groups::expm_plan<double>(n, cA.data(), scratch.data());
}

// theta of `degree`: the largest 1-norm t (of t A / norm) planned without squaring by that
// degree or a lower one, by bisection; below it plan(lo) is, above it plan(hi) is not.
double threshold(const Array<double>& A, double norm, int degree) {
  double lo = 0, hi = 4;
  for (int k = 0; k < 60; ++k) {
    const groups::ExpmPlan p = plan_of(A, (lo + hi) / 2 / norm);
    (p.degree <= degree && p.squarings == 0 ? lo : hi) = (lo + hi) / 2;
  }
  return lo;
}

Array<double> expm_plain(const Array<double>& A) {
  const int64_t n = A.shape().rows();
  Array<double> Q(Shape{n, n});
  groups::expm_forward<double>(1, n, A.data(), Q.data());
  return Q;
}

}  // namespace

int main() {
  tutorial::Checks check;
  Rng rng(3);
  const int64_t n = 4;
  Array<double> general = rng.normal_array<double>(Shape{n, n});
  double norm1 = 0;  // largest column sum
  for (int64_t j = 0; j < n; ++j) {
    double c = 0;
    for (int64_t i = 0; i < n; ++i) c += std::fabs(general.at(i, j));
    norm1 = std::fmax(norm1, c);
  }
  for (int64_t i = 0; i < general.size(); ++i) general[i] *= 2.5 / norm1;
  Array<double> skew = rng.normal_array<double>(Shape{n, n});
  skew = tutorial::axpy(skew, -1.0, transposed(skew));  // S - S^T

  // The plan for the general matrix, and why: 2.5/4 is below 15+'s threshold, 2.5/2 above T_18's.
  const char* approximant[] = {"T1", "T2", "T4", "T8", "15+", "T18"};
  const groups::ExpmPlan plan = plan_of(general, 1);
  const double theta15 = threshold(general, 2.5, 4), theta18 = threshold(general, 2.5, 5);
  std::printf("general A: ||A||_1 = 2.5, plan %s with %d squarings, %d products\n", approximant[plan.degree],
              plan.squarings, plan.products());
  std::printf("  thresholds (bisection): theta_15+ = %.3f > 2.5/4, theta_18 = %.3f < 2.5/2\n", theta15, theta18);
  // T_18 alone: the squarings that bring 2.5 under its threshold, and its products.
  const groups::ExpmPlan t18{5, static_cast<int>(std::ceil(std::log2(2.5 / theta18)))}, sastre{4, 0};
  std::printf("  products without squaring: 15+ %d, T18 %d; T18 would need %d squarings too: %d products\n",
              sastre.products(), groups::ExpmPlan{5, 0}.products(), t18.squarings, t18.products());
  check("general_plan_is_15plus_2_squarings_6_products", "mismatches",
        (plan.degree != 4) + (plan.squarings != 2) + (plan.products() != 6), 0.5);
  check("theta_15plus", "abs_err", std::fabs(theta15 - 0.676421749542451), 1e-9);
  check("theta_18", "abs_err", std::fabs(theta18 - 1.090863719290036), 1e-9);
  check("t18_alone_2_squarings_7_products", "mismatches", (t18.squarings != 2) + (t18.products() != 7), 0.5);
  check("quarter_norm_under_theta_15plus", "ratio", 0.625 / theta15, 1.0);
  check("half_norm_over_theta_18", "ratio", theta18 / 1.25, 1.0);

  for (const auto& [label, A] : {std::pair<std::string, Array<double>>{"general", general}, {"skew", skew}}) {
    const Array<double> G = rng.normal_array<double>(Shape{n, n}), E = rng.normal_array<double>(Shape{n, n});
    const Array<double> At = transposed(A);
    std::printf("%s A (4x4): exp(A)[0,0] = %.15f\n", label.c_str(), expm_plain(A)[0]);

    // Route 1: the series.
    const Array<double> series = frechet_series(At, G);
    // Route 2: the block matrix [[A^T, G], [0, A^T]] and its exponential's top-right block.
    Array<double> M(Shape{2 * n, 2 * n});
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        M.at(i, j) = M.at(n + i, n + j) = At.at(i, j);
        M.at(i, n + j) = G.at(i, j);
      }
    const Array<double> eM = expm_plain(M);
    Array<double> block(Shape{n, n});
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) block.at(i, j) = eM.at(i, n + j);
    // Route 3: the tape.
    ag::Vard Av = ag::Vard::parameter(A);
    ag::Tape<double>::current().backward(groups::expm(Av), G);
    const Array<double>& tape = Av.grad();
    std::printf("  dloss/dA[0,0]: series %+.15f  block %+.15f  tape %+.15f\n", series[0], block[0], tape[0]);
    check((label + "_block_vs_series").c_str(), "rel_err", tutorial::rel_diff(block, series), 1e-13);
    check((label + "_tape_vs_series").c_str(), "rel_err", tutorial::rel_diff(tape, series), 1e-13);
    check((label + "_tape_vs_block").c_str(), "rel_err", tutorial::rel_diff(tape, block), 1e-13);

    // The adjoint identity, with Lexp(A, E) from central differences (step 1e-5).
    const double h = 1e-5;
    Array<double> fd = tutorial::axpy(expm_plain(tutorial::axpy(A, h, E)), -1.0, expm_plain(tutorial::axpy(A, -h, E)));
    for (int64_t i = 0; i < fd.size(); ++i) fd[i] /= 2 * h;
    const double lhs = tutorial::dot(G, fd), rhs = tutorial::dot(tape, E);
    const double scale = frobenius_norm(G) * frobenius_norm(fd);  // the size of the pairing's terms
    std::printf("  <G, Lexp(A,E)> = %+.12f (finite differences)   <Lexp(A^T,G), E> = %+.12f (tape)\n", lhs, rhs);
    check((label + "_adjoint_identity_fd").c_str(), "rel_err", std::fabs(lhs - rhs) / scale, 1e-8);
    const double exact = tutorial::dot(G, frechet_series(A, E));
    check((label + "_adjoint_identity_series").c_str(), "rel_err", std::fabs(exact - rhs) / scale, 1e-13);
  }
  return check.status();
}
