// Tutorial chapter 3 (docs/tutorial/03-exp-pullback.md): three routes to the pullback of
// Q = exp(A), dL/dA = L(A^T, G) with G = dL/dQ (Mathias 1996; docs/groups.md §3):
//
//   series  the Frechet derivative from its power series,
//           L(X, E) = sum_{k>=1} (1/k!) sum_{j<k} X^j E X^{k-1-j},  summed until it stops changing;
//   block   exp([[X, E], [0, X]]) = [[e^X, L(X, E)], [0, e^X]]: one exponential of a 2n x 2n matrix;
//   tape    liegrad's expm op: reverse pass through the scaling-and-squaring Taylor program.
//
// Plus the adjoint identity <G, L(A, E)> = <L(A^T, G), E> with L(A, E) from central
// differences of exp. Two matrices: a general 4 x 4 one of 1-norm 2.5 (the program scales
// and squares) and a skew-symmetric one (an so(4) element, as the models use).
#include <cmath>
#include <cstdio>
#include <string>

#include "autograd/ops.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"
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

// L(X, E) from the series, with D_k = sum_{j<k} X^j E X^{k-1-j}, D_{k+1} = X D_k + E X^k.
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
    std::printf("  dL/dA[0,0]: series %+.15f  block %+.15f  tape %+.15f\n", series[0], block[0], tape[0]);
    check((label + "_block_vs_series").c_str(), "rel_err", tutorial::rel_diff(block, series), 1e-13);
    check((label + "_tape_vs_series").c_str(), "rel_err", tutorial::rel_diff(tape, series), 1e-13);
    check((label + "_tape_vs_block").c_str(), "rel_err", tutorial::rel_diff(tape, block), 1e-13);

    // The adjoint identity, with L(A, E) from central differences (step 1e-5).
    const double h = 1e-5;
    Array<double> fd = tutorial::axpy(expm_plain(tutorial::axpy(A, h, E)), -1.0, expm_plain(tutorial::axpy(A, -h, E)));
    for (int64_t i = 0; i < fd.size(); ++i) fd[i] /= 2 * h;
    const double lhs = tutorial::dot(G, fd), rhs = tutorial::dot(tape, E);
    const double scale = frobenius_norm(G) * frobenius_norm(fd);  // the size of the pairing's terms
    std::printf("  <G, L(A,E)> = %+.12f (finite differences)   <L(A^T,G), E> = %+.12f (tape)\n", lhs, rhs);
    check((label + "_adjoint_identity_fd").c_str(), "rel_err", std::fabs(lhs - rhs) / scale, 1e-8);
    const double exact = tutorial::dot(G, frechet_series(A, E));
    check((label + "_adjoint_identity_series").c_str(), "rel_err", std::fabs(exact - rhs) / scale, 1e-13);
  }
  return check.status();
}
