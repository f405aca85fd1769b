// The fused relative update (see update_ops.hpp): kernels, tape wrapper, checks.
#include "kernels/relative_update.hpp"

#include <omp.h>

#include <algorithm>
#include <memory>

#include "autograd/elementwise.hpp"
#include "autograd/tape.hpp"
#include "core/buffer.hpp"
#include "core/parallel.hpp"
#include "core/profile.hpp"
#include "core/small_gemm.hpp"
#include "groups/expm_kernel.hpp"
#include "kernels/mixing.hpp"
#include "groups/group_ops.hpp"

namespace liegrad::kernels {

using namespace groups;

namespace {

constexpr int64_t kChunk = 16;

// What the forward keeps for the backward.
template <class T>
struct Saved {
  int64_t N = 0, n = 0, m = 0;
  Buffer<T> r, u;              // (N,m), every row written; u empty for identity mixing (u = r)
  Buffer<T> E;                 // (N,n,n), every matrix written
  std::vector<ExpmPlan> plans;        // (N)
  std::vector<int64_t> offset;        // (N) into the token's chunk cache
  std::vector<GrowBuffer<T>> cache;   // per chunk of kChunk tokens: the exponentials' forward products
  const T* coords() const { return u.empty() ? r.data() : u.data(); }
};

// Runs body(chunk_begin, chunk_end, thread) over chunks of kChunk tokens, in parallel
// when there is enough work.
template <class F>
void for_chunks(int64_t N, int64_t n, F&& body) {
  const int64_t chunks = (N + kChunk - 1) / kChunk;
  const bool parallel = chunks > 1 && 20 * N * n * n * n >= kMinParallelFlops && !in_parallel_region();
#pragma omp parallel if (parallel)
  {
    const int t = omp_get_thread_num();
#pragma omp for schedule(dynamic, 4)  // dynamic: a thread the OS delays holds up little work
    for (int64_t c = 0; c < chunks; ++c) body(c * kChunk, std::min(N, (c + 1) * kChunk), t);
  }
}

int threads_for(int64_t N, int64_t n) {
  const int64_t chunks = (N + kChunk - 1) / kChunk;
  return (chunks > 1 && 20 * N * n * n * n >= kMinParallelFlops && !in_parallel_region()) ? num_threads() : 1;
}

template <class T>
void forward(const Group& g, int64_t N, const T* H, const T* P, const T* gammaT, T* out, Saved<T>& sv) {
  const int64_t n = g.n(), nn = n * n, m = g.dim();
  sv.N = N;
  sv.n = n;
  sv.m = m;
  sv.r = Buffer<T>(N * m);
  if (gammaT) sv.u = Buffer<T>(N * m);
  sv.E = Buffer<T>(N * nn);
  sv.plans.assign(static_cast<size_t>(N), ExpmPlan{});
  sv.offset.assign(static_cast<size_t>(N), 0);
  sv.cache.resize(static_cast<size_t>((N + kChunk - 1) / kChunk));
  // One pass per chunk: coordinates u, then E = exp(hat(u)) and H' = H E per token.
  for_chunks(N, n, [&](int64_t i0, int64_t i1, int) {
    prof::Sub timed(prof::Family::SmallProducts);
    std::vector<T> R(static_cast<size_t>(nn)), scratch(static_cast<size_t>(expm_forward_scratch(n)));
    for (int64_t i = i0; i < i1; ++i) {
      small_gemm_ld<T>(true, false, n, n, n, T(1), H + i * nn, n, P + i * nn, n, T(0), R.data(), n);
      g.vee_kernel(R.data(), n, sv.r.data() + i * m);
    }
    if (gammaT) {
      prof::Sub mixing(prof::Family::Tangent);
      small_gemm_ld<T>(false, false, i1 - i0, m, m, T(1), sv.r.data() + i0 * m, m, gammaT, m, T(0),
                       sv.u.data() + i0 * m, m);
    }
    GrowBuffer<T>& cache = sv.cache[static_cast<size_t>(i0 / kChunk)];
    cache.reserve((i1 - i0) * kReservedCachedProducts * nn);
    for (int64_t i = i0; i < i1; ++i) {
      g.hat_kernel(sv.coords() + i * m, R.data(), n);  // A
      T* E = sv.E.data() + i * nn;
      const CachedExpm rec = expm_one_forward_cached(n, R.data(), E, scratch.data(), cache, ExponentKind::Skew);
      sv.plans[static_cast<size_t>(i)] = rec.plan;
      sv.offset[static_cast<size_t>(i)] = rec.offset;
      small_gemm_ld<T>(false, false, n, n, n, T(1), H + i * nn, n, E, n, T(0), out + i * nn, n);
    }
  });
}

// dH, dP (N,n,n) and dGamma (m,m) accumulate (+=), except that dH (dP) is assigned
// (its old contents never read) when assign_dH (assign_dP); null pointers skip.
template <class T>
void backward(const Group& g, const Saved<T>& sv, const T* G, const T* H, const T* P, const T* gamma, T* dH, T* dP,
              T* dGamma, bool assign_dH, bool assign_dP) {
  const int64_t N = sv.N, n = sv.n, nn = n * n, m = sv.m;
  const T s = static_cast<T>(g.real_scale()), inv_s = static_cast<T>(1.0 / g.real_scale());
  const int threads = threads_for(N, n);
  std::vector<std::vector<T>> dgamma_t(static_cast<size_t>(dGamma ? threads : 0));
  for_chunks(N, n, [&](int64_t i0, int64_t i1, int t) {
    prof::Sub timed(prof::Family::SmallProducts);
    const int64_t C = i1 - i0;
    std::vector<T> dEt(static_cast<size_t>(nn)), A(static_cast<size_t>(nn)), dAt(static_cast<size_t>(nn));
    std::vector<T> scratch(static_cast<size_t>(expm_pullback_scratch(n)));
    std::vector<T> du(static_cast<size_t>(kChunk * m)), dr(static_cast<size_t>(kChunk * m));
    for (int64_t i = i0; i < i1; ++i) {
      const T* Gi = G + i * nn;
      const T* Ei = sv.E.data() + i * nn;
      if (dH) small_gemm_ld<T>(false, true, n, n, n, T(1), Gi, n, Ei, n, assign_dH ? T(0) : T(1), dH + i * nn, n);
      // E's cotangent is dE = H^T G, and A's is dA = L(A^T, dE), whose transpose is
      // dAt = L(A, dE^T) (expm_one_tangent); vee(dA) = -vee(dAt) (vee reads the skew
      // part), so nothing is transposed: dE^T = G^T H is one product.
      small_gemm_ld<T>(true, false, n, n, n, T(1), Gi, n, H + i * nn, n, T(0), dEt.data(), n);
      g.hat_kernel(sv.coords() + i * m, A.data(), n);
      {
        prof::Sub exp_time(prof::Family::ExpPullback);
        expm_one_tangent(n, A.data(), sv.plans[static_cast<size_t>(i)], dEt.data(), dAt.data(), scratch.data(),
                         sv.cache[static_cast<size_t>(i / kChunk)].data() + sv.offset[static_cast<size_t>(i)]);
      }
      T* dui = du.data() + (i - i0) * m;
      g.vee_kernel(dAt.data(), n, dui);
      for (int64_t k = 0; k < m; ++k) dui[k] *= -inv_s;
    }
    const T* drows = du.data();
    if (gamma) {
      prof::Sub mixing(prof::Family::Tangent);
      if (dGamma) {
        std::vector<T>& acc = dgamma_t[static_cast<size_t>(t)];
        if (acc.empty()) acc.assign(static_cast<size_t>(m * m), T(0));
        // dGamma += du^T r  (u = r Gamma^T as rows)
        small_gemm_ld<T>(true, false, m, m, C, T(1), du.data(), m, sv.r.data() + i0 * m, m, T(1), acc.data(), m);
      }
      small_gemm_ld<T>(false, false, C, m, m, T(1), du.data(), m, gamma, m, T(0), dr.data(), m);
      drows = dr.data();
    }
    if (!dH && !dP) return;
    for (int64_t i = i0; i < i1; ++i) {
      g.hat_kernel(drows + (i - i0) * m, A.data(), n);  // dR / s
      // dH += s P (dR/s)^T = -s P (dR/s): algebra elements are skew (law "hat lands in the
      // skew matrices"), which spares the transpose of a B^T product.
      if (dH) small_gemm_ld<T>(false, false, n, n, n, -s, P + i * nn, n, A.data(), n, T(1), dH + i * nn, n);
      if (dP)
        small_gemm_ld<T>(false, false, n, n, n, s, H + i * nn, n, A.data(), n, assign_dP ? T(0) : T(1), dP + i * nn, n);
    }
  });
  if (dGamma)
    for (const auto& acc : dgamma_t)
      if (!acc.empty())
        for (int64_t k = 0; k < m * m; ++k) dGamma[k] += acc[static_cast<size_t>(k)];
}

}  // namespace

template <class T>
ag::Var<T> relative_update(const Group& g, const ag::Var<T>& H, const ag::Var<T>& P, const ag::Var<T>& Gamma) {
  const int64_t n = g.n(), m = g.dim();
  const Shape& s = H.shape();
  if (s.ndim != 3 || s.rows() != n || s.cols() != n || P.shape() != s)
    throw ShapeError("relative_update (" + g.name() + "): expected H and P of shape (N," + std::to_string(n) + "," +
                     std::to_string(n) + "), got " + s.str() + " and " + P.shape().str());
  const bool mixed = Gamma.defined();
  if (mixed && Gamma.shape() != Shape{m, m})
    throw ShapeError("relative_update (" + g.name() + "): Gamma must be (" + std::to_string(m) + "," +
                     std::to_string(m) + "), got " + Gamma.shape().str());
  const int64_t N = s[0];
  prof::Scope timed(prof::Family::SmallProducts);
  const Array<T> gammaT = gamma_transposed(Gamma);
  auto sv = std::make_shared<Saved<T>>();
  Array<T> out = Array<T>::uninitialized(s);  // every matrix written by forward (H E)
  forward(g, N, H.value().data(), P.value().data(), mixed ? gammaT.data() : nullptr, out.data(), *sv);
  return ag::record_op<T>(std::move(out), {&H, &P, &Gamma}, [&g, H, P, Gamma, sv](const Array<T>& G) {
    prof::Scope timed_b(prof::Family::SmallProducts);
    const bool mixed_b = Gamma.defined();
    // A gradient that has not flowed in yet is written, not zeroed and added to
    // (ag::grads_for_write; H and P one Var add into zeros).
    const auto [dH, dP] = ag::grads_for_write(H, P);
    backward(g, *sv, G.data(), H.value().data(), P.value().data(), mixed_b ? Gamma.value().data() : nullptr, dH.p, dP.p,
             mixed_b && Gamma.requires_grad() ? Gamma.node()->grad_ref().data() : nullptr, dH.fresh, dP.fresh);
  });
}

template ag::Var<float> relative_update(const Group&, const ag::Var<float>&, const ag::Var<float>&,
                                        const ag::Var<float>&);
template ag::Var<double> relative_update(const Group&, const ag::Var<double>&, const ag::Var<double>&,
                                         const ag::Var<double>&);

std::vector<ag::OpCheck> update_op_checks() {
  std::vector<ag::OpCheck> c;
  for (const char* spec : {"SO(3)", "SO(5)", "U(2)", "SU(3)", "SO(2)xU(2)"}) {
    std::shared_ptr<const Group> g = make_group(spec);
    const int64_t n = g->n(), m = g->dim();
    for (const bool mixed : {false, true}) {
      for (const int64_t N : {int64_t(3), int64_t(37)}) {  // 37: several chunks, a partial last one
        const std::string name = std::string("group ") + g->name() + " relative_update" + (mixed ? " (Gamma)" : "") +
                                 " N=" + std::to_string(N);
        c.push_back({name, [=](Rng& rng) {
                       std::vector<Array<double>> in = {g->sample<double>(rng, N),
                                                        rng.normal_array<double>(Shape{N, n, n})};
                       if (mixed) in.push_back(rng.normal_array<double>(Shape{m, m}, 0.5));
                       return ag::check_vjp(
                           name,
                           [g, mixed](const std::vector<ag::Vard>& x) {
                             return relative_update(*g, x[0], x[1], mixed ? x[2] : ag::Vard());
                           },
                           in, rng);
                     }});
      }
    }
  }
  // The backward assigns a gradient nothing has flowed into yet and adds to one that
  // exists: H and P as one Var (their contributions add), and another use of H and P
  // recorded before this op (its backward runs after, so this op's gradients are fresh)
  // or after it (its backward runs first, so this op's must add).
  std::shared_ptr<const Group> g = make_group("SO(4)");
  const int64_t n = g->n(), m = g->dim(), N = 19;
  const auto inputs = [g, n, m](Rng& rng) {
    return std::vector<Array<double>>{g->sample<double>(rng, N), rng.normal_array<double>(Shape{N, n, n}),
                                      rng.normal_array<double>(Shape{m, m}, 0.5)};
  };
  c.push_back({"group SO(4) relative_update with H and P one Var", [=](Rng& rng) {
                 return ag::check_vjp(
                     "relative_update H = P",
                     [g](const std::vector<ag::Vard>& x) { return relative_update(*g, x[0], x[0], x[2]); },
                     inputs(rng), rng);
               }});
  for (const bool other_first : {false, true}) {
    const std::string name = std::string("group SO(4) relative_update, H and P also used ") +
                             (other_first ? "before it (its backward assigns)" : "after it (its backward adds)");
    c.push_back({name, [=](Rng& rng) {
                   return ag::check_vjp(
                       name,
                       [g, other_first](const std::vector<ag::Vard>& x) {
                         ag::Vard other, update;
                         if (other_first) other = ag::mul(x[0], x[1]);
                         update = relative_update(*g, x[0], x[1], x[2]);
                         if (!other_first) other = ag::mul(x[0], x[1]);
                         return ag::add(update, other);
                       },
                       inputs(rng), rng);
                 }});
  }
  return c;
}

}  // namespace liegrad::kernels
