// The unitary group U(d), stored in real form (n = 2d, real_scale() = 1/2; see
// groups/real_form.hpp for R(X + iY) = [[X, -Y], [Y, X]] and the projection).
//
// Algebra u(d): skew-Hermitian matrices A = X + iY (X skew-symmetric, Y symmetric),
// m = d^2, Pi(Z) = (Z - Z*)/2. Coordinates, orthonormal for Re tr(A* B):
//     u[0 .. d)                 Y_jj = Im A_jj, the diagonal imaginary parts;
//     u[d .. d + P)             sqrt(2) X_ij for i < j, row-major (P = d(d-1)/2; equal to the
//                               so(d) coordinates of the real part);
//     u[d + P .. d^2)           sqrt(2) Y_ij for i < j, row-major.
//
// Haar sampling (Mezzadri 2007): Z = Q R for a complex Gaussian Z (real and imaginary
// parts N(0, 1/2)), then Q <- Q diag(R_jj / |R_jj|).
#include <cmath>
#include <vector>

#include "core/lapack.hpp"
#include "groups/group_impl.hpp"
#include "groups/real_form.hpp"

namespace liegrad::groups {

using real_form::cplx;

void haar_unitary(int64_t d, Rng& rng, cplx* Q) {
  std::vector<cplx> r(static_cast<size_t>(d));
  const double sd = real_form::kInvSqrt2;
  for (int64_t i = 0; i < d * d; ++i) Q[i] = cplx(sd * rng.normal(), sd * rng.normal());
  lapack::qr(d, d, Q, r.data());
  for (int64_t j = 0; j < d; ++j) {
    const double a = std::abs(r[static_cast<size_t>(j)]);
    const cplx phase = a > 0 ? r[static_cast<size_t>(j)] / a : cplx(1);
    for (int64_t i = 0; i < d; ++i) Q[i * d + j] *= phase;
  }
}

namespace {

class Unitary final : public TypedGroup<Unitary> {
 public:
  explicit Unitary(int64_t d) : d_(d) { require_group_size("U(d)", d, 2); }

  std::string name() const override { return "U(" + std::to_string(d_) + ")"; }
  int64_t n() const override { return 2 * d_; }
  int64_t dim() const override { return d_ * d_; }
  bool is_complex() const override { return true; }

  template <class T>
  void project_t(const T* X, int64_t ldx, T* out, int64_t ldo) const {
    real_form::project_u(d_, X, ldx, out, ldo);
  }

  template <class T>
  void hat_t(const T* u, T* out, int64_t ldo) const {
    const int64_t P = d_ * (d_ - 1) / 2;
    for (int64_t j = 0; j < d_; ++j) real_form::put(out, ldo, d_, j, j, T(0), u[j]);
    real_form::hat_u_offdiag(d_, u + d_, u + d_ + P, out, ldo);
  }

  template <class T>
  void vee_t(const T* X, int64_t ldx, T* u) const {
    const int64_t P = d_ * (d_ - 1) / 2;
    for (int64_t j = 0; j < d_; ++j) u[j] = real_form::diag_imag(d_, X, ldx, j);
    real_form::vee_u_offdiag(d_, X, ldx, u + d_, u + d_ + P);
  }

  void sample_kernel(Rng& rng, double* out, int64_t ldo) const override {
    std::vector<cplx> Q(static_cast<size_t>(d_ * d_));
    haar_unitary(d_, rng, Q.data());
    real_form::from_complex(d_, Q.data(), out, ldo);
  }

  double defect_kernel(const double* H, int64_t ldh) const override {
    return unitarity_defect(H, ldh) + real_form::kInvSqrt2 * real_form::distance_from_c(d_, H, ldh);
  }

  void restore_structure_kernel(double* H, int64_t ldh) const override { real_form::project_c_inplace(d_, H, ldh); }
  void restore_structure_kernel(float* H, int64_t ldh) const override { real_form::project_c_inplace(d_, H, ldh); }

 private:
  int64_t d_;
};

}  // namespace

std::unique_ptr<Group> make_unitary(int64_t d) { return std::make_unique<Unitary>(d); }

}  // namespace liegrad::groups
