// Products G1 x G2 x ... of groups, stored block diagonal in factor order.
//
// Storage: each factor occupies a diagonal block in its own storage. When any factor is
// complex, every real factor G (d x d) is stored complexified, X -> [[X, 0], [0, X]] (the
// real form of X seen as a complex matrix with Y = 0, 2d x 2d), so the whole product is one
// real form with one real_scale() = 1/2 and inner(H, P) = Re tr(H* P) holds blockwise.
// Example: SO(3)xU(2) is stored 10 x 10: a 6 x 6 complexified SO(3) block, then U(2)'s 4 x 4.
// (The blocks of a product are a permutation of the global [[X, -Y], [Y, X]] layout of the
// complex block-diagonal matrix; inner products and norms do not see the permutation.)
//
// Algebra g1 (+) g2 (+) ..., m = sum m_k; coordinates are the factors' coordinates
// concatenated in factor order. Pi is blockwise and zero off the diagonal blocks (the
// orthogonal projection, since g lies in the block-diagonal subspace). exp, log and sampling
// are blockwise (Haar measure of a product is the product of the Haar measures).
//
// Complexified real factor G, stored M = [[M11, M12], [M21, M22]] (each d x d): the
// projection onto {[[A, 0], [0, A]] : A in g} is A = Pi_G((M11 + M22)/2); hat places
// hat_G(u) on both diagonal blocks (so ||hat(u)||_c = ||hat_G(u)||_F = ||u||), and
// vee(M) = vee_G((M11 + M22)/2) = hat^T(M)/2 as for every complex storage.
#include <cmath>
#include <vector>

#include "groups/group_impl.hpp"
#include "groups/real_form.hpp"

namespace liegrad::groups {

namespace {

// Copies an r x r block between strided buffers.
template <class T>
void copy_block(const T* src, int64_t lds, T* dst, int64_t ldd, int64_t r) {
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < r; ++j) dst[i * ldd + j] = src[i * lds + j];
}

// A real group G stored complexified, [[X, 0], [0, X]].
class Complexified final : public TypedGroup<Complexified> {
 public:
  explicit Complexified(std::unique_ptr<Group> inner) : g_(std::move(inner)), a_(g_->n()) {}

  std::string name() const override { return g_->name(); }
  int64_t n() const override { return 2 * a_; }
  int64_t dim() const override { return g_->dim(); }
  bool is_complex() const override { return true; }
  std::unique_ptr<Group> release() { return std::move(g_); }

  template <class T>
  void project_t(const T* X, int64_t ldx, T* out, int64_t ldo) const {
    std::vector<T> avg = average(X, ldx);
    real_form::zero_block(out, ldo, 2 * a_);
    g_->project_kernel(avg.data(), a_, out, ldo);
    copy_block(out, ldo, out + a_ * ldo + a_, ldo, a_);
  }

  template <class T>
  void hat_t(const T* u, T* out, int64_t ldo) const {
    real_form::zero_block(out, ldo, 2 * a_);
    g_->hat_kernel(u, out, ldo);
    copy_block(out, ldo, out + a_ * ldo + a_, ldo, a_);
  }

  template <class T>
  void vee_t(const T* X, int64_t ldx, T* u) const {
    std::vector<T> avg = average(X, ldx);
    g_->vee_kernel(avg.data(), a_, u);
  }

  void exp_kernel(int64_t N, const double* A, double* Q) const override { exp_t(N, A, Q); }
  void exp_kernel(int64_t N, const float* A, float* Q) const override { exp_t(N, A, Q); }

  void log_kernel(const double* X, int64_t ldx, double* A, int64_t lda) const override {
    real_form::zero_block(A, lda, 2 * a_);
    g_->log_kernel(X, ldx, A, lda);
    copy_block(A, lda, A + a_ * lda + a_, lda, a_);
  }

  void sample_kernel(Rng& rng, double* out, int64_t ldo) const override {
    real_form::zero_block(out, ldo, 2 * a_);
    g_->sample_kernel(rng, out, ldo);
    copy_block(out, ldo, out + a_ * ldo + a_, ldo, a_);
  }

  // The inner group's defect of the block plus the complex-norm distance from [[X, 0], [0, X]].
  double defect_kernel(const double* H, int64_t ldh) const override {
    double off = 0, diff = 0;
    for (int64_t i = 0; i < a_; ++i)
      for (int64_t j = 0; j < a_; ++j) {
        const double x = H[i * ldh + a_ + j], y = H[(a_ + i) * ldh + j];
        const double e = H[i * ldh + j] - H[(a_ + i) * ldh + a_ + j];
        off += x * x + y * y;
        diff += e * e;
      }
    std::vector<double> avg = average(H, ldh);
    return g_->defect_kernel(avg.data(), a_) + std::sqrt(0.5 * off + 0.25 * diff);
  }

