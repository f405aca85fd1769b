// Tutorial chapter 4 (docs/tutorial/04-lie-algebras.md): Lie algebras as coordinates.
//
//   so(3)  skew-symmetric 3 x 3; u = sqrt(2) (A01, A02, A12); the basis E_k = hat(e_k) is
//          orthonormal for tr(E^T F), vee(hat(u)) = u, exp(hat(u)) is a rotation by |u|/sqrt(2);
//   u(2)   skew-Hermitian A = X + iY, stored as the real form R(A) = [[X, -Y], [Y, X]];
//          u = (Y00, Y11, sqrt(2) X01, sqrt(2) Y01) (groups/real_form.hpp); R(ZW) = R(Z) R(W)
//          and tr(R(Z)^T R(W)) = 2 Re tr(Z* W): the source of real_scale() = 1/2;
//   su(2)  traceless u(2): hat(e_k) = i sigma_z, i sigma_y, i sigma_x over sqrt(2) (Pauli
//          matrices), det exp(hat(u)) = 1;
//   the pullback of hat is vee(G) / s, not vee(G): checked on the tape for U(2), s = 1/2;
//   the projection Pi_g: the skew part (M - M^T)/2 for so(3); for u(2) the skew-Hermitian
//          part (Z - Z*)/2 of the complex matrix Z = X + iY read from the stored blocks,
//          X = (M11 + M22)/2, Y = (M21 - M12)/2; for su(2) also minus (tr/2) I.
#include <cmath>
#include <complex>
#include <cstdio>

#include "autograd/ops.hpp"
#include "core/rng.hpp"
#include "groups/group.hpp"
#include "groups/group_ops.hpp"
#include "groups/real_form.hpp"
#include "tutorial.hpp"

using namespace liegrad;
using cplx = std::complex<double>;
using tutorial::mm;

namespace {

// The real form of a complex 2 x 2 matrix (row-major, 4 entries) and back.
Array<double> real_form(const cplx* Z) {
  Array<double> R(Shape{4, 4});
  groups::real_form::from_complex(2, Z, R.data(), 4);
  return R;
}
void to_complex(const Array<double>& R, cplx* Z) { groups::real_form::to_complex(2, R.data(), 4, Z); }

Array<double> unit(int64_t m, int64_t k) {
  Array<double> e(Shape{m});
  e[k] = 1;
  return e;
}

}  // namespace

