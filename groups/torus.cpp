// The torus T(k) of diagonal unitaries diag(e^{i theta_1}, ..., e^{i theta_k}), a subgroup of
// U(k) stored in the same real form (n = 2k, real_scale() = 1/2; groups/real_form.hpp):
//     [[diag(cos theta), -diag(sin theta)], [diag(sin theta), diag(cos theta)]],
// so the X and Y blocks are diagonal and inner(H, P) = Re tr(H* P) = sum_j cos(theta_j - phi_j),
// exactly as for U(k) (an interleaved layout of 2 x 2 rotations would be a permutation of this).
//
// Algebra t = i diag(R^k), m = k, Pi(Z) = i diag(Im Z_11, ..., Im Z_kk); coordinates
// u_j = theta_j (already orthonormal: ||i diag(theta)||_c = ||theta||), in diagonal order.
// exp and log are closed forms: exp(i diag(theta)) has cos / sin blocks; log reads
// theta_j = atan2(sin, cos) in (-pi, pi]. Haar measure: theta_j independent uniform.
#include <cmath>
#include <numbers>
#include <vector>

#include "groups/group_impl.hpp"
#include "groups/real_form.hpp"

namespace liegrad::groups {

namespace {

class Torus final : public TypedGroup<Torus> {
 public:
  explicit Torus(int64_t k) : k_(k) { require_group_size("T(k)", k, 2); }

  std::string name() const override { return "T(" + std::to_string(k_) + ")"; }
  int64_t n() const override { return 2 * k_; }
  int64_t dim() const override { return k_; }
  bool is_complex() const override { return true; }

  template <class T>
  void project_t(const T* X, int64_t ldx, T* out, int64_t ldo) const {
    real_form::zero_block(out, ldo, 2 * k_);
    for (int64_t j = 0; j < k_; ++j) real_form::put(out, ldo, k_, j, j, T(0), real_form::diag_imag(k_, X, ldx, j));
  }

  template <class T>
  void hat_t(const T* u, T* out, int64_t ldo) const {
    real_form::zero_block(out, ldo, 2 * k_);
    for (int64_t j = 0; j < k_; ++j) real_form::put(out, ldo, k_, j, j, T(0), u[j]);
  }

  template <class T>
  void vee_t(const T* X, int64_t ldx, T* u) const {
    for (int64_t j = 0; j < k_; ++j) u[j] = real_form::diag_imag(k_, X, ldx, j);
  }

  void exp_kernel(int64_t N, const double* A, double* Q) const override { exp_t(N, A, Q); }
  void exp_kernel(int64_t N, const float* A, float* Q) const override { exp_t(N, A, Q); }

  void log_kernel(const double* X, int64_t ldx, double* A, int64_t lda) const override {
    real_form::zero_block(A, lda, 2 * k_);
    for (int64_t j = 0; j < k_; ++j) {
      const double c = 0.5 * (X[j * ldx + j] + X[(k_ + j) * ldx + k_ + j]);
      const double s = real_form::diag_imag(k_, X, ldx, j);
      real_form::put(A, lda, k_, j, j, 0.0, std::atan2(s, c));
    }
  }

  void sample_kernel(Rng& rng, double* out, int64_t ldo) const override {
    real_form::zero_block(out, ldo, 2 * k_);
    for (int64_t j = 0; j < k_; ++j) {
      const double theta = rng.uniform(-std::numbers::pi, std::numbers::pi);
      real_form::put(out, ldo, k_, j, j, std::cos(theta), std::sin(theta));
    }
  }

  // Unitarity plus the (complex-norm) distance from the diagonal real forms.
  double defect_kernel(const double* H, int64_t ldh) const override {
    const int64_t n2 = 2 * k_;
    double off = 0;
    for (int64_t i = 0; i < n2; ++i)
      for (int64_t j = 0; j < n2; ++j)
        if (i % k_ != j % k_) off += H[i * ldh + j] * H[i * ldh + j];
    const double struct_dist = std::sqrt(0.5 * off) + real_form::kInvSqrt2 * real_form::distance_from_c(k_, H, ldh);
    return unitarity_defect(H, ldh) + struct_dist;
  }

  void restore_structure_kernel(double* H, int64_t ldh) const override { restore_t(H, ldh); }
  void restore_structure_kernel(float* H, int64_t ldh) const override { restore_t(H, ldh); }

 private:
  // Keeps the complex diagonal (the real-form average of each 2 x 2 pattern) and zeroes
  // every other entry.
  template <class T>
  void restore_t(T* H, int64_t ldh) const {
    std::vector<T> x(static_cast<size_t>(k_)), y(static_cast<size_t>(k_));
    for (int64_t j = 0; j < k_; ++j) {
      x[static_cast<size_t>(j)] = T(0.5) * (H[j * ldh + j] + H[(k_ + j) * ldh + k_ + j]);
      y[static_cast<size_t>(j)] = T(0.5) * (H[(k_ + j) * ldh + j] - H[j * ldh + k_ + j]);
    }
    real_form::zero_block(H, ldh, 2 * k_);
    for (int64_t j = 0; j < k_; ++j) real_form::put(H, ldh, k_, j, j, x[static_cast<size_t>(j)], y[static_cast<size_t>(j)]);
  }

  template <class T>
  void exp_t(int64_t N, const T* A, T* Q) const {
    const int64_t n2 = 2 * k_;
    for (int64_t b = 0; b < N; ++b) {
      const T* a = A + b * n2 * n2;
      T* q = Q + b * n2 * n2;
      real_form::zero_block(q, n2, n2);
      for (int64_t j = 0; j < k_; ++j) {
        const T theta = real_form::diag_imag(k_, a, n2, j);
        real_form::put(q, n2, k_, j, j, std::cos(theta), std::sin(theta));
      }
    }
  }

  int64_t k_;
};

}  // namespace

std::unique_ptr<Group> make_torus(int64_t k) { return std::make_unique<Torus>(k); }

}  // namespace liegrad::groups