  // [[X, 0], [0, X]] with X the average of the diagonal blocks (then the inner group's
  // own pattern); the off-diagonal blocks are zeroed.
  void restore_structure_kernel(double* H, int64_t ldh) const override { restore_t(H, ldh); }
  void restore_structure_kernel(float* H, int64_t ldh) const override { restore_t(H, ldh); }

 private:
  template <class T>
  void restore_t(T* H, int64_t ldh) const {
    std::vector<T> avg = average(H, ldh);
    g_->restore_structure_kernel(avg.data(), a_);
    real_form::zero_block(H, ldh, 2 * a_);
    copy_block(avg.data(), a_, H, ldh, a_);
    copy_block(avg.data(), a_, H + a_ * ldh + a_, ldh, a_);
  }

  template <class T>
  std::vector<T> average(const T* X, int64_t ldx) const {
    std::vector<T> avg(static_cast<size_t>(a_ * a_));
    for (int64_t i = 0; i < a_; ++i)
      for (int64_t j = 0; j < a_; ++j)
        avg[static_cast<size_t>(i * a_ + j)] = (X[i * ldx + j] + X[(a_ + i) * ldx + a_ + j]) / T(2);
    return avg;
  }

  template <class T>
  void exp_t(int64_t N, const T* A, T* Q) const {
    const int64_t n2 = 2 * a_;
    std::vector<T> in(static_cast<size_t>(N * a_ * a_)), out(in.size());
    for (int64_t b = 0; b < N; ++b) copy_block(A + b * n2 * n2, n2, in.data() + b * a_ * a_, a_, a_);
    g_->exp_kernel(N, in.data(), out.data());
    for (int64_t b = 0; b < N; ++b) {
      T* q = Q + b * n2 * n2;
      real_form::zero_block(q, n2, n2);
      copy_block(out.data() + b * a_ * a_, a_, q, n2, a_);
      copy_block(out.data() + b * a_ * a_, a_, q + a_ * n2 + a_, n2, a_);
    }
  }

  std::unique_ptr<Group> g_;
  int64_t a_;
};

class Product final : public TypedGroup<Product> {
 public:
  explicit Product(std::vector<std::unique_ptr<Group>> factors) : parts_(std::move(factors)) {
    bool any_complex = false;
    for (const auto& f : parts_) any_complex = any_complex || f->is_complex();
    for (auto& f : parts_)
      if (any_complex && !f->is_complex()) f = std::make_unique<Complexified>(std::move(f));
    for (const auto& f : parts_) {
      offset_.push_back(n_);
      coord_.push_back(m_);
      n_ += f->n();
      m_ += f->dim();
    }
    complex_ = any_complex;
    if (n_ > kMaxGroupN)
      throw ValueError(name() + " is too large: its matrices would be " + std::to_string(n_) + " x " +
                       std::to_string(n_) + " (stored in real form); the limit is " + std::to_string(kMaxGroupN) +
                       " x " + std::to_string(kMaxGroupN));
  }

  std::string name() const override {
    std::string s;
    for (size_t k = 0; k < parts_.size(); ++k) s += (k ? "x" : "") + parts_[k]->name();
    return s;
  }
  int64_t n() const override { return n_; }
  int64_t dim() const override { return m_; }
  bool is_complex() const override { return complex_; }

  // The factors as they were given (complexified ones unwrapped), for flattening.
  std::vector<std::unique_ptr<Group>> release() {
    for (auto& f : parts_)
      if (auto* c = dynamic_cast<Complexified*>(f.get())) f = c->release();
    return std::move(parts_);
  }

  template <class T>
  void project_t(const T* X, int64_t ldx, T* out, int64_t ldo) const {
    real_form::zero_block(out, ldo, n_);
    for (size_t k = 0; k < parts_.size(); ++k)
      parts_[k]->project_kernel(X + offset_[k] * (ldx + 1), ldx, out + offset_[k] * (ldo + 1), ldo);
  }

  template <class T>
  void hat_t(const T* u, T* out, int64_t ldo) const {
    real_form::zero_block(out, ldo, n_);
    for (size_t k = 0; k < parts_.size(); ++k) parts_[k]->hat_kernel(u + coord_[k], out + offset_[k] * (ldo + 1), ldo);
  }

  template <class T>
  void vee_t(const T* X, int64_t ldx, T* u) const {
    for (size_t k = 0; k < parts_.size(); ++k) parts_[k]->vee_kernel(X + offset_[k] * (ldx + 1), ldx, u + coord_[k]);
  }