int main() {
  tutorial::Checks check;
  Rng rng(4);
  const double r2 = std::sqrt(2.0);

  // ---- so(3) ----
  auto so3 = groups::make_group("SO(3)");
  double ortho = 0;
  for (int64_t k = 0; k < 3; ++k)
    for (int64_t l = 0; l < 3; ++l)
      ortho = std::fmax(ortho, std::fabs(tutorial::dot(so3->hat(unit(3, k)), so3->hat(unit(3, l))) - (k == l)));
  check("so3_basis_orthonormal", "max_abs_err", ortho, 1e-15);
  const Array<double> u(Shape{3}, {0.3, -1.1, 0.7});
  const Array<double> A = so3->hat(u), R = so3->exp(A);
  std::printf("so(3): hat(0.3, -1.1, 0.7) = [[% .4f % .4f % .4f] [% .4f % .4f % .4f] [% .4f % .4f % .4f]]\n", A[0],
              A[1], A[2], A[3], A[4], A[5], A[6], A[7], A[8]);
  check("so3_vee_hat", "max_abs_err", max_abs_diff(so3->vee(A), u), 1e-15);
  const double angle = std::sqrt(tutorial::dot(u, u)) / r2, trace = R[0] + R[4] + R[8];
  std::printf("  exp(hat u): angle |u|/sqrt(2) = %.6f rad, tr R = %.12f = 1 + 2 cos(angle)\n", angle, trace);
  check("so3_rotation_angle", "abs_err", std::fabs(trace - (1 + 2 * std::cos(angle))), 1e-14);
  check("so3_exp_in_group", "defect", so3->defect(R), 1e-14);

  // ---- u(2) in real form ----
  auto u2 = groups::make_group("U(2)");
  const double x01 = 0.4, y00 = -0.3, y11 = 0.9, y01 = 0.25;  // A = X + iY: X skew, Y symmetric
  const cplx Au[4] = {{0, y00}, {x01, y01}, {-x01, y01}, {0, y11}};
  const Array<double> coords(Shape{4}, {y00, y11, r2 * x01, r2 * y01});  // the documented order
  check("u2_hat_is_real_form", "max_abs_err", max_abs_diff(u2->hat(coords), real_form(Au)), 1e-15);
  check("u2_vee_reads_coords", "max_abs_err", max_abs_diff(u2->vee(real_form(Au)), coords), 1e-15);
  cplx Z[4], W[4], ZW[4], ZsW = 0;
  for (int i = 0; i < 4; ++i) Z[i] = {rng.normal(), rng.normal()}, W[i] = {rng.normal(), rng.normal()};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) ZW[2 * i + j] = Z[2 * i] * W[j] + Z[2 * i + 1] * W[2 + j];
  for (int i = 0; i < 4; ++i) ZsW += std::conj(Z[i]) * W[i];  // tr(Z* W) = sum conj(Z_ij) W_ij
  check("u2_real_form_multiplies", "max_abs_err", max_abs_diff(mm(real_form(Z), real_form(W)), real_form(ZW)), 1e-14);
  const double real_pairing = tutorial::dot(real_form(Z), real_form(W));
  std::printf("u(2): tr(R(Z)^T R(W)) = %.12f, Re tr(Z* W) = %.12f, ratio %.12f; inner(R(Z), R(W)) = %.12f\n",
              real_pairing, ZsW.real(), real_pairing / ZsW.real(), u2->inner(real_form(Z), real_form(W)).item());
  check("u2_real_pairing_is_twice_complex", "abs_err", std::fabs(real_pairing - 2 * ZsW.real()), 1e-13);
  check("u2_inner_uses_half", "abs_err", std::fabs(u2->inner(real_form(Z), real_form(W)).item() - ZsW.real()), 1e-13);
  std::printf("  ||hat(u)||_F^2 = %.12f in the stored real matrix, 2 ||u||^2 = %.12f\n",
              tutorial::dot(u2->hat(coords), u2->hat(coords)), 2 * tutorial::dot(coords, coords));

  // ---- su(2): traceless, the Pauli basis, det exp = 1 ----
  auto su2 = groups::make_group("SU(2)");
  const cplx i1(0, 1), s = 1 / r2;
  const cplx pauli[3][4] = {{i1 * s, 0, 0, -i1 * s}, {0, s, -s, 0}, {0, i1 * s, i1 * s, 0}};  // i sz, i sy, i sx
  double pauli_err = 0;
  for (int64_t k = 0; k < 3; ++k)
    pauli_err = std::fmax(pauli_err, max_abs_diff(su2->hat(unit(3, k)), real_form(pauli[k])));
  check("su2_basis_is_i_pauli_over_sqrt2", "max_abs_err", pauli_err, 1e-15);
  const Array<double> v = rng.normal_array<double>(Shape{3});
  cplx a[4], q[4];
  to_complex(su2->hat(v), a);
  to_complex(su2->exp(su2->hat(v)), q);
  std::printf("su(2): tr hat(v) = %.1e, det exp(hat v) = %.15f %+.1ei\n", std::abs(a[0] + a[3]),
              (q[0] * q[3] - q[1] * q[2]).real(), (q[0] * q[3] - q[1] * q[2]).imag());
  check("su2_traceless", "abs_err", std::abs(a[0] + a[3]), 1e-15);
  check("su2_det_exp_is_1", "abs_err", std::abs(q[0] * q[3] - q[1] * q[2] - 1.0), 1e-14);

  // ---- the pullback of hat: vee(G) / s ----
  const Array<double> M = rng.normal_array<double>(Shape{4, 4});
  ag::Vard uv = ag::Vard::parameter(coords);
  ag::Tape<double>::current().backward(groups::hat(*u2, uv), M);  // ubar = hat^T(M)
  Array<double> expect = u2->vee(M);
  for (int64_t k = 0; k < 4; ++k) expect[k] /= u2->real_scale();
  std::printf("hat pullback on U(2): ubar[0] = %.12f, vee(M)[0] = %.12f, vee(M)[0] / s = %.12f\n", uv.grad()[0],
              u2->vee(M)[0], expect[0]);
  check("u2_hat_pullback_is_vee_over_s", "max_abs_err", max_abs_diff(uv.grad(), expect), 1e-14);
  check("vee_ignores_the_off_algebra_part", "max_abs_err", max_abs_diff(u2->vee(u2->project(M)), u2->vee(M)), 1e-15);

  // ---- the projection Pi_g by hand, against Group::project ----
  const Array<double> M3 = rng.normal_array<double>(Shape{3, 3});
  const Array<double> M3t = mm(M3, Array<double>::eye(3), true);  // M3^T
  const Array<double> skew3 = tutorial::axpy(tutorial::axpy(Array<double>(M3.shape()), 0.5, M3), -0.5, M3t);
  check("so3_project_is_skew_part", "max_abs_err", max_abs_diff(so3->project(M3), skew3), 1e-15);
  cplx C[4], P[4];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)  // X = (M11 + M22)/2, Y = (M21 - M12)/2 (2 x 2 blocks of the 4 x 4 M)
      C[2 * i + j] = cplx(M.at(i, j) + M.at(2 + i, 2 + j), M.at(2 + i, j) - M.at(i, 2 + j)) * 0.5;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) P[2 * i + j] = (C[2 * i + j] - std::conj(C[2 * j + i])) * 0.5;  // (Z - Z*)/2
  check("u2_project_is_skew_hermitian_part", "max_abs_err", max_abs_diff(u2->project(M), real_form(P)), 1e-15);
  const cplx half_trace = (P[0] + P[3]) * 0.5;
  P[0] -= half_trace, P[3] -= half_trace;
  check("su2_project_also_drops_the_trace", "max_abs_err", max_abs_diff(su2->project(M), real_form(P)), 1e-15);
  return check.status();
}
