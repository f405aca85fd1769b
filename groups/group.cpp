// Group's batch operations (shape checks, OpenMP over the batch, float/double) and the
// default kernels shared by the groups: exp through groups::expm_forward, log through a
// complex Schur decomposition, and the unitarity defect.
//
// log of a unitary X (every element of every group here is one): X is normal, so its
// complex Schur form X = Q T Q* has a diagonal T (up to rounding) holding the eigenvalues
// e^{i theta_j}, and log X = Q diag(i theta_j) Q* with theta_j = arg T_jj in (-pi, pi]
// is the principal logarithm (Higham, "Functions of Matrices", 2008, ch. 11).
#include "groups/group.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/lapack.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"
#include "groups/expm.hpp"
#include "groups/group_impl.hpp"
#include "groups/real_form.hpp"

namespace liegrad::groups {

using lapack::cplx;

void require_group_size(const char* what, int64_t d, int64_t n_per_d) {
  if (d < 1) throw ValueError(std::string(what) + ": d must be >= 1, got " + std::to_string(d));
  if (d > kMaxGroupN / n_per_d)
    throw ValueError(std::string(what) + ": d = " + std::to_string(d) + " is too large: the limit is d <= " +
                     std::to_string(kMaxGroupN / n_per_d) + " (stored matrices of at most " + std::to_string(kMaxGroupN) +
                     " x " + std::to_string(kMaxGroupN) + ")");
}

namespace {

std::string dims_str(int64_t n) { return "(" + std::to_string(n) + "," + std::to_string(n) + ")"; }

// Number of matrices in X, which must be (n,n) or (N,n,n).
int64_t batch_of(const Group& g, const char* op, const Shape& s) {
  const int64_t n = g.n();
  const bool ok = (s.ndim == 2 || s.ndim == 3) && s.rows() == n && s.cols() == n;
  if (!ok)
    throw ShapeError(g.name() + "." + op + ": expected " + dims_str(n) + " or (N," + std::to_string(n) + "," +
                     std::to_string(n) + "), got " + s.str());
  return s.batch();
}

}  // namespace

template <class T>
Array<T> Group::project(const Array<T>& X) const {
  const int64_t N = batch_of(*this, "project", X.shape()), nn = n() * n();
  Array<T> out(X.shape());
  const T* px = X.data();
  T* po = out.data();
  parallel_for(N, grain_for_matrices(n()), [&](int64_t b) { project_kernel(px + b * nn, n(), po + b * nn, n()); });
  return out;
}

template <class T>
Array<T> Group::hat(const Array<T>& u) const {
  const Shape& s = u.shape();
  const int64_t m = dim(), nn = n() * n();
  if (!((s.ndim == 1 || s.ndim == 2) && s.cols() == m))
    throw ShapeError(name() + ".hat: expected coordinates (m) or (N,m) with m = " + std::to_string(m) + ", got " +
                     s.str());
  const int64_t N = s.ndim == 2 ? s[0] : 1;
  Array<T> out(s.ndim == 2 ? Shape{N, n(), n()} : Shape{n(), n()});
  const T* pu = u.data();
  T* po = out.data();
  parallel_for(N, grain_for_matrices(n()), [&](int64_t b) { hat_kernel(pu + b * m, po + b * nn, n()); });
  return out;
}

template <class T>
Array<T> Group::vee(const Array<T>& A) const {
  const int64_t N = batch_of(*this, "vee", A.shape()), m = dim(), nn = n() * n();
  Array<T> out(A.ndim() == 3 ? Shape{N, m} : Shape{m});
  const T* pa = A.data();
  T* po = out.data();
  parallel_for(N, grain_for_matrices(n()), [&](int64_t b) { vee_kernel(pa + b * nn, n(), po + b * m); });
  return out;
}

template <class T>
Array<T> Group::exp(const Array<T>& A) const {
  const int64_t N = batch_of(*this, "exp", A.shape());
  Array<T> out(A.shape());
  exp_kernel(N, A.data(), out.data());
  return out;
}

template <class T>
Array<T> Group::log(const Array<T>& X) const {
  const int64_t N = batch_of(*this, "log", X.shape()), nn = n() * n();
  const Array<double> Xd = X.template cast<double>();
  Array<double> out(X.shape());
  for (int64_t b = 0; b < N; ++b) log_kernel(Xd.data() + b * nn, n(), out.data() + b * nn, n());
  return out.template cast<T>();
}

template <class T>
Array<T> Group::compose(const Array<T>& X, const Array<T>& Y) const {
  const int64_t Nx = batch_of(*this, "compose", X.shape()), Ny = batch_of(*this, "compose", Y.shape());
  const bool bx = X.ndim() == 3, by = Y.ndim() == 3;
  if (bx && by && Nx != Ny)
    throw ShapeError(name() + ".compose: batch sizes differ: " + X.shape().str() + " and " + Y.shape().str());
  const int64_t N = bx ? Nx : Ny, nn = n() * n();
  Array<T> out(bx ? X.shape() : Y.shape());
  batched_gemm<T>(N, false, false, n(), n(), n(), T(1), X.data(), bx ? nn : 0, Y.data(), by ? nn : 0, T(0),
                  out.data(), nn);
  return out;
}

template <class T>
Array<T> Group::inverse(const Array<T>& X) const {
  const int64_t N = batch_of(*this, "inverse", X.shape()), k = n(), nn = k * k;
  Array<T> out(X.shape());
  const T* px = X.data();
  T* po = out.data();
  parallel_for(N, grain_for_matrices(k), [&](int64_t b) {
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j) po[b * nn + j * k + i] = px[b * nn + i * k + j];
  });
  return out;
}

