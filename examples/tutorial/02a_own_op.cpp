// Tutorial chapter 2a (docs/tutorial/02a-write-your-own-op.md): forward and reverse mode as
// tools, then a tape op written from scratch, forward and backward.
//
//   part 1  f(x) = (x0 x1 + tanh x2, exp(x0) x2): a Jacobian-vector product J u by forward
//           mode (dual numbers: every value carries its derivative along u) and a
//           vector-Jacobian product J^T v from the tape; <v, J u> = <J^T v, u>; the whole
//           Jacobian from 3 JVPs (its columns) or from 2 VJPs (its rows).
//   part 2  the matrix square Y = X^2: JVP dY = U X + X U, VJP Xbar = G X^T + X^T G (chapter
//           2's recipe), the same transpose relation, the op on the tape with ag::record_op,
//           check_vjp on it, a backward with a missing transpose caught by check_vjp.
//   part 3  the op at work: the square root of A = S^2 by gradient descent on ||X^2 - A||^2.
#include <cmath>
#include <cstdio>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "autograd/tape.hpp"
#include "core/rng.hpp"
#include "tutorial.hpp"

using namespace liegrad;
using tutorial::axpy;
using tutorial::dot;
using tutorial::mm;

// Forward mode: a value and its derivative along one input direction.
struct Dual {
  double v, d;
};
Dual operator+(Dual a, Dual b) { return {a.v + b.v, a.d + b.d}; }
Dual operator*(Dual a, Dual b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }  // product rule
Dual tanh(Dual a) { const double t = std::tanh(a.v); return {t, (1 - t * t) * a.d}; }
Dual exp(Dual a) { const double e = std::exp(a.v); return {e, e * a.d}; }

// J u at x: seed each input's derivative with u and read the outputs' derivatives.
void jvp(const double x[3], const double u[3], double Ju[2]) {
  const Dual x0{x[0], u[0]}, x1{x[1], u[1]}, x2{x[2], u[2]};
  Ju[0] = (x0 * x1 + tanh(x2)).d;
  Ju[1] = (exp(x0) * x2).d;
}

// J^T v at x: the tape's gradient of the scalar <v, f(x)>.
void vjp(const double x[3], const double v[2], double JTv[3]) {
  ag::Vard x0 = ag::Vard::parameter(Array<double>::scalar(x[0])), x1 = ag::Vard::parameter(Array<double>::scalar(x[1])),
           x2 = ag::Vard::parameter(Array<double>::scalar(x[2]));
  const ag::Vard y0 = ag::add(ag::mul(x0, x1), ag::tanh(x2)), y1 = ag::mul(ag::exp(x0), x2);
  ag::backward(ag::add(ag::scale(y0, v[0]), ag::scale(y1, v[1])));
  JTv[0] = x0.grad().item(), JTv[1] = x1.grad().item(), JTv[2] = x2.grad().item();
}

// ---- the matrix square: three kernels and a tape wrapper (X, U, G: (n,n)) ----
Array<double> square_forward(const Array<double>& X) { return mm(X, X); }
Array<double> square_jvp(const Array<double>& X, const Array<double>& U) { return axpy(mm(U, X), 1, mm(X, U)); }
Array<double> square_vjp(const Array<double>& X, const Array<double>& G) {
  return axpy(mm(G, X, false, true), 1, mm(X, G, true, false));  // G X^T + X^T G
}
Array<double> square_vjp_wrong(const Array<double>& X, const Array<double>& G) {
  return axpy(mm(G, X), 1, mm(X, G));  // the transposes forgotten
}
using VjpKernel = Array<double> (*)(const Array<double>&, const Array<double>&);

// Computes the value now and records one backward step, which adds Xbar into X's gradient.
ag::Vard matrix_square(const ag::Vard& X, VjpKernel backward = square_vjp) {
  return ag::record_op<double>(square_forward(X.value()), {&X}, [X, backward](const Array<double>& G) {
    const Array<double> Xbar = backward(X.value(), G);
    Array<double>& grad = X.node()->grad_ref();
    for (int64_t i = 0; i < grad.size(); ++i) grad[i] += Xbar[i];
  });
}

