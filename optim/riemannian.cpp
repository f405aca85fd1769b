// Riemannian-step kernels for manifold-mode group parameters (see riemannian.hpp).
//
// Gradient convention: with dL = tr(grad^T dW) (what autograd computes) and the right
// perturbation W exp(hat(u)), dL/du at u = 0 is hat^T(W^T grad) = vee(W^T grad) / s,
// s = real_scale() (group.hpp). That is the Riemannian gradient's coordinates in the
// spec's metric Re tr(A* B), for which hat is an isometry; for real groups (s = 1) it
// is exactly vee(Pi_g(W^T grad)). It equals the gradient an algebra-mode parameter
// would get at the same point, so the two modes take the same first step from W = I.
#include "optim/riemannian.hpp"

#include <cmath>
#include <vector>

#include "core/linalg.hpp"
#include "groups/group.hpp"

namespace liegrad::optim {

int64_t algebra_dim(const groups::Group& G) { return G.dim(); }
int64_t matrix_side(const groups::Group& G) { return G.n(); }

namespace {
// (V,n,n) view of a (n,n) or (V,n,n) array, for the batch operations.
template <class T>
Array<T> as_batch(const Array<T>& X) {
  return X.ndim() == 3 ? X : X.reshaped(Shape{1, X.shape().rows(), X.shape().cols()});
}
}  // namespace

template <class T>
Array<T> riemannian_grad_coords(const groups::Group& G, const Array<T>& W, const Array<T>& grad) {
  require_same_shape("riemannian_grad_coords", W.shape(), grad.shape());
  const int64_t n = G.n(), V = W.shape().batch(), nn = n * n;
  Array<T> M(Shape{V, n, n});  // W_b^T grad_b
  batched_gemm<T>(V, true, false, n, n, n, T(1), W.data(), nn, grad.data(), nn, T(0), M.data(), nn);
  Array<T> g = G.vee(M);  // (V,m)
  const double inv_s = 1.0 / G.real_scale();
  if (inv_s != 1.0)
    for (int64_t k = 0; k < g.size(); ++k) g[k] = static_cast<T>(static_cast<double>(g[k]) * inv_s);
  return g;
}

template <class T>
void retract_exp(const groups::Group& G, Array<T>& W, const Array<T>& u) {
  // In double, with one rounding to T at the end: fewer rounding errors per step means
  // less drift off the group (and the real-form / block structure is kept exactly).
  const int64_t n = G.n(), V = W.shape().batch(), nn = n * n;
  if (u.size() != V * G.dim())
    throw ShapeError("retract_exp: " + std::to_string(u.size()) + " coordinates for " + std::to_string(V) +
                     " elements of " + G.name() + " (m = " + std::to_string(G.dim()) + ")");
  const Array<double> Q = G.exp(G.hat(u.template cast<double>().reshaped(Shape{V, G.dim()})));  // (V,n,n)
  const Array<double> Wd = as_batch(W).template cast<double>();
  Array<double> out(Shape{V, n, n});
  batched_gemm<double>(V, false, false, n, n, n, 1.0, Wd.data(), nn, Q.data(), nn, 0.0, out.data(), nn);
  for (int64_t k = 0; k < W.size(); ++k) W[k] = static_cast<T>(out[k]);
}

template <class T>
double polar_reorthonormalise(Array<T>& W, int max_iters) {
  const int64_t n = W.shape().rows(), V = W.shape().batch(), nn = n * n;
  if (W.shape().cols() != n)
    throw ShapeError("polar_reorthonormalise: matrices must be square, got " + W.shape().str());
  double worst = 0;
  std::vector<double> X(static_cast<size_t>(nn)), E(static_cast<size_t>(nn)), XE(static_cast<size_t>(nn));
  // E = X^T X - I, returns ||E||_F.
  auto residual = [&]() {
    small_gemm<double>(true, false, n, n, n, 1.0, X.data(), X.data(), 0.0, E.data());
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) {
      E[static_cast<size_t>(i * n + i)] -= 1.0;
      for (int64_t j = 0; j < n; ++j) ss += E[static_cast<size_t>(i * n + j)] * E[static_cast<size_t>(i * n + j)];
    }
    return std::sqrt(ss);
  };
  for (int64_t b = 0; b < V; ++b) {
    T* w = W.data() + b * nn;
    for (int64_t k = 0; k < nn; ++k) X[static_cast<size_t>(k)] = static_cast<double>(w[k]);
    double e = residual();
    worst = std::max(worst, e);
    if (!std::isfinite(e) || e >= 1.0) continue;  // Newton-Schulz converges only for ||E|| < 1
    for (int it = 0; it < max_iters && e > 1e-15; ++it) {
      // X <- X (3I - X^T X) / 2 = X - X E / 2 (Higham 2008, eq. 8.20)
      small_gemm<double>(false, false, n, n, n, 1.0, X.data(), E.data(), 0.0, XE.data());
      for (int64_t k = 0; k < nn; ++k) X[static_cast<size_t>(k)] -= 0.5 * XE[static_cast<size_t>(k)];
      const double e_new = residual();
      if (!(e_new < e)) break;
      e = e_new;
    }
    for (int64_t k = 0; k < nn; ++k) w[k] = static_cast<T>(X[static_cast<size_t>(k)]);
  }
  return worst;
}

template Array<float> riemannian_grad_coords(const groups::Group&, const Array<float>&, const Array<float>&);
template Array<double> riemannian_grad_coords(const groups::Group&, const Array<double>&, const Array<double>&);
template void retract_exp(const groups::Group&, Array<float>&, const Array<float>&);
template void retract_exp(const groups::Group&, Array<double>&, const Array<double>&);
template double polar_reorthonormalise(Array<float>&, int);
template double polar_reorthonormalise(Array<double>&, int);

}  // namespace liegrad::optim
