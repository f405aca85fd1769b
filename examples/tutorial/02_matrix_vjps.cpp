// Tutorial chapter 2 (docs/tutorial/02-matrix-vjps.md): the VJPs of matrix products,
// transposes and traces, derived with the trace pairing <M, N> = tr(M^T N) and checked.
//
//   Y = A X B        dL = tr(G^T A dX B) = tr((A^T G B^T)^T dX)     =>  Xbar = A^T G B^T
//   Y = X^T          dL = tr(G^T dX^T)   = tr(G dX) = tr((G^T)^T dX) =>  Xbar = G^T
//   y = tr(C^T X)    dy = tr(C^T dX)                                =>  Xbar = ybar C
//   y = tr(X^T X)    dy = 2 tr(X^T dX)                              =>  Xbar = 2 ybar X
//
// For each: the tape's VJP (backward with a chosen cotangent G) against the formula,
// then check_vjp of Y = A X B in all three inputs (Abar = G B^T X^T, Bbar = X^T A^T G).
#include <algorithm>
#include <cstdio>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "core/rng.hpp"
#include "tutorial.hpp"

using namespace liegrad;
using tutorial::mm;

int main() {
  tutorial::Checks check;
  Rng rng(2);
  // Rectangular on purpose: A (2,3), X (3,4), B (4,5), so a wrong transpose cannot type-check by luck.
  const Array<double> A = rng.normal_array<double>(Shape{2, 3}), X0 = rng.normal_array<double>(Shape{3, 4});
  const Array<double> B = rng.normal_array<double>(Shape{4, 5}), G = rng.normal_array<double>(Shape{2, 5});
  auto& tape = ag::Tape<double>::current();

  // ---- Y = A X B ----
  {
    ag::Vard X = ag::Vard::parameter(X0);
    const ag::Vard Y = ag::matmul(ag::matmul(ag::Vard::constant(A), X), ag::Vard::constant(B));  // (2,5)
    tape.backward(Y, G);                                                                         // Xbar = VJP of G
    const Array<double> formula = mm(mm(A, G, true), B, false, true);                            // A^T G B^T (3,4)
    std::printf("AXB: Xbar[0,0] tape %+.15f  A^T G B^T %+.15f\n", X.grad()[0], formula[0]);
    check("AXB_pullback_is_AtGBt", "max_abs_err", max_abs_diff(X.grad(), formula), 1e-14);
  }
  // ---- Y = X^T ----
  {
    ag::Vard X = ag::Vard::parameter(X0);
    const Array<double> G2 = rng.normal_array<double>(Shape{4, 3});
    tape.backward(ag::transpose(X), G2);
    Array<double> G2t(Shape{3, 4});
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j) G2t.at(i, j) = G2.at(j, i);
    check("transpose_pullback_is_Gt", "max_abs_err", max_abs_diff(X.grad(), G2t), 1e-15);
  }
  // ---- traces: tr(C^T X) is sum(C .* X); tr(X^T X) is sum(X .* X) ----
  {
    const Array<double> C = rng.normal_array<double>(Shape{3, 4});
    ag::Vard X = ag::Vard::parameter(X0);
    ag::backward(ag::sum(ag::mul(ag::Vard::constant(C), X)));
    check("trace_CtX_pullback_is_C", "max_abs_err", max_abs_diff(X.grad(), C), 1e-15);
    X.zero_grad();
    const ag::Vard y = ag::sum(ag::square(X));
    ag::backward(y);
    std::printf("tr(X^T X) = %.12f = ||X||_F^2, gradient 2X\n", y.value().item());
    check("trace_XtX_pullback_is_2X", "max_abs_err", max_abs_diff(X.grad(), tutorial::axpy(X0, 1.0, X0)), 1e-15);
  }
  // ---- the loss of a product, tr(A X B) for square A, B: Xbar = A^T B^T ----
  {
    const Array<double> As = rng.normal_array<double>(Shape{3, 3}), Bs = rng.normal_array<double>(Shape{4, 3});
    ag::Vard X = ag::Vard::parameter(X0);
    const ag::Vard Y = ag::matmul(ag::matmul(ag::Vard::constant(As), X), ag::Vard::constant(Bs));  // (3,3)
    ag::backward(ag::sum(ag::mul(ag::Vard::constant(Array<double>::eye(3)), Y)));                  // tr(A X B)
    check("trace_AXB_pullback_is_AtBt", "max_abs_err", max_abs_diff(X.grad(), mm(As, Bs, true, true)), 1e-14);
  }
  // ---- check_vjp: all three inputs of A X B against central differences ----
  const ag::VjpFn axb = [](const std::vector<ag::Vard>& in) { return ag::matmul(ag::matmul(in[0], in[1]), in[2]); };
  const ag::VjpResult r = ag::check_vjp("A X B", axb, {A, X0, B}, rng);
  std::printf("check_vjp %s at %s: max relative error %.2e\n", r.name.c_str(), r.shapes.c_str(), r.max_rel_error);
  check("check_vjp_AXB", "rel_err", r.max_rel_error, 1e-6);
  // The same three VJPs by hand with one cotangent: Abar = G (X B)^T, Bbar = (A X)^T G.
  {
    ag::Vard Av = ag::Vard::parameter(A), Xv = ag::Vard::parameter(X0), Bv = ag::Vard::parameter(B);
    tape.backward(ag::matmul(ag::matmul(Av, Xv), Bv), G);
    const double err = std::max(max_abs_diff(Av.grad(), mm(G, mm(X0, B), false, true)),
                                max_abs_diff(Bv.grad(), mm(mm(A, X0), G, true, false)));
    check("AXB_pullbacks_of_A_and_B", "max_abs_err", err, 1e-14);
  }
  return check.status();
}
