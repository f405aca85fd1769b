// so3_exp_gradient: differentiate a loss through the matrix exponential on SO(3) with
// liegrad's tape, and check the gradient against central finite differences.
//
//     L(u) = || exp(hat(u)) - R_target ||_F^2,      u in R^3
//
// hat: R^3 -> so(3) is liegrad's coordinate map (docs/models.md §1): u = sqrt(2) (A_01, A_02, A_12),
//
//     hat(u) = 1/sqrt(2) [[  0,   u0,  u1],
//                         [-u0,   0,   u2],
//                         [-u1, -u2,   0]],
//
// an isometry (||hat(u)||_F = ||u||), so exp(hat(u)) is a rotation by the angle
// ||u|| / sqrt(2) (not ||u||, as with the physicists' cross-product matrix [w]x, whose
// Frobenius norm is sqrt(2) |w|).
//
// What the tape does on the way back (docs/groups.md):
//   sum(square(R - R_target))  ->  dL/dR = 2 (R - R_target)                       (n,n)
//   expm                       ->  dL/dA = L(A^T, dL/dR), the Frechet derivative of
//                                  exp at A^T (Mathias 1996), computed exactly by
//                                  differentiating the scaling-and-squaring program
//   hat                        ->  dL/du = vee(dL/dA) = (G_01 - G_10, G_02 - G_20, G_12 - G_21) / sqrt(2)
//
// Run:  build/examples/example_so3_exp_gradient
// Expect: tape and finite-difference gradients agreeing to ~1e-9 relative (the
// finite-difference truncation and rounding error at step h = 1e-6).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "autograd/ops.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"
#include "groups/group.hpp"
#include "groups/group_ops.hpp"

using namespace liegrad;

int main() {
  auto so3 = groups::make_group("SO(3)");
  Rng rng(7);
  const Array<double> R_target = so3->sample<double>(rng);  // a Haar-random rotation (3,3)
  const Array<double> u0(Shape{3}, {0.3, -0.5, 0.8});        // where we differentiate (3)

  // The loss on the tape: u -> A = hat(u) -> R = exp(A) -> ||R - R_target||^2.
  auto loss_on_tape = [&](const ag::Vard& u) {
    const ag::Vard A = groups::hat(*so3, u);  // (3,3) skew-symmetric
    const ag::Vard R = groups::expm(A);       // (3,3) rotation
    return ag::sum(ag::square(ag::sub(R, ag::Vard::constant(R_target))));
  };
  // The same loss as plain arithmetic (no tape), for finite differences.
  auto loss_value = [&](const Array<double>& u) {
    const Array<double> R = so3->exp(so3->hat(u));
    double s = 0;
    for (int64_t i = 0; i < R.size(); ++i) s += (R[i] - R_target[i]) * (R[i] - R_target[i]);
    return s;
  };

  // Reverse mode: one forward pass records the ops, one backward pass gives all of dL/du.
  ag::Vard u = ag::Vard::parameter(u0);
  const ag::Vard L = loss_on_tape(u);
  ag::backward(L);
  const Array<double>& grad = u.grad();  // (3)

  // Central differences, one coordinate at a time: (L(u + h e_k) - L(u - h e_k)) / 2h.
  const double h = 1e-6;
  double err2 = 0, norm2 = 0;
  std::printf("L(u) = %.15f at u = (%.2f, %.2f, %.2f), rotation angle %.4f rad\n\n", L.value().item(), u0[0], u0[1],
              u0[2], std::sqrt(u0[0] * u0[0] + u0[1] * u0[1] + u0[2] * u0[2]) / std::sqrt(2.0));
  std::printf("  k   dL/du_k (tape)        dL/du_k (central diff.)   rel. error\n");
  for (int64_t k = 0; k < 3; ++k) {
    Array<double> up = u0, um = u0;
    up[k] += h;
    um[k] -= h;
    const double fd = (loss_value(up) - loss_value(um)) / (2 * h);
    std::printf("  %lld   %+.15f   %+.15f        %.1e\n", static_cast<long long>(k), grad[k], fd,
                std::abs(grad[k] - fd) / std::max(std::abs(grad[k]), 1e-300));
    err2 += (grad[k] - fd) * (grad[k] - fd);
    norm2 += grad[k] * grad[k];
  }
  const double rel = std::sqrt(err2 / norm2);
  std::printf("\n||tape - finite differences|| / ||tape|| = %.1e  (%s)\n", rel,
              rel < 1e-6 ? "agree: the exp pullback is exact, the differences are the finite-difference error"
                         : "DISAGREE");
  return rel < 1e-6 ? 0 : 1;
}
