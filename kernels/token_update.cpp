// The fused token update (see token_update.hpp): kernels, tape wrapper, checks.
#include "kernels/token_update.hpp"

#include <memory>
#include <string>

#include "autograd/tape.hpp"
#include "core/buffer.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "core/profile.hpp"
#include "core/small_gemm.hpp"
#include "groups/expm_kernel.hpp"
#include "groups/group_ops.hpp"
#include "kernels/mixing.hpp"
#include "kernels/row_exponentials.hpp"

namespace liegrad::kernels {

using namespace groups;

namespace {

// What the forward keeps for the backward: the mixed coordinates u (V,m) and the
// exponentials of their rows (kernels/row_exponentials.hpp).
template <class T>
struct Saved {
  int64_t V = 0, n = 0, m = 0;
  Buffer<T> u;
  RowExponentials<T> ex;
};

template <class T>
void forward(const Group& g, int64_t N, const T* H, const T* b, const T* gammaT, const std::vector<int32_t>& ids,
             T* out, Saved<T>& sv) {
  const int64_t n = g.n(), nn = n * n, m = g.dim(), V = sv.V;
  sv.n = n;
  sv.m = m;
  sv.u = Buffer<T>(V * m);
  if (gammaT) {
    prof::Sub mixing(prof::Family::Tangent);
    small_gemm_ld<T>(false, false, V, m, m, T(1), b, m, gammaT, m, T(0), sv.u.data(), m);
  } else {
    for (int64_t k = 0; k < V * m; ++k) sv.u.data()[k] = b[k];
  }
  exponentiate_rows(g, V, sv.u.data(), sv.ex);
  parallel_for(N, grain_for_flops(2 * n * n * n), [&](int64_t i) {
    const T* E = sv.ex.E.data() + static_cast<int64_t>(ids[static_cast<size_t>(i)]) * nn;
    small_gemm_ld<T>(false, false, n, n, n, T(1), H + i * nn, n, E, n, T(0), out + i * nn, n);
  });
}

// dH (N,n,n) is assigned when assign_dH, else added to; db (V,m) and dGamma (m,m) are
// added to; null pointers skip.
template <class T>
void backward(const Group& g, const Saved<T>& sv, const T* G, const T* H, const T* b, const T* gamma,
              const std::vector<int32_t>& ids, T* dH, bool assign_dH, T* db, T* dGamma) {
  const int64_t N = static_cast<int64_t>(ids.size()), n = sv.n, nn = n * n, m = sv.m, V = sv.V;
  if (dH)
    parallel_for(N, grain_for_flops(2 * n * n * n), [&](int64_t i) {
      const T* E = sv.ex.E.data() + static_cast<int64_t>(ids[static_cast<size_t>(i)]) * nn;
      small_gemm_ld<T>(false, true, n, n, n, T(1), G + i * nn, n, E, n, assign_dH ? T(0) : T(1), dH + i * nn, n);
    });
  if (!db && !dGamma) return;
  // The positions of each token, so that each exponential's pullback runs once.
  std::vector<std::vector<int64_t>> where(static_cast<size_t>(V));
  for (int64_t i = 0; i < N; ++i) where[static_cast<size_t>(ids[static_cast<size_t>(i)])].push_back(i);
  std::vector<bool> unused(static_cast<size_t>(V));
  for (int64_t v = 0; v < V; ++v) unused[static_cast<size_t>(v)] = where[static_cast<size_t>(v)].empty();
  // dE_v^T = sum_i G_i^T H_i over the positions of token v
  Buffer<T> dEt(V * nn);
  parallel_for(V, 1, [&](int64_t v) {
    T* d = dEt.data() + v * nn;
    for (int64_t k = 0; k < nn; ++k) d[k] = T(0);
    for (int64_t i : where[static_cast<size_t>(v)])
      small_gemm_ld<T>(true, false, n, n, n, T(1), G + i * nn, n, H + i * nn, n, T(1), d, n);
  });
  Buffer<T> du(V * m);  // zero rows for tokens not in the batch
  pull_back_rows(g, V, sv.u.data(), sv.ex, dEt.data(), du.data(), unused);
  prof::Sub mixing(prof::Family::Tangent);
  if (!gamma) {
    if (db)
      for (int64_t k = 0; k < V * m; ++k) db[k] += du.data()[k];
    return;
  }
  if (dGamma) small_gemm_ld<T>(true, false, m, m, V, T(1), du.data(), m, b, m, T(1), dGamma, m);  // du^T b
  if (db) small_gemm_ld<T>(false, false, V, m, m, T(1), du.data(), m, gamma, m, T(1), db, m);      // du Gamma
}

}  // namespace

template <class T>
ag::Var<T> token_update(const Group& g, const ag::Var<T>& H, const ag::Var<T>& b, const ag::Var<T>& Gamma,
                        const std::vector<int32_t>& ids) {
  const int64_t n = g.n(), m = g.dim();
  const Shape& s = H.shape();
  if (s.ndim != 3 || s.rows() != n || s.cols() != n)
    throw ShapeError("token_update (" + g.name() + "): expected H of shape (N," + std::to_string(n) + "," +
                     std::to_string(n) + "), got " + s.str());
  if (b.shape().ndim != 2 || b.shape()[1] != m)
    throw ShapeError("token_update (" + g.name() + "): expected coordinates of shape (V," + std::to_string(m) +
                     "), got " + b.shape().str());
  if (Gamma.defined() && Gamma.shape() != Shape{m, m})
    throw ShapeError("token_update (" + g.name() + "): Gamma must be (" + std::to_string(m) + "," +
                     std::to_string(m) + "), got " + Gamma.shape().str());
  const int64_t N = s[0], V = b.shape()[0];
  if (static_cast<int64_t>(ids.size()) != N)
    throw ShapeError("token_update: " + std::to_string(ids.size()) + " ids for " + std::to_string(N) + " states");
  for (int32_t id : ids)
    if (id < 0 || id >= V)
      throw ValueError("token_update: token id " + std::to_string(id) + " outside [0, " + std::to_string(V) + ")");
  prof::Scope timed(prof::Family::SmallProducts);
  const Array<T> gammaT = gamma_transposed(Gamma);
  auto sv = std::make_shared<Saved<T>>();
  sv->V = V;
  Array<T> out = Array<T>::uninitialized(s);  // every matrix written (H E)
  forward(g, N, H.value().data(), b.value().data(), Gamma.defined() ? gammaT.data() : nullptr, ids, out.data(), *sv);
  return ag::record_op<T>(std::move(out), {&H, &b, &Gamma}, [&g, H, b, Gamma, ids, sv](const Array<T>& G) {
    prof::Scope timed_b(prof::Family::SmallProducts);
    const std::vector<ag::GradOut<T>> d = ag::grads_for_write<T>({&H});
    backward(g, *sv, G.data(), H.value().data(), b.value().data(), Gamma.defined() ? Gamma.value().data() : nullptr,
             ids, d[0].p, d[0].fresh, b.requires_grad() ? b.node()->grad_ref().data() : nullptr,
             Gamma.defined() && Gamma.requires_grad() ? Gamma.node()->grad_ref().data() : nullptr);
  });
}

template ag::Var<float> token_update(const Group&, const ag::Var<float>&, const ag::Var<float>&,
                                     const ag::Var<float>&, const std::vector<int32_t>&);
template ag::Var<double> token_update(const Group&, const ag::Var<double>&, const ag::Var<double>&,
                                      const ag::Var<double>&, const std::vector<int32_t>&);

std::vector<ag::OpCheck> token_update_op_checks() {
  std::vector<ag::OpCheck> c;
  for (const char* spec : {"SO(3)", "SO(5)", "U(2)", "SU(3)", "SO(2)xU(2)"}) {
    std::shared_ptr<const Group> g = make_group(spec);
    const int64_t m = g->dim(), V = 5;
    for (const bool mixed : {false, true}) {
      for (const int64_t N : {int64_t(3), int64_t(37)}) {
        const std::string name = std::string("group ") + g->name() + " token_update" + (mixed ? " (Gamma)" : "") +
                                 " N=" + std::to_string(N);
        c.push_back({name, [=](Rng& rng) {
                       std::vector<int32_t> ids(static_cast<size_t>(N));
                       for (int64_t i = 0; i < N; ++i) ids[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7 + 2) % (V - 1));
                       std::vector<Array<double>> in = {g->sample<double>(rng, N),
                                                        rng.normal_array<double>(Shape{V, m}, 0.7)};
                       if (mixed) in.push_back(rng.normal_array<double>(Shape{m, m}, 0.5));
                       return ag::check_vjp(
                           name,
                           [g, mixed, ids](const std::vector<ag::Vard>& x) {
                             return token_update(*g, x[0], x[1], mixed ? x[2] : ag::Vard(), ids);
                           },
                           in, rng);
                     }});
      }
    }
  }
  return c;
}

}  // namespace liegrad::kernels
