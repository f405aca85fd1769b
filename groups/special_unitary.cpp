// The special unitary group SU(d), stored in real form like U(d) (n = 2d,
// real_scale() = 1/2; groups/real_form.hpp).
//
// Algebra su(d): traceless skew-Hermitian matrices, m = d^2 - 1,
// Pi(Z) = S - (tr S / d) I with S = (Z - Z*)/2. Coordinates, orthonormal for Re tr(A* B):
//     u[0 .. d-1)     the traceless imaginary diagonal i diag(theta) in the orthonormal basis
//                     D_l = diag(1, ..., 1, -l, 0, ..., 0) / sqrt(l (l+1)), l = 1 .. d-1
//                     (l ones; the generalized Gell-Mann diagonal matrices normalised to unit
//                     Frobenius norm): u[l-1] = <theta, D_l>;
//     u[d-1 .. d-1+P) sqrt(2) X_ij for i < j, row-major (P = d(d-1)/2), as in U(d);
//     u[d-1+P .. )    sqrt(2) Y_ij for i < j, row-major, as in U(d).
// SU(1) = {1} is the trivial group (m = 0).
//
// Haar sampling: a Haar U(d) element (Mezzadri 2007) divided by a d-th root of its
// determinant, Q <- Q e^{-i phi/d} with phi = arg det Q. With Q = S e^{i alpha} (S Haar on
// SU(d), alpha uniform and independent) the result is S times a central d-th root of unity,
// which is again Haar on SU(d).
//
// log: the principal logarithm can have trace 2 pi i k (sum of angles in (-pi, pi]
// off by 2 pi k); the angles furthest across are moved by -+2 pi so the result lies in su(d).
#include <cmath>
#include <vector>

#include "core/lapack.hpp"
#include "groups/group_impl.hpp"
#include "groups/real_form.hpp"

namespace liegrad::groups {

using real_form::cplx;

namespace {

class SpecialUnitary final : public TypedGroup<SpecialUnitary> {
 public:
  explicit SpecialUnitary(int64_t d) : d_(d) { require_group_size("SU(d)", d, 2); }

  std::string name() const override { return "SU(" + std::to_string(d_) + ")"; }
  int64_t n() const override { return 2 * d_; }
  int64_t dim() const override { return d_ * d_ - 1; }
  bool is_complex() const override { return true; }

  template <class T>
  void project_t(const T* X, int64_t ldx, T* out, int64_t ldo) const {
    real_form::project_u(d_, X, ldx, out, ldo);
    T mean = 0;
    for (int64_t j = 0; j < d_; ++j) mean += out[(d_ + j) * ldo + j];
    mean /= static_cast<T>(d_);
    for (int64_t j = 0; j < d_; ++j) {
      out[(d_ + j) * ldo + j] -= mean;
      out[j * ldo + d_ + j] += mean;
    }
  }

  // theta_j = sum_l u[l-1] D_l[j] = -j u[j-1] / sqrt(j (j+1)) + sum_{l > j} u[l-1] / sqrt(l (l+1)).
  template <class T>
  void hat_t(const T* u, T* out, int64_t ldo) const {
    const int64_t P = d_ * (d_ - 1) / 2;
    T suffix = 0;  // sum_{l > j} u[l-1] / sqrt(l (l+1))
    for (int64_t j = d_ - 1; j >= 0; --j) {
      T theta = suffix;
      if (j >= 1) {
        const T c = static_cast<T>(1.0 / std::sqrt(double(j) * double(j + 1)));
        theta -= static_cast<T>(j) * c * u[j - 1];
        suffix += c * u[j - 1];
      }
      real_form::put(out, ldo, d_, j, j, T(0), theta);
    }
    real_form::hat_u_offdiag(d_, u + d_ - 1, u + d_ - 1 + P, out, ldo);
  }

  // u[l-1] = <y, D_l> = (sum_{j < l} y_j - l y_l) / sqrt(l (l+1)), y the diagonal imaginary parts.
  template <class T>
  void vee_t(const T* X, int64_t ldx, T* u) const {
    const int64_t P = d_ * (d_ - 1) / 2;
    T prefix = d_ > 0 ? real_form::diag_imag(d_, X, ldx, 0) : T(0);
    for (int64_t l = 1; l < d_; ++l) {
      const T y = real_form::diag_imag(d_, X, ldx, l);
      const T c = static_cast<T>(1.0 / std::sqrt(double(l) * double(l + 1)));
      u[l - 1] = c * (prefix - static_cast<T>(l) * y);
      prefix += y;
    }
    real_form::vee_u_offdiag(d_, X, ldx, u + d_ - 1, u + d_ - 1 + P);
  }

  void log_kernel(const double* X, int64_t ldx, double* A, int64_t lda) const override {
    const int64_t k = n();
    std::vector<double> L(static_cast<size_t>(k * k));
    unitary_log(X, ldx, L.data(), k, true);
    project_kernel(L.data(), k, A, lda);
  }

  void sample_kernel(Rng& rng, double* out, int64_t ldo) const override {
    std::vector<cplx> Q(static_cast<size_t>(d_ * d_));
    haar_unitary(d_, rng, Q.data());
    const double phi = std::arg(lapack::det(d_, Q.data()));
    const cplx root = std::polar(1.0, -phi / static_cast<double>(d_));
    for (cplx& q : Q) q *= root;
    real_form::from_complex(d_, Q.data(), out, ldo);
  }

  double defect_kernel(const double* H, int64_t ldh) const override {
    std::vector<cplx> Z(static_cast<size_t>(d_ * d_));
    real_form::to_complex(d_, H, ldh, Z.data());
    return unitarity_defect(H, ldh) + real_form::kInvSqrt2 * real_form::distance_from_c(d_, H, ldh) +
           std::abs(lapack::det(d_, Z.data()) - cplx(1));
  }

  // The real-form pattern only; det = 1 is a nonlinear constraint the polar step keeps
  // to first order and nothing here restores.
  void restore_structure_kernel(double* H, int64_t ldh) const override { real_form::project_c_inplace(d_, H, ldh); }
  void restore_structure_kernel(float* H, int64_t ldh) const override { real_form::project_c_inplace(d_, H, ldh); }

 private:
  int64_t d_;
};

}  // namespace

std::unique_ptr<Group> make_special_unitary(int64_t d) { return std::make_unique<SpecialUnitary>(d); }

}  // namespace liegrad::groups
