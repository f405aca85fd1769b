// The fused relative update (see update_ops.hpp): kernels, tape wrapper, checks.
#include "kernels/relative_update.hpp"

#include <omp.h>

#include <algorithm>
#include <memory>

#include "autograd/elementwise.hpp"
#include "autograd/tape.hpp"
#include "core/buffer.hpp"
#include "core/parallel.hpp"
#include "core/prefetch.hpp"
#include "core/profile.hpp"
#include "core/small_gemm.hpp"
#include "core/vmath.hpp"
#include "groups/expm_kernel.hpp"
#include "kernels/mixing.hpp"
#include "groups/group_ops.hpp"

namespace liegrad::kernels {

using namespace groups;

namespace {

constexpr int64_t kChunk = 16;
constexpr int64_t kDirectMixingRows = 4;  // below this many tokens the forward mixes with Gamma itself, not Gamma^T

// One term Gamma_k vee(H* P_k) of the tangent: its target, its Gamma (null: identity
// mixing), Gamma^T for the forward (or Gamma itself, for a few rows), and where its gradients go (null: none). Two targets
// that share one Gamma are one term with a second target P2: Gamma vee(H* P) + Gamma
// vee(H* P2) = Gamma vee(H* (P + P2)) (vee and H* are linear), so the pair costs one
// product and one mixing, not two (the OSMFormer's combined grounding with one shared
// Gamma, docs/models.md §5.1).
template <class T>
struct Term {
  const T* P = nullptr;
  const T* P2 = nullptr;
  const T* gamma = nullptr;
  const T* gammaT = nullptr;
  T* dP = nullptr;
  T* dP2 = nullptr;
  T* dGamma = nullptr;
  bool assign_dP = false;
  bool assign_dP2 = false;
  // Token i's target P_i (+ P2_i), in sum (n*n) when there are two.
  const T* target(int64_t i, int64_t nn, T* sum) const {
    if (!P2) return P + i * nn;
    for (int64_t j = 0; j < nn; ++j) sum[j] = P[i * nn + j] + P2[i * nn + j];
    return sum;
  }
};

// d = x (assign) or d += x, over n elements. Called per token inside the kernel's own
// parallel loop: ag::store_grad would open a (serialised) OpenMP region per call.
template <class T>
void store(T* d, bool assign, const T* x, int64_t n) {
  if (assign)
    std::copy(x, x + n, d);
  else
    for (int64_t j = 0; j < n; ++j) d[j] += x[j];
}

// What the forward keeps for the backward.
template <class T>
struct Saved {
  int64_t N = 0, n = 0, m = 0;
  std::vector<Buffer<T>> r;    // per term (N,m), every row written
  Buffer<T> u;                 // (N,m), every row written; empty for one term without mixing (u = r)
  Buffer<T> E;                 // (N,n,n), every matrix written
  std::vector<ExpmPlan> plans;        // (N); the backward recomputes the exponentials' products
  const T* coords() const { return u.empty() ? r[0].data() : u.data(); }
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
void forward(const Group& g, int64_t N, const T* H, const std::vector<Term<T>>& terms, T* out, Saved<T>& sv) {
  const int64_t n = g.n(), nn = n * n, m = g.dim();
  sv.N = N;
  sv.n = n;
  sv.m = m;
  sv.r.clear();
  for (size_t k = 0; k < terms.size(); ++k) sv.r.emplace_back(N * m);
  const bool mixed = terms.size() > 1 || terms[0].gammaT || terms[0].gamma;
  if (mixed) sv.u = Buffer<T>(N * m);
  sv.E = Buffer<T>(N * nn);
  sv.plans.assign(static_cast<size_t>(N), ExpmPlan{});
  // One pass per chunk: coordinates u, then E = exp(hat(u)) and H' = H E per token.
  for_chunks(N, n, [&](int64_t i0, int64_t i1, int) {
    prof::Sub timed(prof::Family::SmallProducts);
    std::vector<T> R(static_cast<size_t>(nn)), sum(static_cast<size_t>(nn)),
        scratch(static_cast<size_t>(expm_forward_scratch(n)));
    for (size_t k = 0; k < terms.size(); ++k)
      for (int64_t i = i0; i < i1; ++i) {
        if (i + 1 < i1) {
          prefetch_lines(H + (i + 1) * nn, nn);
          prefetch_lines(terms[k].P + (i + 1) * nn, nn);
          if (terms[k].P2) prefetch_lines(terms[k].P2 + (i + 1) * nn, nn);
        }
        const T* P = terms[k].target(i, nn, sum.data());
        small_gemm_ld<T>(true, false, n, n, n, T(1), H + i * nn, n, P, n, T(0), R.data(), n);
        g.vee_kernel(R.data(), n, sv.r[k].data() + i * m);
      }
    if (mixed) {
      prof::Sub mixing(prof::Family::Tangent);
      T* u = sv.u.data() + i0 * m;
      for (size_t k = 0; k < terms.size(); ++k) {
        const T* rk = sv.r[k].data() + i0 * m;
        if (terms[k].gammaT) {
          small_gemm_ld<T>(false, false, i1 - i0, m, m, T(1), rk, m, terms[k].gammaT, m, k == 0 ? T(0) : T(1), u, m);
        } else if (terms[k].gamma) {  // a few rows: u_i = Gamma r_i, a dot product per row of Gamma
          for (int64_t i = 0; i < i1 - i0; ++i)
            for (int64_t a = 0; a < m; ++a) {
              const T v = vm::dot_array(m, terms[k].gamma + a * m, rk + i * m);
              u[i * m + a] = k == 0 ? v : u[i * m + a] + v;
            }
        } else {
          for (int64_t j = 0; j < (i1 - i0) * m; ++j) u[j] = k == 0 ? rk[j] : u[j] + rk[j];
        }
      }
    }
    for (int64_t i = i0; i < i1; ++i) {
      if (i + 1 < i1) {  // the next token's rows to write (E, H') and its H
        prefetch_lines_for_write(sv.E.data() + (i + 1) * nn, nn);
        prefetch_lines_for_write(out + (i + 1) * nn, nn);
        prefetch_lines(H + (i + 1) * nn, nn);
      }
      g.hat_kernel(sv.coords() + i * m, R.data(), n);  // A
      T* E = sv.E.data() + i * nn;
      sv.plans[static_cast<size_t>(i)] = expm_one_forward_planned(n, R.data(), E, scratch.data(), ExponentKind::Skew);
      small_gemm_ld<T>(false, false, n, n, n, T(1), H + i * nn, n, E, n, T(0), out + i * nn, n);
    }
  });
}

// dH and each term's dP (N,n,n) and dGamma (m,m) accumulate (+=), except that dH (dP)
// is assigned (its old contents never read) when assign_dH (the term's assign_dP); null
// pointers skip.
template <class T>
void backward(const Group& g, const Saved<T>& sv, const T* G, const T* H, const std::vector<Term<T>>& terms, T* dH,
              bool assign_dH) {
  const int64_t N = sv.N, n = sv.n, nn = n * n, m = sv.m;
  const T s = static_cast<T>(g.real_scale()), inv_s = static_cast<T>(1.0 / g.real_scale());
  const int threads = threads_for(N, n);
  const size_t K = terms.size();
  // Per term and thread: that thread's share of dGamma_k.
  std::vector<std::vector<std::vector<T>>> dgamma_t(K, std::vector<std::vector<T>>(static_cast<size_t>(threads)));
  bool any_dP = false;
  for (const Term<T>& term : terms) any_dP = any_dP || term.dP || term.dP2;
  for_chunks(N, n, [&](int64_t i0, int64_t i1, int t) {
    prof::Sub timed(prof::Family::SmallProducts);
    const int64_t C = i1 - i0;
    std::vector<T> dEt(static_cast<size_t>(nn)), A(static_cast<size_t>(nn)), dAt(static_cast<size_t>(nn));
    std::vector<T> sum(static_cast<size_t>(nn)), dP_i(static_cast<size_t>(nn));
    std::vector<T> scratch(static_cast<size_t>(expm_pullback_scratch(n)));
    std::vector<T> du(static_cast<size_t>(kChunk * m)), dr(static_cast<size_t>(kChunk * m));
    // Token i's dR_k/s in A: its share of dH (through R = H^T P) and of dP, dP2.
    auto take_dR = [&](const Term<T>& term, int64_t i) {
      // dH += s P_k (dR_k/s)^T = -s P_k (dR_k/s): algebra elements are skew (law "hat
      // lands in the skew matrices"), which spares the transpose of a B^T product.
      if (dH)
        small_gemm_ld<T>(false, false, n, n, n, -s, term.target(i, nn, sum.data()), n, A.data(), n, T(1), dH + i * nn,
                         n);
      if (term.dP && !term.P2) {
        small_gemm_ld<T>(false, false, n, n, n, s, H + i * nn, n, A.data(), n, term.assign_dP ? T(0) : T(1),
                         term.dP + i * nn, n);
      } else if (term.dP || term.dP2) {  // both targets get s H (dR/s), formed once
        small_gemm_ld<T>(false, false, n, n, n, s, H + i * nn, n, A.data(), n, T(0), dP_i.data(), n);
        if (term.dP) store(term.dP + i * nn, term.assign_dP, dP_i.data(), nn);
        if (term.dP2) store(term.dP2 + i * nn, term.assign_dP2, dP_i.data(), nn);
      }
    };
    // One term without Gamma: dR/s = hat(du) = hat(vee(dAt)) = Pi(dAt) (group law "hat vee
    // is Pi"), taken per token right after its pullback, with no coordinates between.
    const bool direct = K == 1 && !terms[0].gamma;
    for (int64_t i = i0; i < i1; ++i) {
      if (i + 1 < i1) {  // the next token's operands, while this one computes
        prefetch_lines(G + (i + 1) * nn, nn);
        prefetch_lines(H + (i + 1) * nn, nn);
        prefetch_lines(sv.E.data() + (i + 1) * nn, nn);
        prefetch_lines(sv.coords() + (i + 1) * m, m);
        if (dH) prefetch_lines_for_write(dH + (i + 1) * nn, nn);
        if (direct) {
          prefetch_lines(terms[0].P + (i + 1) * nn, nn);
          if (terms[0].P2) prefetch_lines(terms[0].P2 + (i + 1) * nn, nn);
          if (terms[0].dP) prefetch_lines_for_write(terms[0].dP + (i + 1) * nn, nn);
          if (terms[0].dP2) prefetch_lines_for_write(terms[0].dP2 + (i + 1) * nn, nn);
        }
      }
      const T* Gi = G + i * nn;
      const T* Ei = sv.E.data() + i * nn;
      if (dH) small_gemm_ld<T>(false, true, n, n, n, T(1), Gi, n, Ei, n, assign_dH ? T(0) : T(1), dH + i * nn, n);
      // E's cotangent is dE = H^T G, and A's is dA = L(A^T, dE), whose transpose is
      // dAt = L(A, dE^T) (expm_one_tangent); vee(dA) = -vee(dAt) (vee reads the skew
      // part), so nothing is transposed: dE^T = G^T H is one product. It carries du's
      // factor -1/s (below): the tangent is linear in dE^T.
      small_gemm_ld<T>(true, false, n, n, n, -inv_s, Gi, n, H + i * nn, n, T(0), dEt.data(), n);
      g.hat_kernel(sv.coords() + i * m, A.data(), n);
      {
        prof::Sub exp_time(prof::Family::ExpPullback);
        expm_one_tangent(n, A.data(), sv.plans[static_cast<size_t>(i)], dEt.data(), dAt.data(), scratch.data(),
                         static_cast<const T*>(nullptr));  // recomputes the products
      }
      if (direct) {
        if (!dH && !any_dP) continue;
        g.project_kernel(dAt.data(), n, A.data(), n);
        take_dR(terms[0], i);
      } else {
        g.vee_kernel(dAt.data(), n, du.data() + (i - i0) * m);  // du = -vee(dAt)/s
      }
    }
    if (direct) return;
    for (size_t k = 0; k < K; ++k) {
      const Term<T>& term = terms[k];
      const T* drows = du.data();
      if (term.gamma) {
        prof::Sub mixing(prof::Family::Tangent);
        if (term.dGamma) {
          std::vector<T>& acc = dgamma_t[k][static_cast<size_t>(t)];
          if (acc.empty()) acc.assign(static_cast<size_t>(m * m), T(0));
          // dGamma_k += du^T r_k  (u = r_k Gamma_k^T as rows)
          small_gemm_ld<T>(true, false, m, m, C, T(1), du.data(), m, sv.r[k].data() + i0 * m, m, T(1), acc.data(), m);
        }
        small_gemm_ld<T>(false, false, C, m, m, T(1), du.data(), m, term.gamma, m, T(0), dr.data(), m);
        drows = dr.data();
      }
      if (!dH && !any_dP) continue;
      for (int64_t i = i0; i < i1; ++i) {
        if (i + 1 < i1) {
          prefetch_lines(term.P + (i + 1) * nn, nn);
          if (term.P2) prefetch_lines(term.P2 + (i + 1) * nn, nn);
          prefetch_lines(H + (i + 1) * nn, nn);
          if (dH) prefetch_lines_for_write(dH + (i + 1) * nn, nn);
          if (term.dP) prefetch_lines_for_write(term.dP + (i + 1) * nn, nn);
          if (term.dP2) prefetch_lines_for_write(term.dP2 + (i + 1) * nn, nn);
        }
        g.hat_kernel(drows + (i - i0) * m, A.data(), n);  // dR_k / s
        take_dR(term, i);
      }
    }
  });
  for (size_t k = 0; k < K; ++k)
    if (terms[k].dGamma)
      for (const auto& acc : dgamma_t[k])
        if (!acc.empty())
          for (int64_t j = 0; j < m * m; ++j) terms[k].dGamma[j] += acc[static_cast<size_t>(j)];
}

}  // namespace

namespace {

// Shape checks shared by both entry points: H and P (N,n,n), Gamma (m,m) when defined.
template <class T>
void check_term(const Group& g, const char* op, const ag::Var<T>& H, const ag::Var<T>& P, const ag::Var<T>& Gamma) {
  const int64_t n = g.n(), m = g.dim();
  const Shape& s = H.shape();
  if (s.ndim != 3 || s.rows() != n || s.cols() != n || P.shape() != s)
    throw ShapeError(std::string(op) + " (" + g.name() + "): expected H and P of shape (N," + std::to_string(n) + "," +
                     std::to_string(n) + "), got " + s.str() + " and " + P.shape().str());
  if (Gamma.defined() && Gamma.shape() != Shape{m, m})
    throw ShapeError(std::string(op) + " (" + g.name() + "): Gamma must be (" + std::to_string(m) + "," +
                     std::to_string(m) + "), got " + Gamma.shape().str());
}

// The tape op for H' = H exp(hat(sum_k Gamma_k vee(H* P_k))), k over the (P, Gamma) pairs.
template <class T>
ag::Var<T> update_op(const Group& g, const ag::Var<T>& H, const std::vector<std::pair<ag::Var<T>, ag::Var<T>>>& pairs) {
  const int64_t N = H.shape()[0];
  prof::Scope timed(prof::Family::SmallProducts);
  // Two targets with one Gamma (the same Var, or none) are one term (Term::P2).
  const bool merged = pairs.size() == 2 && (pairs[0].second.defined() ? pairs[0].second.same(pairs[1].second)
                                                                      : !pairs[1].second.defined());
  const size_t K = merged ? 1 : pairs.size();
  // Gamma^T lets a chunk's rows mix in one small product; for a few rows (incremental
  // decoding, N = 1) transposing the m x m Gamma costs more than the rows' own products,
  // so they take Gamma as it is, a dot product per row of it.
  const bool direct = N < kDirectMixingRows;
  std::vector<Array<T>> gammaT;
  std::vector<Term<T>> terms(K);
  if (!direct)
    for (size_t k = 0; k < K; ++k) gammaT.push_back(gamma_transposed(pairs[k].second));
  for (size_t k = 0; k < K; ++k) {
    terms[k].P = pairs[k].first.value().data();
    if (!pairs[k].second.defined()) continue;
    if (direct)
      terms[k].gamma = pairs[k].second.value().data();
    else
      terms[k].gammaT = gammaT[k].data();
  }
  if (merged) terms[0].P2 = pairs[1].first.value().data();
  auto sv = std::make_shared<Saved<T>>();
  Array<T> out = Array<T>::uninitialized(H.shape());  // every matrix written by forward (H E)
  forward(g, N, H.value().data(), terms, out.data(), *sv);
  const ag::Var<T> P0 = pairs[0].first, G0 = pairs[0].second;
  const ag::Var<T> P1 = pairs.size() > 1 ? pairs[1].first : ag::Var<T>();
  const ag::Var<T> G1 = pairs.size() > 1 ? pairs[1].second : ag::Var<T>();
  return ag::record_op<T>(std::move(out), {&H, &P0, &G0, &P1, &G1}, [&g, H, pairs, merged, K, sv](const Array<T>& G) {
    prof::Scope timed_b(prof::Family::SmallProducts);
    // A gradient that has not flowed in yet is written, not zeroed and added to
    // (ag::grads_for_write; inputs that are one Var add into zeros).
    std::vector<const ag::Var<T>*> written = {&H};
    for (const auto& pr : pairs) written.push_back(&pr.first);
    const std::vector<ag::GradOut<T>> d = ag::grads_for_write(written);
    std::vector<Term<T>> terms_b(K);
    for (size_t k = 0; k < K; ++k) {
      const ag::Var<T>& Gamma = pairs[k].second;
      terms_b[k].P = pairs[k].first.value().data();
      terms_b[k].gamma = Gamma.defined() ? Gamma.value().data() : nullptr;
      terms_b[k].dGamma = Gamma.defined() && Gamma.requires_grad() ? Gamma.node()->grad_ref().data() : nullptr;
      terms_b[k].dP = d[k + 1].p;
      terms_b[k].assign_dP = d[k + 1].fresh;
    }
    if (merged) {
      terms_b[0].P2 = pairs[1].first.value().data();
      terms_b[0].dP2 = d[2].p;
      terms_b[0].assign_dP2 = d[2].fresh;
    }
    backward(g, *sv, G.data(), H.value().data(), terms_b, d[0].p, d[0].fresh);
  });
}

}  // namespace

template <class T>
ag::Var<T> relative_update(const Group& g, const ag::Var<T>& H, const ag::Var<T>& P, const ag::Var<T>& Gamma) {
  check_term(g, "relative_update", H, P, Gamma);
  return update_op(g, H, {{P, Gamma}});
}

template <class T>
ag::Var<T> combined_update(const Group& g, const ag::Var<T>& H, const ag::Var<T>& P1, const ag::Var<T>& Gamma1,
                           const ag::Var<T>& P2, const ag::Var<T>& Gamma2) {
  check_term(g, "combined_update", H, P1, Gamma1);
  check_term(g, "combined_update", H, P2, Gamma2);
  return update_op(g, H, {{P1, Gamma1}, {P2, Gamma2}});
}

template ag::Var<float> relative_update(const Group&, const ag::Var<float>&, const ag::Var<float>&,
                                        const ag::Var<float>&);
template ag::Var<double> relative_update(const Group&, const ag::Var<double>&, const ag::Var<double>&,
                                         const ag::Var<double>&);
template ag::Var<float> combined_update(const Group&, const ag::Var<float>&, const ag::Var<float>&,
                                        const ag::Var<float>&, const ag::Var<float>&, const ag::Var<float>&);
template ag::Var<double> combined_update(const Group&, const ag::Var<double>&, const ag::Var<double>&,
                                         const ag::Var<double>&, const ag::Var<double>&, const ag::Var<double>&);

std::vector<ag::OpCheck> update_op_checks() {
  std::vector<ag::OpCheck> c;
  for (const char* spec : {"SO(3)", "SO(5)", "U(2)", "SU(3)", "SO(2)xU(2)"}) {
    std::shared_ptr<const Group> g = make_group(spec);
    const int64_t n = g->n(), m = g->dim();
    for (const bool mixed : {false, true}) {
      // 3: mixing with Gamma itself (N < kDirectMixingRows); 37: with Gamma^T, several
      // chunks, a partial last one.
      for (const int64_t N : {int64_t(3), int64_t(37)}) {
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

std::vector<ag::OpCheck> combined_update_op_checks() {
  std::vector<ag::OpCheck> c;
  for (const char* spec : {"SO(3)", "SO(5)", "U(2)", "SO(2)xU(2)"}) {
    std::shared_ptr<const Group> g = make_group(spec);
    const int64_t n = g->n(), m = g->dim();
    for (const bool mixed : {false, true}) {
      for (const int64_t N : {int64_t(3), int64_t(37)}) {
        const std::string name = std::string("group ") + g->name() + " combined_update" +
                                 (mixed ? " (Gamma1, Gamma2)" : "") + " N=" + std::to_string(N);
        c.push_back({name, [=](Rng& rng) {
                       std::vector<Array<double>> in = {g->sample<double>(rng, N),
                                                        rng.normal_array<double>(Shape{N, n, n}),
                                                        rng.normal_array<double>(Shape{N, n, n})};
                       if (mixed) {
                         in.push_back(rng.normal_array<double>(Shape{m, m}, 0.5));
                         in.push_back(rng.normal_array<double>(Shape{m, m}, 0.5));
                       }
                       return ag::check_vjp(
                           name,
                           [g, mixed](const std::vector<ag::Vard>& x) {
                             return combined_update(*g, x[0], x[1], mixed ? x[3] : ag::Vard(), x[2],
                                                    mixed ? x[4] : ag::Vard());
                           },
                           in, rng);
                     }});
      }
    }
  }
  // One Gamma for both targets (the merged term, Term::P2), alone and as a Var that is
  // also a target's: every contribution adds.
  std::shared_ptr<const Group> g = make_group("SO(4)");
  const int64_t n = g->n(), m = g->dim(), N = 19;
  c.push_back({"group SO(4) combined_update with one shared Gamma", [=](Rng& rng) {
                 std::vector<Array<double>> in = {g->sample<double>(rng, N), rng.normal_array<double>(Shape{N, n, n}),
                                                  rng.normal_array<double>(Shape{N, n, n}),
                                                  rng.normal_array<double>(Shape{m, m}, 0.5)};
                 return ag::check_vjp(
                     "combined_update shared Gamma",
                     [g](const std::vector<ag::Vard>& x) { return combined_update(*g, x[0], x[1], x[3], x[2], x[3]); },
                     in, rng);
               }});
  c.push_back({"group SO(4) combined_update with one shared Gamma and P1 = P2 = H", [=](Rng& rng) {
                 std::vector<Array<double>> in = {g->sample<double>(rng, N), rng.normal_array<double>(Shape{m, m}, 0.5)};
                 return ag::check_vjp(
                     "combined_update shared Gamma, H = P1 = P2",
                     [g](const std::vector<ag::Vard>& x) { return combined_update(*g, x[0], x[0], x[1], x[0], x[1]); },
                     in, rng);
               }});
  // The second target the same Var as the first, and as H: their contributions add.
  c.push_back({"group SO(4) combined_update with H, P1 and P2 one Var", [=](Rng& rng) {
                 std::vector<Array<double>> in = {g->sample<double>(rng, N), rng.normal_array<double>(Shape{m, m}, 0.5),
                                                  rng.normal_array<double>(Shape{m, m}, 0.5)};
                 (void)n;
                 return ag::check_vjp(
                     "combined_update H = P1 = P2",
                     [g](const std::vector<ag::Vard>& x) { return combined_update(*g, x[0], x[0], x[1], x[0], x[2]); },
                     in, rng);
               }});
  return c;
}

}  // namespace liegrad::kernels