template <class T>
Array<T> Group::inner(const Array<T>& H, const Array<T>& P) const {
  const int64_t N = batch_of(*this, "inner", H.shape()), nn = n() * n();
  batch_of(*this, "inner", P.shape());
  require_same_shape((name() + ".inner").c_str(), H.shape(), P.shape());
  Array<T> out(H.ndim() == 3 ? Shape{N} : Shape{});
  const double s = real_scale();
  for (int64_t b = 0; b < N; ++b) {
    double acc = 0;
    for (int64_t i = 0; i < nn; ++i) acc += double(H[b * nn + i]) * double(P[b * nn + i]);
    out[b] = static_cast<T>(s * acc);
  }
  return out;
}

template <class T>
Array<T> Group::identity() const {
  return Array<T>::eye(n());
}

template <class T>
Array<T> Group::sample(Rng& rng) const {
  Array<double> out(Shape{n(), n()});
  sample_kernel(rng, out.data(), n());
  return out.template cast<T>();
}

template <class T>
Array<T> Group::sample(Rng& rng, int64_t N) const {
  if (N < 0) throw ValueError(name() + ".sample: batch size must be >= 0, got " + std::to_string(N));
  const int64_t nn = n() * n();
  Array<double> out(Shape{N, n(), n()});
  for (int64_t b = 0; b < N; ++b) sample_kernel(rng, out.data() + b * nn, n());
  return out.template cast<T>();
}

template <class T>
double Group::defect(const Array<T>& H) const {
  const int64_t N = batch_of(*this, "defect", H.shape()), nn = n() * n();
  const Array<double> Hd = H.template cast<double>();
  double worst = 0;
  for (int64_t b = 0; b < N; ++b) worst = std::max(worst, defect_kernel(Hd.data() + b * nn, n()));
  return worst;
}

// ---- default kernels ----

void Group::exp_kernel(int64_t N, const double* A, double* Q) const { expm_forward<double>(N, n(), A, Q); }
void Group::exp_kernel(int64_t N, const float* A, float* Q) const { expm_forward<float>(N, n(), A, Q); }

void Group::log_kernel(const double* X, int64_t ldx, double* A, int64_t lda) const {
  const int64_t k = n();
  std::vector<double> L(static_cast<size_t>(k * k));
  unitary_log(X, ldx, L.data(), k, false);
  project_kernel(L.data(), k, A, lda);  // removes rounding outside g
}

double Group::defect_kernel(const double* H, int64_t ldh) const { return unitarity_defect(H, ldh); }

