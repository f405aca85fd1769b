// The orthogonal groups O(d) and SO(d), stored as the real d x d matrices themselves
// (n = d, real_scale() = 1).
//
// Algebra so(d): real skew-symmetric matrices, m = d(d-1)/2, Pi(X) = (X - X^T)/2.
// Coordinates (docs/models.md §1): u = sqrt(2) * (A_ij for i < j, row-major), so ||hat(u)||_F = ||u||;
// vee(X) = (X_ij - X_ji)/sqrt(2) = hat^T(X), the coordinates of Pi(X).
// exp maps so(d) onto SO(d); O(d)'s other component (det -1) has no real logarithm.
// d = 1: SO(1) = {1} and O(1) = {1, -1}, both with m = 0.
//
// Haar sampling (Mezzadri 2007, "How to generate random matrices from the classical
// compact groups"): Q R = G for a Gaussian G, then Q <- Q diag(sign R_jj) is Haar on O(d).
// For SO(d) an element with det -1 gets its first column negated: right multiplication
// by diag(-1, 1, ..., 1) preserves Haar measure and swaps the two components.
#include <cmath>
#include <vector>

#include "core/lapack.hpp"
#include "core/skew_pack.hpp"
#include "groups/group_impl.hpp"
#include "groups/real_form.hpp"

namespace liegrad::groups {

namespace {

class Orthogonal final : public TypedGroup<Orthogonal> {
 public:
  Orthogonal(int64_t d, bool special) : d_(d), special_(special) {
    require_group_size(special ? "SO(d)" : "O(d)", d, 1);
  }

  std::string name() const override { return (special_ ? "SO(" : "O(") + std::to_string(d_) + ")"; }
  int64_t n() const override { return d_; }
  int64_t dim() const override { return d_ * (d_ - 1) / 2; }
  bool is_complex() const override { return false; }

  template <class T>
  void project_t(const T* X, int64_t ldx, T* out, int64_t ldo) const {
    skew_part(d_, X, ldx, T(0.5), out, ldo);  // (X - X^T)/2
  }

  template <class T>
  void hat_t(const T* u, T* out, int64_t ldo) const {
    skew_from_upper(d_, u, static_cast<T>(real_form::kInvSqrt2), out, ldo);
  }

  template <class T>
  void vee_t(const T* X, int64_t ldx, T* u) const {
    upper_of_skew(d_, X, ldx, static_cast<T>(real_form::kInvSqrt2), u);
  }

  void sample_kernel(Rng& rng, double* out, int64_t ldo) const override {
    const int64_t d = d_;
    std::vector<double> Q(static_cast<size_t>(d * d)), r(static_cast<size_t>(d));
    for (double& q : Q) q = rng.normal();
    lapack::qr(d, d, Q.data(), r.data());
    for (int64_t j = 0; j < d; ++j)
      if (r[static_cast<size_t>(j)] < 0)
        for (int64_t i = 0; i < d; ++i) Q[static_cast<size_t>(i * d + j)] = -Q[static_cast<size_t>(i * d + j)];
    if (special_ && lapack::det(d, Q.data()) < 0)
      for (int64_t i = 0; i < d; ++i) Q[static_cast<size_t>(i * d)] = -Q[static_cast<size_t>(i * d)];
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) out[i * ldo + j] = Q[static_cast<size_t>(i * d + j)];
  }

  double defect_kernel(const double* H, int64_t ldh) const override {
    double e = unitarity_defect(H, ldh);
    if (special_) {
      std::vector<double> h(static_cast<size_t>(d_ * d_));
      for (int64_t i = 0; i < d_; ++i)
        for (int64_t j = 0; j < d_; ++j) h[static_cast<size_t>(i * d_ + j)] = H[i * ldh + j];
      e += std::abs(lapack::det(d_, h.data()) - 1.0);
    }
    return e;
  }

 private:
  int64_t d_;
  bool special_;
};

}  // namespace

std::unique_ptr<Group> make_special_orthogonal(int64_t d) { return std::make_unique<Orthogonal>(d, true); }
std::unique_ptr<Group> make_orthogonal(int64_t d) { return std::make_unique<Orthogonal>(d, false); }

}  // namespace liegrad::groups