int main() {
  tutorial::Checks check;
  // ---- part 1 ----
  const double x[3] = {0.5, -1.2, 0.8}, u[3] = {0.3, 0.7, -0.4}, v[2] = {1.5, -0.6};
  double Ju[2], JTv[3];
  jvp(x, u, Ju);
  vjp(x, v, JTv);
  const double vJu = v[0] * Ju[0] + v[1] * Ju[1], JTvu = JTv[0] * u[0] + JTv[1] * u[1] + JTv[2] * u[2];
  std::printf("part 1: J u = (%.12f, %.12f), J^T v = (%.12f, %.12f, %.12f)\n", Ju[0], Ju[1], JTv[0], JTv[1], JTv[2]);
  std::printf("  <v, J u> = %.12f   <J^T v, u> = %.12f\n", vJu, JTvu);
  check("scalar_jvp_vjp_transpose", "abs_err", std::fabs(vJu - JTvu), 1e-14);
  double cols[2][3], rows[2][3];  // J from 3 JVPs (one per input) and from 2 VJPs (one per output)
  for (int k = 0; k < 3; ++k) {
    const double e[3] = {k == 0 ? 1.0 : 0.0, k == 1 ? 1.0 : 0.0, k == 2 ? 1.0 : 0.0};
    double col[2];
    jvp(x, e, col);
    cols[0][k] = col[0], cols[1][k] = col[1];
  }
  for (int i = 0; i < 2; ++i) {
    const double e[2] = {i == 0 ? 1.0 : 0.0, i == 1 ? 1.0 : 0.0};
    vjp(x, e, rows[i]);
  }
  double jac_err = 0;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 3; ++k) jac_err = std::fmax(jac_err, std::fabs(cols[i][k] - rows[i][k]));
  std::printf("  J = [[%.6f %.6f %.6f] [%.6f %.6f %.6f]]: 3 JVPs or 2 VJPs\n", cols[0][0], cols[0][1], cols[0][2],
              cols[1][0], cols[1][1], cols[1][2]);
  check("jacobian_by_columns_equals_by_rows", "max_abs_err", jac_err, 1e-15);

  // ---- part 2 ----
  Rng rng(21);
  const Array<double> X0 = rng.normal_array<double>(Shape{3, 3}), U = rng.normal_array<double>(Shape{3, 3});
  const Array<double> G = rng.normal_array<double>(Shape{3, 3});
  const double lhs = dot(G, square_jvp(X0, U)), rhs = dot(square_vjp(X0, G), U);
  std::printf("part 2: <G, dY(U)> = %.12f   <Xbar(G), U> = %.12f\n", lhs, rhs);
  check("square_jvp_vjp_transpose", "rel_err", std::fabs(lhs - rhs) / std::fabs(lhs), 1e-14);
  {
    ag::Vard X = ag::Vard::parameter(X0), Xm = ag::Vard::parameter(X0);
    ag::Tape<double>::current().backward(matrix_square(X), G);
    ag::Tape<double>::current().backward(ag::matmul(Xm, Xm), G);  // the library's product, used twice
    check("square_op_equals_matmul_X_X", "max_abs_err", max_abs_diff(X.grad(), Xm.grad()), 1e-13);
  }
  const ag::VjpResult good = ag::check_vjp("X^2", [](const std::vector<ag::Vard>& in) { return matrix_square(in[0]); },
                                           {X0}, rng);
  const ag::VjpResult bad = ag::check_vjp(
      "X^2, transposes forgotten", [](const std::vector<ag::Vard>& in) { return matrix_square(in[0], square_vjp_wrong); },
      {X0}, rng);
  std::printf("  check_vjp: our backward %.2e, with the transposes forgotten %.2f\n", good.max_rel_error,
              bad.max_rel_error);
  check("check_vjp_matrix_square", "rel_err", good.max_rel_error, 1e-6);
  check("check_vjp_catches_missing_transpose", "tol_over_err", 1e-6 / bad.max_rel_error, 1);

  // ---- part 3: X^2 = A from X = I, plain gradient descent ----
  const Array<double> S = axpy(Array<double>::eye(3), 0.2, rng.normal_array<double>(Shape{3, 3}));
  const Array<double> A = square_forward(S);
  Array<double> Xfit = Array<double>::eye(3);
  double f = 0;
  for (int step = 0; step <= 60; ++step) {
    ag::Vard X = ag::Vard::parameter(Xfit);
    const ag::Vard loss = ag::sum(ag::square(ag::sub(matrix_square(X), ag::Vard::constant(A))));
    f = loss.value().item();
    if (step % 20 == 0) std::printf("part 3: step %3d  ||X^2 - A||^2 = %.3e\n", step, f);
    if (step == 60) break;
    ag::backward(loss);
    Xfit = axpy(Xfit, -0.1, X.grad());
  }
  std::printf("  ||X - S||_F = %.1e: the square root near I\n", std::sqrt(dot(axpy(Xfit, -1, S), axpy(Xfit, -1, S))));
  check("fit_square_root_loss", "loss", f, 1e-20);
  check("fit_square_root_is_S", "dist", std::sqrt(dot(axpy(Xfit, -1, S), axpy(Xfit, -1, S))), 1e-10);
  return check.status();
}
