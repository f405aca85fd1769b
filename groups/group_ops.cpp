// Group tape ops: kernels, wrappers and their gradient checks (see group_ops.hpp for
// the adjoint formulas). Per-matrix work runs through the group's kernels with OpenMP
// over the batch; inner_all is one BLAS GEMM, called from serial code.
#include "groups/group_ops.hpp"

#include <algorithm>

#include "autograd/matmul.hpp"
#include "autograd/tape.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"
#include "core/profile.hpp"
#include "groups/expm.hpp"
#include "groups/rotation_6d.hpp"

namespace liegrad::groups {

namespace {

std::string nn_str(int64_t n) { return "(" + std::to_string(n) + "," + std::to_string(n) + ")"; }

// Number of matrices in X, which must be (n,n) or (N,n,n) (or exactly 3-D when batch_only).
int64_t matrices(const Group& g, const char* op, const Shape& s, bool batch_only = false) {
  const int64_t n = g.n();
  const bool ok = (s.ndim == 3 || (s.ndim == 2 && !batch_only)) && s.rows() == n && s.cols() == n;
  if (!ok)
    throw ShapeError(std::string(op) + " (" + g.name() + "): expected " +
                     (batch_only ? "" : nn_str(n) + " or ") + "(N," + std::to_string(n) + "," + std::to_string(n) +
                     "), got " + s.str());
  return s.batch();
}

}  // namespace

// ---- kernels ----

template <class T>
void project_forward(const Group& g, int64_t N, const T* X, T* out) {
  const int64_t n = g.n(), nn = n * n;
  parallel_for(N, grain_for_matrices(n), [&](int64_t b) { g.project_kernel(X + b * nn, n, out + b * nn, n); });
}

template <class T>
void project_backward(const Group& g, int64_t N, const T* dout, T* dX) {
  const int64_t n = g.n(), nn = n * n;
  parallel_for(N, grain_for_matrices(n), [&](int64_t b) {
    std::vector<T> tmp(static_cast<size_t>(nn));
    g.project_kernel(dout + b * nn, n, tmp.data(), n);
    for (int64_t i = 0; i < nn; ++i) dX[b * nn + i] += tmp[static_cast<size_t>(i)];
  });
}

template <class T>
void hat_forward(const Group& g, int64_t N, const T* u, T* out) {
  const int64_t n = g.n(), nn = n * n, m = g.dim();
  parallel_for(N, grain_for_matrices(n), [&](int64_t b) { g.hat_kernel(u + b * m, out + b * nn, n); });
}

template <class T>
void hat_backward(const Group& g, int64_t N, const T* dout, T* du) {
  const int64_t n = g.n(), nn = n * n, m = g.dim();
  const T inv_s = static_cast<T>(1.0 / g.real_scale());
  parallel_for(N, grain_for_matrices(n), [&](int64_t b) {
    std::vector<T> tmp(static_cast<size_t>(m));
    g.vee_kernel(dout + b * nn, n, tmp.data());
    for (int64_t k = 0; k < m; ++k) du[b * m + k] += inv_s * tmp[static_cast<size_t>(k)];
  });
}

template <class T>
void vee_forward(const Group& g, int64_t N, const T* A, T* u) {
  const int64_t n = g.n(), nn = n * n, m = g.dim();
  parallel_for(N, grain_for_matrices(n), [&](int64_t b) { g.vee_kernel(A + b * nn, n, u + b * m); });
}

template <class T>
void vee_backward(const Group& g, int64_t N, const T* du, T* dA) {
  const int64_t n = g.n(), nn = n * n, m = g.dim();
  const T s = static_cast<T>(g.real_scale());
  parallel_for(N, grain_for_matrices(n), [&](int64_t b) {
    std::vector<T> tmp(static_cast<size_t>(nn));
    g.hat_kernel(du + b * m, tmp.data(), n);
    for (int64_t i = 0; i < nn; ++i) dA[b * nn + i] += s * tmp[static_cast<size_t>(i)];
  });
}

template <class T>
void inner_all_forward(const Group& g, int64_t N, int64_t V, const T* H, const T* P, T* out) {
  const int64_t nn = g.n() * g.n();
  if (N == 0 || V == 0) return;
  gemm<T>(false, true, N, V, nn, static_cast<T>(g.real_scale()), H, nn, P, nn, T(0), out, V);
}

template <class T>
void inner_all_backward(const Group& g, int64_t N, int64_t V, const T* dout, const T* H, const T* P, T* dH,
                        T* dP) {
  const int64_t nn = g.n() * g.n();
  const T s = static_cast<T>(g.real_scale());
  if (N == 0 || V == 0) return;
  std::vector<GemmCall<T>> calls;  // both products in one parallel region
  if (dH) calls.push_back({false, false, N, nn, V, s, dout, V, P, nn, T(1), dH, nn});
  if (dP) calls.push_back({true, false, V, nn, N, s, dout, V, H, nn, T(1), dP, nn});
  gemm_group<T>(calls);
}

// ---- tape wrappers ----

template <class T>
ag::Var<T> project(const Group& g, const ag::Var<T>& X) {
  const int64_t N = matrices(g, "project", X.shape());
  prof::Scope timed(prof::Family::Tangent);
  Array<T> out(X.shape());
  project_forward(g, N, X.value().data(), out.data());
  return ag::record_op<T>(std::move(out), {&X}, [&g, X, N](const Array<T>& G) {
    prof::Scope timed_b(prof::Family::Tangent);
    project_backward(g, N, G.data(), X.node()->grad_ref().data());
  });
}

template <class T>
ag::Var<T> hat(const Group& g, const ag::Var<T>& u) {
  const Shape& s = u.shape();
  const int64_t m = g.dim(), n = g.n();
  if (!((s.ndim == 1 || s.ndim == 2) && s.cols() == m))
    throw ShapeError("hat (" + g.name() + "): expected coordinates (m) or (N,m) with m = " + std::to_string(m) +
                     ", got " + s.str());
  const int64_t N = s.ndim == 2 ? s[0] : 1;
  Array<T> out(s.ndim == 2 ? Shape{N, n, n} : Shape{n, n});
  prof::Scope timed(prof::Family::Tangent);
  hat_forward(g, N, u.value().data(), out.data());
  return ag::record_op<T>(std::move(out), {&u}, [&g, u, N](const Array<T>& G) {
    prof::Scope timed_b(prof::Family::Tangent);
    hat_backward(g, N, G.data(), u.node()->grad_ref().data());
  });
}

template <class T>
ag::Var<T> vee(const Group& g, const ag::Var<T>& A) {
  const int64_t N = matrices(g, "vee", A.shape()), m = g.dim();
  Array<T> out(A.shape().ndim == 3 ? Shape{N, m} : Shape{m});
  prof::Scope timed(prof::Family::Tangent);
  vee_forward(g, N, A.value().data(), out.data());
  return ag::record_op<T>(std::move(out), {&A}, [&g, A, N](const Array<T>& G) {
    prof::Scope timed_b(prof::Family::Tangent);
    vee_backward(g, N, G.data(), A.node()->grad_ref().data());
  });
}

template <class T>
ag::Var<T> compose(const Group& g, const ag::Var<T>& H, const ag::Var<T>& P, bool conj_h, bool conj_p) {
  matrices(g, "compose", H.shape());
  matrices(g, "compose", P.shape());
  if (H.shape().ndim == 2 && P.shape().ndim == 3)
    throw ShapeError("compose (" + g.name() + "): a single left operand " + H.shape().str() +
                     " with a batch " + P.shape().str() + " on the right is not supported; make H a batch");
  if (H.shape().ndim == 3 && P.shape().ndim == 3 && H.shape()[0] != P.shape()[0])
    throw ShapeError("compose (" + g.name() + "): batch sizes differ: " + H.shape().str() + " and " +
                     P.shape().str());
  prof::Scope timed(prof::Family::SmallProducts);
  Array<T> out;
  ag::matmul_forward(out, H.value(), P.value(), conj_h, conj_p);
  return ag::record_op<T>(std::move(out), {&H, &P}, [H, P, conj_h, conj_p](const Array<T>& G) {
    prof::Scope timed_b(prof::Family::SmallProducts);
    ag::matmul_backward(H.requires_grad() ? &H.node()->grad_ref() : nullptr,
                        P.requires_grad() ? &P.node()->grad_ref() : nullptr, G, H.value(), P.value(), conj_h,
                        conj_p);
  });
}

template <class T>
ag::Var<T> inner_all(const Group& g, const ag::Var<T>& H, const ag::Var<T>& P) {
  const int64_t N = matrices(g, "inner_all", H.shape(), true);
  const int64_t V = matrices(g, "inner_all", P.shape(), true);
  prof::Scope timed(prof::Family::Readout);
  Array<T> out(Shape{N, V});
  inner_all_forward(g, N, V, H.value().data(), P.value().data(), out.data());
  return ag::record_op<T>(std::move(out), {&H, &P}, [&g, H, P, N, V](const Array<T>& G) {
    prof::Scope timed_b(prof::Family::Readout);
    inner_all_backward(g, N, V, G.data(), H.value().data(), P.value().data(),
                       H.requires_grad() ? H.node()->grad_ref().data() : nullptr,
                       P.requires_grad() ? P.node()->grad_ref().data() : nullptr);
  });
}

#define LIEGRAD_INSTANTIATE(T)                                                                                  \
  template void project_forward(const Group&, int64_t, const T*, T*);                                           \
  template void project_backward(const Group&, int64_t, const T*, T*);                                          \
  template void hat_forward(const Group&, int64_t, const T*, T*);                                               \
  template void hat_backward(const Group&, int64_t, const T*, T*);                                              \
  template void vee_forward(const Group&, int64_t, const T*, T*);                                               \
  template void vee_backward(const Group&, int64_t, const T*, T*);                                              \
  template void inner_all_forward(const Group&, int64_t, int64_t, const T*, const T*, T*);                      \
  template void inner_all_backward(const Group&, int64_t, int64_t, const T*, const T*, const T*, T*, T*);       \
  template ag::Var<T> project(const Group&, const ag::Var<T>&);                                                 \
  template ag::Var<T> hat(const Group&, const ag::Var<T>&);                                                     \
  template ag::Var<T> vee(const Group&, const ag::Var<T>&);                                                     \
  template ag::Var<T> compose(const Group&, const ag::Var<T>&, const ag::Var<T>&, bool, bool);                  \
  template ag::Var<T> inner_all(const Group&, const ag::Var<T>&, const ag::Var<T>&);
LIEGRAD_INSTANTIATE(float)
LIEGRAD_INSTANTIATE(double)
#undef LIEGRAD_INSTANTIATE

// ---- gradient checks ----

namespace {

using ArrayD = Array<double>;  // not `A`: unity builds put this file beside ones with an argument A
using Vs = std::vector<ag::Vard>;

// A check whose inputs are Gaussian arrays of the given shapes, except those marked 'g',
// which are Haar samples of the group (shape (N,n,n)).
ag::OpCheck group_check(const std::shared_ptr<const Group>& g, const std::string& op, std::vector<Shape> shapes,
                        std::string kinds, std::function<ag::Vard(const Group&, const Vs&)> f) {
  const std::string name = "group " + g->name() + " " + op;
  return {name, [=](Rng& rng) {
            std::vector<ArrayD> inputs;
            for (size_t i = 0; i < shapes.size(); ++i)
              inputs.push_back(kinds[i] == 'g' ? g->sample<double>(rng, shapes[i][0])
                                               : rng.normal_array<double>(shapes[i]));
            return ag::check_vjp(name, [g, f](const Vs& x) { return f(*g, x); }, inputs, rng);
          }};
}

}  // namespace

std::vector<ag::OpCheck> group_op_checks() {
  std::vector<ag::OpCheck> c;
  const int64_t N = 3, V = 4;
  for (const char* spec : {"SO(3)", "O(4)", "U(2)", "SU(3)", "T(3)", "SO(2)xSO(3)", "SO(3)xU(2)", "SU(2)xT(1)"}) {
    std::shared_ptr<const Group> g = make_group(spec);
    const int64_t n = g->n(), m = g->dim();
    const Shape mats{N, n, n}, one{n, n}, coords{N, m};
    c.push_back(group_check(g, "project", {mats}, "n", [](const Group& gr, const Vs& x) {
      return project(gr, x[0]);
    }));
    c.push_back(group_check(g, "hat", {coords}, "n", [](const Group& gr, const Vs& x) { return hat(gr, x[0]); }));
    c.push_back(group_check(g, "vee", {mats}, "n", [](const Group& gr, const Vs& x) { return vee(gr, x[0]); }));
    c.push_back(group_check(g, "compose", {mats, mats}, "nn", [](const Group& gr, const Vs& x) {
      return compose(gr, x[0], x[1]);
    }));
    c.push_back(group_check(g, "compose H*M", {mats, mats}, "gn", [](const Group& gr, const Vs& x) {
      return compose(gr, x[0], x[1], true, false);
    }));
    c.push_back(group_check(g, "compose H P* (shared P)", {mats, one}, "nn", [](const Group& gr, const Vs& x) {
      return compose(gr, x[0], x[1], false, true);
    }));
    c.push_back(group_check(g, "inner_all", {mats, Shape{V, n, n}}, "gg", [](const Group& gr, const Vs& x) {
      return inner_all(gr, x[0], x[1]);
    }));
    // The spec's state update H exp(hat(vee(Pi(H* M)))) (vee of a projection is vee itself;
    // both are chained on purpose), through the differentiable exp.
    c.push_back(group_check(g, "rplus chain", {mats, mats}, "gn", [](const Group& gr, const Vs& x) {
      const ag::Vard u = vee(gr, project(gr, compose(gr, x[0], x[1], true, false)));
      return compose(gr, x[0], expm(hat(gr, u)));
    }));
  }
  for (ag::OpCheck& r : rotation_op_checks()) c.push_back(std::move(r));  // the 6D rotation head (rotation_6d.hpp)
  return c;
}

}  // namespace liegrad::groups