// Real groups store plain n x n matrices: every real matrix has their pattern.
void Group::restore_structure_kernel(double*, int64_t) const {}
void Group::restore_structure_kernel(float*, int64_t) const {}

void Group::unitary_log(const double* X, int64_t ldx, double* A, int64_t lda, bool traceless) const {
  const int64_t d = complex_dim();
  std::vector<cplx> Z(static_cast<size_t>(d * d)), Q(static_cast<size_t>(d * d));
  if (is_complex()) {
    real_form::to_complex(d, X, ldx, Z.data());
  } else {
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) Z[static_cast<size_t>(i * d + j)] = X[i * ldx + j];
  }
  lapack::schur(d, Z.data(), Q.data());  // Z <- T
  std::vector<double> theta(static_cast<size_t>(d));
  double sum = 0;
  for (int64_t j = 0; j < d; ++j) sum += theta[static_cast<size_t>(j)] = std::arg(Z[static_cast<size_t>(j * d + j)]);
  if (traceless && d > 0) {
    // det X = 1 makes sum(theta) a multiple of 2 pi; move the extreme angles across the cut.
    const double two_pi = 2 * std::numbers::pi;
    for (long k = std::lround(sum / two_pi); k != 0; k += k > 0 ? -1 : 1) {
      auto it = k > 0 ? std::max_element(theta.begin(), theta.end()) : std::min_element(theta.begin(), theta.end());
      *it += k > 0 ? -two_pi : two_pi;
    }
  }
  // L = Q diag(i theta) Q*.
  std::vector<cplx> L(static_cast<size_t>(d * d));
  for (int64_t a = 0; a < d; ++a)
    for (int64_t b = 0; b < d; ++b) {
      cplx acc = 0;
      for (int64_t j = 0; j < d; ++j)
        acc += Q[static_cast<size_t>(a * d + j)] * cplx(0, theta[static_cast<size_t>(j)]) *
               std::conj(Q[static_cast<size_t>(b * d + j)]);
      L[static_cast<size_t>(a * d + b)] = acc;
    }
  if (is_complex()) {
    real_form::from_complex(d, L.data(), A, lda);
    return;
  }
  double imag = 0, scale = 1;
  for (const cplx& z : L) {
    imag = std::max(imag, std::abs(z.imag()));
    scale = std::max(scale, std::abs(z));
  }
  if (imag > 1e-6 * scale)
    throw ValueError(name() + ".log: no real logarithm: the matrix has an eigenvalue -1 (the cut locus; every " +
                     "element of O(d) with det -1 is there), largest imaginary part " + std::to_string(imag));
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) A[i * lda + j] = L[static_cast<size_t>(i * d + j)].real();
}

double Group::unitarity_defect(const double* H, int64_t ldh) const {
  const int64_t k = n();
  double s = 0;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      double acc = i == j ? -1.0 : 0.0;  // (H^T H - I)_ij
      for (int64_t r = 0; r < k; ++r) acc += H[r * ldh + i] * H[r * ldh + j];
      s += acc * acc;
    }
  return std::sqrt(real_scale() * s);
}

#define LIEGRAD_INSTANTIATE(T)                                                  \
  template Array<T> Group::project(const Array<T>&) const;                      \
  template Array<T> Group::hat(const Array<T>&) const;                          \
  template Array<T> Group::vee(const Array<T>&) const;                          \
  template Array<T> Group::exp(const Array<T>&) const;                          \
  template Array<T> Group::log(const Array<T>&) const;                          \
  template Array<T> Group::compose(const Array<T>&, const Array<T>&) const;     \
  template Array<T> Group::inverse(const Array<T>&) const;                      \
  template Array<T> Group::inner(const Array<T>&, const Array<T>&) const;       \
  template Array<T> Group::identity() const;                                    \
  template Array<T> Group::sample(Rng&) const;                                  \
  template Array<T> Group::sample(Rng&, int64_t) const;                         \
  template double Group::defect(const Array<T>&) const;
LIEGRAD_INSTANTIATE(float)
LIEGRAD_INSTANTIATE(double)
#undef LIEGRAD_INSTANTIATE

}  // namespace liegrad::groups
