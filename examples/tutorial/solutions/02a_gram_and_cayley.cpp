// Solutions to chapter 2a's exercises (docs/tutorial/02a-write-your-own-op.md): two ops
// written from scratch, each a forward kernel, a VJP kernel and an ag::record_op wrapper,
// checked by check_vjp.
//
//   Gram    Y = X^T X            dY = dX^T X + X^T dX      Xbar = X (G + G^T)
//   Cayley  C = (I - A)^-1 (I + A), W = (I - A)^-1, dW = W dA W:
//           dC = W dA (I + C)                               Abar = W^T G (I + C)^T
// The Cayley map sends a skew A to a rotation (C^T C = I, det C = 1; Cayley 1846), a
// cheaper alternative to exp for small steps (chapter 4a compares them).
#include <cmath>
#include <cstdio>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "autograd/tape.hpp"
#include "core/rng.hpp"
#include "../tutorial.hpp"

using namespace liegrad;
using tutorial::axpy;
using tutorial::mm;

// Adds Xbar into the gradient of X (the backward step's one job).
void accumulate(const ag::Vard& X, const Array<double>& Xbar) {
  Array<double>& grad = X.node()->grad_ref();
  for (int64_t i = 0; i < grad.size(); ++i) grad[i] += Xbar[i];
}

// ---- Gram: X (m,n) -> X^T X (n,n) ----
ag::Vard gram(const ag::Vard& X) {
  return ag::record_op<double>(mm(X.value(), X.value(), true), {&X}, [X](const Array<double>& G) {
    accumulate(X, mm(X.value(), axpy(G, 1, mm(G, Array<double>::eye(G.shape().rows()), true))));  // X (G + G^T)
  });
}

// ---- Cayley: A (3,3) -> (I - A)^-1 (I + A) ----
ag::Vard cayley(const ag::Vard& A) {
  const Array<double> I = Array<double>::eye(3);
  const Array<double> W = tutorial::inverse3(axpy(I, -1, A.value()));
  const Array<double> C = mm(W, axpy(I, 1, A.value()));
  return ag::record_op<double>(C, {&A}, [A, W, C, I](const Array<double>& G) {
    accumulate(A, mm(mm(W, G, true), axpy(I, 1, C), false, true));  // W^T G (I + C)^T
  });
}

int main() {
  tutorial::Checks check;
  Rng rng(22);
  const ag::VjpResult g = ag::check_vjp("X^T X", [](const std::vector<ag::Vard>& in) { return gram(in[0]); },
                                        {rng.normal_array<double>(Shape{4, 3})}, rng);
  std::printf("check_vjp %s at %s: %.2e\n", g.name.c_str(), g.shapes.c_str(), g.max_rel_error);
  check("check_vjp_gram", "rel_err", g.max_rel_error, 1e-6);

  // A skew A: the Cayley map gives a rotation; then its VJP on a general A.
  const Array<double> N = rng.normal_array<double>(Shape{3, 3});
  Array<double> A(Shape{3, 3});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) A.at(i, j) = 0.5 * (N.at(i, j) - N.at(j, i));
  const Array<double> C = cayley(ag::Vard::constant(A)).value();
  check("cayley_of_skew_is_orthogonal", "max_abs_err", max_abs_diff(mm(C, C, true), Array<double>::eye(3)), 1e-14);
  const ag::VjpResult c = ag::check_vjp("cayley", [](const std::vector<ag::Vard>& in) { return cayley(in[0]); },
                                        {axpy(A, 0.3, N)}, rng);
  std::printf("check_vjp %s at %s: %.2e\n", c.name.c_str(), c.shapes.c_str(), c.max_rel_error);
  check("check_vjp_cayley", "rel_err", c.max_rel_error, 1e-6);
  return check.status();
}