  void exp_kernel(int64_t N, const double* A, double* Q) const override { exp_t(N, A, Q); }
  void exp_kernel(int64_t N, const float* A, float* Q) const override { exp_t(N, A, Q); }

  void log_kernel(const double* X, int64_t ldx, double* A, int64_t lda) const override {
    real_form::zero_block(A, lda, n_);
    for (size_t k = 0; k < parts_.size(); ++k)
      parts_[k]->log_kernel(X + offset_[k] * (ldx + 1), ldx, A + offset_[k] * (lda + 1), lda);
  }

  void sample_kernel(Rng& rng, double* out, int64_t ldo) const override {
    real_form::zero_block(out, ldo, n_);
    for (size_t k = 0; k < parts_.size(); ++k) parts_[k]->sample_kernel(rng, out + offset_[k] * (ldo + 1), ldo);
  }

  // Unitarity of the whole, the (complex-norm) size of the off-block entries, and each
  // factor's own defect of its block.
  double defect_kernel(const double* H, int64_t ldh) const override {
    std::vector<int64_t> block(static_cast<size_t>(n_));
    for (size_t k = 0; k < parts_.size(); ++k)
      for (int64_t i = 0; i < parts_[k]->n(); ++i) block[static_cast<size_t>(offset_[k] + i)] = int64_t(k);
    double off = 0;
    for (int64_t i = 0; i < n_; ++i)
      for (int64_t j = 0; j < n_; ++j)
        if (block[static_cast<size_t>(i)] != block[static_cast<size_t>(j)]) off += H[i * ldh + j] * H[i * ldh + j];
    double e = unitarity_defect(H, ldh) + std::sqrt(real_scale() * off);
    for (size_t k = 0; k < parts_.size(); ++k) e += parts_[k]->defect_kernel(H + offset_[k] * (ldh + 1), ldh);
    return e;
  }

  // Zeroes the off-block entries and restores each factor's pattern on its block.
  void restore_structure_kernel(double* H, int64_t ldh) const override { restore_t(H, ldh); }
  void restore_structure_kernel(float* H, int64_t ldh) const override { restore_t(H, ldh); }

 private:
  template <class T>
  void restore_t(T* H, int64_t ldh) const {
    for (size_t k = 0; k < parts_.size(); ++k) {
      const int64_t lo = offset_[k], hi = offset_[k] + parts_[k]->n();
      for (int64_t i = lo; i < hi; ++i)
        for (int64_t j = 0; j < n_; ++j)
          if (j < lo || j >= hi) H[i * ldh + j] = T(0);
      parts_[k]->restore_structure_kernel(H + lo * (ldh + 1), ldh);
    }
  }

  template <class T>
  void exp_t(int64_t N, const T* A, T* Q) const {
    for (int64_t b = 0; b < N; ++b) real_form::zero_block(Q + b * n_ * n_, n_, n_);
    for (size_t k = 0; k < parts_.size(); ++k) {
      const int64_t r = parts_[k]->n(), o = offset_[k];
      std::vector<T> in(static_cast<size_t>(N * r * r)), out(in.size());
      for (int64_t b = 0; b < N; ++b) copy_block(A + b * n_ * n_ + o * (n_ + 1), n_, in.data() + b * r * r, r, r);
      parts_[k]->exp_kernel(N, in.data(), out.data());
      for (int64_t b = 0; b < N; ++b) copy_block(out.data() + b * r * r, r, Q + b * n_ * n_ + o * (n_ + 1), n_, r);
    }
  }

  std::vector<std::unique_ptr<Group>> parts_;  // as stored (real factors complexified when mixed)
  std::vector<int64_t> offset_;                // first row/column of each block
  std::vector<int64_t> coord_;                 // first coordinate of each factor
  int64_t n_ = 0, m_ = 0;
  bool complex_ = false;
};

}  // namespace

std::unique_ptr<Group> make_product(std::vector<std::unique_ptr<Group>> factors) {
  std::vector<std::unique_ptr<Group>> flat;
  for (auto& f : factors) {
    if (!f) throw ValueError("make_product: a factor is null");
    if (auto* p = dynamic_cast<Product*>(f.get())) {
      for (auto& g : p->release()) flat.push_back(std::move(g));
    } else {
      flat.push_back(std::move(f));
    }
  }
  if (flat.empty()) throw ValueError("make_product: a product needs at least one factor");
  if (flat.size() == 1) return std::move(flat.front());
  return std::make_unique<Product>(std::move(flat));
}

}  // namespace liegrad::groups
