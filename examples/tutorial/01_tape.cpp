// Tutorial chapter 1 (docs/tutorial/01-tape.md): reverse mode by hand and on liegrad's tape.
//
//   part 1  f(x, y) = x y + exp(x) on scalars: the tape's gradient against the one
//           written down with the chain rule, df/dx = y + exp(x), df/dy = x;
//   part 2  L(W, x) = sum(tanh(W x)^2) on a matrix and a vector: the backward pass
//           written out step by step (each step one VJP) against the tape's;
//   part 3  a VJP with an explicit cotangent: y = tanh(W x), ybar given, the tape's
//           backward(y, ybar) returns ybar^T (dy/dW) and ybar^T (dy/dx);
//   part 4  ag::check_vjp (autograd/gradcheck.hpp): random cotangent and direction,
//           central differences against the tape, in double.
// Every check prints `check: NAME KIND=VALUE tol=TOL ok`; the exit status is 1 if one fails.
#include <cmath>
#include <cstdio>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "core/rng.hpp"
#include "tutorial.hpp"

using namespace liegrad;
using tutorial::mm;

int main() {
  tutorial::Checks check;

  // ---- part 1: scalars ----
  ag::Vard x = ag::Vard::parameter(Array<double>::scalar(0.5));
  ag::Vard y = ag::Vard::parameter(Array<double>::scalar(-1.5));
  const ag::Vard f = ag::add(ag::mul(x, y), ag::exp(x));  // three ops, three steps on the tape
  std::printf("part 1: f(0.5, -1.5) = %.15f, %zu steps recorded on the tape\n", f.value().item(),
              ag::Tape<double>::current().size());
  ag::backward(f);  // seeds df/df = 1 and runs the three steps in reverse
  const double dfdx = -1.5 + std::exp(0.5), dfdy = 0.5;
  std::printf("  tape:  df/dx = %.15f  df/dy = %.15f\n", x.grad().item(), y.grad().item());
  std::printf("  hand:  df/dx = %.15f  df/dy = %.15f\n", dfdx, dfdy);
  check("scalar_grad_tape_vs_hand", "abs_err",
        std::fmax(std::fabs(x.grad().item() - dfdx), std::fabs(y.grad().item() - dfdy)), 1e-14);

  // ---- part 2: a matrix-vector program, backward written out ----
  Rng rng(1);
  const Array<double> W0 = rng.normal_array<double>(Shape{3, 4}), x0 = rng.normal_array<double>(Shape{4, 1});
  ag::Vard W = ag::Vard::parameter(W0), xv = ag::Vard::parameter(x0);
  const ag::Vard z = ag::matmul(W, xv);  // (3,1)
  const ag::Vard h = ag::tanh(z);        // (3,1)
  const ag::Vard loss = ag::sum(ag::square(h));
  ag::backward(loss);
  // By hand, last op first. Each line is the VJP of one op: it maps the cotangent of the
  // op's output to the cotangents of its inputs.
  Array<double> hbar(Shape{3, 1}), zbar(Shape{3, 1});
  for (int64_t i = 0; i < 3; ++i) hbar[i] = 2 * h.value()[i];                             // sum(square(.))
  for (int64_t i = 0; i < 3; ++i) zbar[i] = hbar[i] * (1 - h.value()[i] * h.value()[i]);  // tanh
  const Array<double> Wbar = mm(zbar, x0, false, true);                                   // matmul: Wbar = zbar x^T
  const Array<double> xbar = mm(W0, zbar, true, false);                                   //         xbar = W^T zbar
  std::printf("part 2: loss = %.15f, dloss/dW[0,0] tape %.15f hand %.15f\n", loss.value().item(), W.grad()[0], Wbar[0]);
  check("matrix_grad_tape_vs_hand", "max_abs_err",
        std::fmax(max_abs_diff(W.grad(), Wbar), max_abs_diff(xv.grad(), xbar)), 1e-14);

  // ---- part 3: a vector-Jacobian product with a cotangent of our choosing ----
  const Array<double> ybar = rng.normal_array<double>(Shape{3, 1});
  W.zero_grad();
  xv.zero_grad();
  const ag::Vard yv = ag::tanh(ag::matmul(W, xv));
  ag::Tape<double>::current().backward(yv, ybar);  // seeds dL/dy = ybar instead of 1
  Array<double> zb(Shape{3, 1});
  for (int64_t i = 0; i < 3; ++i) zb[i] = ybar[i] * (1 - yv.value()[i] * yv.value()[i]);
  // The VJP is linear in ybar and never forms the 3 x 12 Jacobian dy/dW.
  std::printf("part 3: ybar^T dy/dx = (%.6f, %.6f, %.6f, %.6f)\n", xv.grad()[0], xv.grad()[1], xv.grad()[2],
              xv.grad()[3]);
  check("vjp_with_seed_vs_hand", "max_abs_err",
        std::fmax(max_abs_diff(W.grad(), mm(zb, x0, false, true)), max_abs_diff(xv.grad(), mm(W0, zb, true))), 1e-14);

  // ---- part 4: check_vjp, the test every op of liegrad passes ----
  const ag::VjpFn fn = [](const std::vector<ag::Vard>& in) { return ag::tanh(ag::matmul(in[0], in[1])); };
  ag::VjpOptions opt;  // eps 1e-6, 3 trials, relative tolerance 1e-6
  const ag::VjpResult r = ag::check_vjp("tanh(W x)", fn, {W0, x0}, rng, opt);
  std::printf("part 4: check_vjp %s at %s: max relative error %.2e over %d trials\n", r.name.c_str(), r.shapes.c_str(),
              r.max_rel_error, opt.trials);
  check("check_vjp_tanh_Wx", "rel_err", r.max_rel_error, 1e-6);
  return check.status();
}
