// The fused OSM-RNN scan (see scan_ops.hpp): forward and backward kernels, the tape
// wrapper and its gradient checks.
#include "kernels/osm_scan.hpp"

#include <omp.h>

#include <algorithm>
#include <memory>

#include "autograd/tape.hpp"
#include "core/buffer.hpp"
#include "core/parallel.hpp"
#include "core/prefetch.hpp"
#include "core/profile.hpp"
#include "core/small_gemm.hpp"
#include "groups/expm_kernel.hpp"
#include "kernels/mixing.hpp"
#include "kernels/row_exponentials.hpp"
#include "kernels/scan_common.hpp"
#include "groups/group_ops.hpp"
#include "groups/renormalize.hpp"

namespace liegrad::kernels {

using namespace groups;

namespace {

template <class T>
struct Saved {
  int64_t B = 0, T_ = 0, n = 0, m = 0, renorm = 0;
  ScanDrive drive = ScanDrive::Relative;
  std::vector<int32_t> ids;
  Array<T> H0;                          // (B,n,n)
  Buffer<T> r, u;                       // (B,T,m), every row written; u empty without Gamma
  std::vector<ExpmPlan> plans;          // (B*T); the backward recomputes the exponentials' products
  const T* coords() const { return u.empty() ? r.data() : u.data(); }
  // The token drive's transitions depend on the token only, so they are computed once per
  // table row the batch uses (its "slots"), not once per step (forward_token):
  std::vector<int32_t> used;            // (U) the table rows the ids use, ascending
  std::vector<int32_t> slot;            // (V) each row's index in `used`, -1 when unused
  RowExponentials<T> slot_exp;          // (U) each slot's exponential E and its forward products
};

bool needs_relative(ScanDrive d) { return d != ScanDrive::Token; }

// out = a + b over n elements, one vector loop: out never overlaps a or b (the backward's
// dHn = dh + G_t, which GCC left scalar while it could not rule that out).
template <class T>
void sum_into(int64_t n, const T* __restrict a, const T* __restrict b, T* __restrict out) {
#pragma omp simd
  for (int64_t k = 0; k < n; ++k) out[k] = a[k] + b[k];
}
bool needs_token(ScanDrive d) { return d != ScanDrive::Relative; }

// Threads for a scan of B lanes over T_ steps: about 20 n^3 operations per lane and step.
int scan_threads(int64_t B, int64_t T_, int64_t n) { return kernels::scan_threads(B, 20 * B * T_ * n * n * n); }

template <class T>
void forward(const Group& g, Saved<T>& sv, const T* table, const T* gammaT, T* out) {
  const int64_t B = sv.B, T_ = sv.T_, n = sv.n, nn = n * n, m = sv.m;
  const int nt = scan_threads(B, T_, n);
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    int64_t lo, hi;
    lanes_of(B, omp_get_thread_num(), omp_get_num_threads(), lo, hi);
    prof::Sub timed(prof::Family::SmallProducts);
    std::vector<T> R(static_cast<size_t>(nn)), A(static_cast<size_t>(nn)), E(static_cast<size_t>(nn)),
        rt(static_cast<size_t>(m)), tmp(static_cast<size_t>(2 * nn)),
        scratch(static_cast<size_t>(expm_forward_scratch(n)));
    for (int64_t t = 0; t < T_; ++t) {
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t bt = b * T_ + t;
        const T* H = t == 0 ? sv.H0.data() + b * nn : out + (bt - 1) * nn;
        const T* M = table + static_cast<int64_t>(sv.ids[static_cast<size_t>(bt)]) * nn;
        T* r = sv.r.data() + bt * m;
        if (needs_relative(sv.drive)) {
          small_gemm_ld<T>(true, false, n, n, n, T(1), H, n, M, n, T(0), R.data(), n);
          g.vee_kernel(R.data(), n, r);
        }
        if (needs_token(sv.drive)) {
          g.vee_kernel(M, n, rt.data());
          for (int64_t k = 0; k < m; ++k) r[k] = sv.drive == ScanDrive::Both ? r[k] + rt[static_cast<size_t>(k)] : rt[static_cast<size_t>(k)];
        }
      }
      if (gammaT && hi > lo) {  // u rows of this step's lanes (row stride T m) = r rows Gamma^T
        prof::Sub mixing(prof::Family::Tangent);
        small_gemm_ld<T>(false, false, hi - lo, m, m, T(1), sv.r.data() + (lo * T_ + t) * m, T_ * m, gammaT, m,
                         T(0), sv.u.data() + (lo * T_ + t) * m, T_ * m);
      }
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t bt = b * T_ + t;
        const T* H = t == 0 ? sv.H0.data() + b * nn : out + (bt - 1) * nn;
        if (b + 1 < hi) prefetch_lines_for_write(out + (bt + T_) * nn, nn);  // the next lane's H', T_ rows on
        g.hat_kernel(sv.coords() + bt * m, A.data(), n);
        // E stays in L1: the backward forms it again beside its tangent.
        sv.plans[static_cast<size_t>(bt)] =
            expm_one_forward_planned(n, A.data(), E.data(), scratch.data(), ExponentKind::Skew);
        T* Hn = out + bt * nn;
        small_gemm_ld<T>(false, false, n, n, n, T(1), H, n, E.data(), n, T(0), Hn, n);
        if (sv.renorm > 0 && (t + 1) % sv.renorm == 0) renormalize_one(g, Hn, tmp.data());
      }
    }
  }
}

// The token drive, whose step E_t = exp(hat(Gamma vee(M_t))) depends on the token only:
// one exponential per table row the batch uses (U of them, U <= V; the scan above takes
// B*T), then the lanes' products. sv.r and sv.u hold one row per slot, sv.slot_exp
// the slots' exponentials.
template <class T>
void forward_token(const Group& g, Saved<T>& sv, const T* table, const T* gammaT, T* out) {
  const int64_t B = sv.B, T_ = sv.T_, n = sv.n, nn = n * n, m = sv.m;
  const int64_t U = static_cast<int64_t>(sv.used.size());
  for (int64_t k = 0; k < U; ++k)
    g.vee_kernel(table + static_cast<int64_t>(sv.used[static_cast<size_t>(k)]) * nn, n, sv.r.data() + k * m);
  if (gammaT) {  // u rows = r rows Gamma^T
    prof::Sub mixing(prof::Family::Tangent);
    small_gemm_ld<T>(false, false, U, m, m, T(1), sv.r.data(), m, gammaT, m, T(0), sv.u.data(), m);
  }
  exponentiate_rows(g, U, sv.coords(), sv.slot_exp);
  const int nt = scan_threads(B, T_, n);
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    int64_t lo, hi;
    lanes_of(B, omp_get_thread_num(), omp_get_num_threads(), lo, hi);
    prof::Sub timed(prof::Family::SmallProducts);
    std::vector<T> tmp(static_cast<size_t>(2 * nn));
    for (int64_t b = lo; b < hi; ++b)
      for (int64_t t = 0; t < T_; ++t) {
        const int64_t bt = b * T_ + t;
        const T* H = t == 0 ? sv.H0.data() + b * nn : out + (bt - 1) * nn;
        const int64_t k = sv.slot[static_cast<size_t>(sv.ids[static_cast<size_t>(bt)])];
        const T* E = sv.slot_exp.E.data() + k * nn;
        T* Hn = out + bt * nn;
        small_gemm_ld<T>(false, false, n, n, n, T(1), H, n, E, n, T(0), Hn, n);
        if (sv.renorm > 0 && (t + 1) % sv.renorm == 0) renormalize_one(g, Hn, tmp.data());
      }
  }
}

// Backward of forward_token: the state adjoint through time per lane, dE_k^T summed over
// the steps that used slot k (per thread, then added), then one exponential pullback
// per slot. The same result as the per-step scan's backward up to float rounding
// (the pullback is linear in dE). dH0, dtable, dGamma accumulate (+=); null skips.
template <class T>
void backward_token(const Group& g, const Saved<T>& sv, const T* G, const T* out, const T* gamma, T* dH0, T* dtable,
                    T* dGamma) {
  const int64_t B = sv.B, T_ = sv.T_, n = sv.n, nn = n * n, m = sv.m;
  const int64_t U = static_cast<int64_t>(sv.used.size());
  const T s = static_cast<T>(g.real_scale());
  const bool need_dE = dtable || dGamma;
  const int nt = scan_threads(B, T_, n);
  std::vector<std::vector<T>> dEt_t(static_cast<size_t>(nt));
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    prof::Sub timed(prof::Family::SmallProducts);
    const int tid = omp_get_thread_num();
    int64_t lo, hi;
    lanes_of(B, tid, omp_get_num_threads(), lo, hi);
    std::vector<T>& dEt = dEt_t[static_cast<size_t>(tid)];
    if (need_dE) dEt.assign(static_cast<size_t>(U * nn), T(0));
    std::vector<T> dh(static_cast<size_t>(nn)), dHn(static_cast<size_t>(nn));
    for (int64_t b = lo; b < hi; ++b) {
      std::fill(dh.begin(), dh.end(), T(0));
      for (int64_t t = T_ - 1; t >= 0; --t) {
        const int64_t bt = b * T_ + t;
        const T* H = t == 0 ? sv.H0.data() + b * nn : out + (bt - 1) * nn;
        const int64_t k = sv.slot[static_cast<size_t>(sv.ids[static_cast<size_t>(bt)])];
        const T* Gt = G + bt * nn;
        sum_into(nn, dh.data(), Gt, dHn.data());  // renorm: straight through
        const T* E = sv.slot_exp.E.data() + k * nn;
        small_gemm_ld<T>(false, true, n, n, n, T(1), dHn.data(), n, E, n, T(0), dh.data(), n);  // dH_t = dHn E^T
        if (need_dE)  // dE_k^T += dHn^T H
          small_gemm_ld<T>(true, false, n, n, n, T(1), dHn.data(), n, H, n, T(1), dEt.data() + k * nn, n);
      }
      if (dH0)
        for (int64_t q = 0; q < nn; ++q) dH0[b * nn + q] += dh[static_cast<size_t>(q)];
    }
  }
  if (!need_dE) return;
  std::vector<T> dEt_sum(static_cast<size_t>(U * nn), T(0));
  for (const std::vector<T>& part : dEt_t)
    for (size_t q = 0; q < part.size(); ++q) dEt_sum[q] += part[q];
  Buffer<T> du(U * m);
  pull_back_rows(g, U, sv.coords(), sv.slot_exp, dEt_sum.data(), du.data());
  const T* drows = du.data();
  Buffer<T> dr;
  if (gamma) {
    prof::Sub mixing(prof::Family::Tangent);
    if (dGamma) small_gemm_ld<T>(true, false, m, m, U, T(1), du.data(), m, sv.r.data(), m, T(1), dGamma, m);  // du^T r
    dr = Buffer<T>(U * m);
    small_gemm_ld<T>(false, false, U, m, m, T(1), du.data(), m, gamma, m, T(0), dr.data(), m);  // dr = du Gamma
    drows = dr.data();
  }
  if (dtable) {  // dtable[row] += dR = s hat(dr)
    std::vector<T> A(static_cast<size_t>(nn));
    for (int64_t k = 0; k < U; ++k) {
      g.hat_kernel(drows + k * m, A.data(), n);
      T* d = dtable + static_cast<int64_t>(sv.used[static_cast<size_t>(k)]) * nn;
      for (int64_t q = 0; q < nn; ++q) d[q] += s * A[static_cast<size_t>(q)];
    }
  }
}

// dH0 (B,n,n), dtable (V,n,n), dGamma (m,m) accumulate (+=); null skips.
template <class T>
void backward(const Group& g, const Saved<T>& sv, const T* G, const T* out, const T* table, const T* gamma, T* dH0,
              T* dtable, int64_t V, T* dGamma) {
  const int64_t B = sv.B, T_ = sv.T_, n = sv.n, nn = n * n, m = sv.m;
  const T s = static_cast<T>(g.real_scale()), inv_s = static_cast<T>(1.0 / g.real_scale());
  const int nt = scan_threads(B, T_, n);
  std::vector<std::vector<T>> dtable_t(static_cast<size_t>(nt)), dgamma_t(static_cast<size_t>(nt));
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    prof::Sub timed(prof::Family::SmallProducts);
    const int tid = omp_get_thread_num();
    int64_t lo, hi;
    lanes_of(B, tid, omp_get_num_threads(), lo, hi);
    const int64_t L = hi - lo;
    std::vector<T>& dtab = dtable_t[static_cast<size_t>(tid)];
    std::vector<T>& dgam = dgamma_t[static_cast<size_t>(tid)];
    if (dtable) dtab.assign(static_cast<size_t>(V * nn), T(0));
    if (dGamma && gamma) dgam.assign(static_cast<size_t>(m * m), T(0));
    // Adjoint of the state after the current step, per lane.
    std::vector<T> dH(static_cast<size_t>(std::max<int64_t>(L, 1) * nn), T(0)), dHn(static_cast<size_t>(nn));
    std::vector<T> dEt(static_cast<size_t>(nn)), A(static_cast<size_t>(nn)), dAt(static_cast<size_t>(nn));
    std::vector<T> E(static_cast<size_t>(nn));
    std::vector<T> du(static_cast<size_t>(std::max<int64_t>(L, 1) * m)), dr(static_cast<size_t>(std::max<int64_t>(L, 1) * m));
    std::vector<T> scratch(static_cast<size_t>(expm_pullback_scratch(n)));
    // Lane b's step bt with dR/s in A: dR's share of dH (through R = H^T M) and of dtable.
    auto take_dR = [&](int64_t b, int64_t bt) {
      const T* H = bt % T_ == 0 ? sv.H0.data() + b * nn : out + (bt - 1) * nn;
      const int32_t id = sv.ids[static_cast<size_t>(bt)];
      const T* M = table + static_cast<int64_t>(id) * nn;
      if (needs_relative(sv.drive)) {
        // s M (dR/s)^T = -s M (dR/s): algebra elements are skew (group law), no transpose.
        small_gemm_ld<T>(false, false, n, n, n, -s, M, n, A.data(), n, T(1), dH.data() + (b - lo) * nn, n);
        if (dtable) small_gemm_ld<T>(false, false, n, n, n, s, H, n, A.data(), n, T(1), dtab.data() + id * nn, n);
      }
      if (needs_token(sv.drive) && dtable) {
        T* d = dtab.data() + id * nn;
        for (int64_t k = 0; k < nn; ++k) d[k] += s * A[static_cast<size_t>(k)];
      }
    };
    for (int64_t t = T_ - 1; t >= 0; --t) {
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t bt = b * T_ + t;
        const T* H = t == 0 ? sv.H0.data() + b * nn : out + (bt - 1) * nn;
        T* dh = dH.data() + (b - lo) * nn;
        const T* Gt = G + bt * nn;
        // The next lane's rows (T_ rows apart, too far for the hardware prefetchers)
        // arrive while this one computes, as in relative_update.cpp.
        if (b + 1 < hi || t > 0) {
          const int64_t next = b + 1 < hi ? bt + T_ : lo * T_ + t - 1;
          prefetch_lines(G + next * nn, nn);
          prefetch_lines(sv.coords() + next * m, m);
          if (next % T_ != 0) prefetch_lines(out + (next - 1) * nn, nn);
        }
        sum_into(nn, dh, Gt, dHn.data());  // renorm: straight through
        // dE^T = dHn^T H; A's cotangent dA = L(A^T, dE) has the transpose dAt = L(A, dE^T),
        // and vee(dA) = -vee(dAt): no transposes (as in relative_update.cpp). dE^T carries
        // du's factor -1/s (below): the tangent is linear in it.
        small_gemm_ld<T>(true, false, n, n, n, -inv_s, dHn.data(), n, H, n, T(0), dEt.data(), n);
        g.hat_kernel(sv.coords() + bt * m, A.data(), n);
        {
          // The tangent program recomputes the exponential's products, and E = exp(A)
          // with them (groups/expm_kernel.hpp): the forward keeps neither.
          prof::Sub exp_time(prof::Family::ExpPullback);
          expm_one_tangent_with_value(n, A.data(), sv.plans[static_cast<size_t>(bt)], dEt.data(), dAt.data(),
                                      E.data(), scratch.data());
        }
        small_gemm_ld<T>(false, true, n, n, n, T(1), dHn.data(), n, E.data(), n, T(0), dh, n);  // dH_t = dHn E^T
        if (gamma) {
          g.vee_kernel(dAt.data(), n, du.data() + (b - lo) * m);  // du = -vee(dAt)/s
        } else {
          // Without Gamma, dR/s = hat(du) = hat(vee(dAt)) = Pi(dAt) (group law "hat vee
          // is Pi"): one pass, no coordinates, and the lane takes it now.
          g.project_kernel(dAt.data(), n, A.data(), n);
          take_dR(b, bt);
        }
      }
      if (!gamma || L == 0) continue;  // without Gamma the lanes took their dR above
      {
        prof::Sub mixing(prof::Family::Tangent);
        // dGamma += du^T r over this step's lanes; dr = du Gamma.
        if (dGamma)
          small_gemm_ld<T>(true, false, m, m, L, T(1), du.data(), m, sv.r.data() + (lo * T_ + t) * m, T_ * m, T(1),
                           dgam.data(), m);
        small_gemm_ld<T>(false, false, L, m, m, T(1), du.data(), m, gamma, m, T(0), dr.data(), m);
      }
      for (int64_t b = lo; b < hi; ++b) {
        g.hat_kernel(dr.data() + (b - lo) * m, A.data(), n);  // dR / s
        take_dR(b, b * T_ + t);
      }
    }
    if (dH0)
      for (int64_t b = lo; b < hi; ++b)
        for (int64_t k = 0; k < nn; ++k) dH0[b * nn + k] += dH[static_cast<size_t>((b - lo) * nn + k)];
  }
  for (int t = 0; t < nt; ++t) {
    if (dtable && !dtable_t[static_cast<size_t>(t)].empty())
      for (int64_t k = 0; k < V * nn; ++k) dtable[k] += dtable_t[static_cast<size_t>(t)][static_cast<size_t>(k)];
    if (dGamma && !dgamma_t[static_cast<size_t>(t)].empty())
      for (int64_t k = 0; k < m * m; ++k) dGamma[k] += dgamma_t[static_cast<size_t>(t)][static_cast<size_t>(k)];
  }
}

}  // namespace

template <class T>
ag::Var<T> osm_scan(const Group& g, const ag::Var<T>& H0, const ag::Var<T>& table, const std::vector<int32_t>& ids,
                    int64_t B, int64_t T_, const ag::Var<T>& Gamma, ScanDrive drive, int64_t renormalize_every) {
  const int64_t n = g.n(), m = g.dim();
  const std::string nn_s = std::to_string(n) + "," + std::to_string(n);
  if (H0.shape() != Shape{B, n, n})
    throw ShapeError("osm_scan (" + g.name() + "): initial states must be (" + std::to_string(B) + "," + nn_s +
                     "), got " + H0.shape().str());
  const Shape& ts = table.shape();
  if (ts.ndim != 3 || ts.rows() != n || ts.cols() != n)
    throw ShapeError("osm_scan (" + g.name() + "): the table must be (V," + nn_s + "), got " + ts.str());
  const int64_t V = ts[0];
  if (static_cast<int64_t>(ids.size()) != B * T_)
    throw ShapeError("osm_scan: " + std::to_string(ids.size()) + " ids for " + std::to_string(B) + " x " +
                     std::to_string(T_) + " steps");
  for (int32_t id : ids)
    if (id < 0 || id >= V) throw ValueError("osm_scan: id " + std::to_string(id) + " outside the table's " + std::to_string(V) + " rows");
  const bool mixed = Gamma.defined();
  if (mixed && Gamma.shape() != Shape{m, m})
    throw ShapeError("osm_scan (" + g.name() + "): Gamma must be (" + std::to_string(m) + "," + std::to_string(m) +
                     "), got " + Gamma.shape().str());
  if (renormalize_every < 0) throw ValueError("osm_scan: renormalize_every must be >= 0");
  prof::Scope timed(prof::Family::SmallProducts);
  auto sv = std::make_shared<Saved<T>>();
  sv->B = B;
  sv->T_ = T_;
  sv->n = n;
  sv->m = m;
  sv->renorm = renormalize_every;
  sv->drive = drive;
  sv->ids = ids;
  sv->H0 = H0.value();
  // Rows of r and u: one per step, or with the token drive one per used table row.
  int64_t rows = B * T_;
  if (drive == ScanDrive::Token) {
    std::vector<bool> seen(static_cast<size_t>(V), false);
    for (int32_t id : ids) seen[static_cast<size_t>(id)] = true;
    sv->slot.assign(static_cast<size_t>(V), -1);
    for (int64_t v = 0; v < V; ++v)
      if (seen[static_cast<size_t>(v)]) {
        sv->slot[static_cast<size_t>(v)] = static_cast<int32_t>(sv->used.size());
        sv->used.push_back(static_cast<int32_t>(v));
      }
    rows = static_cast<int64_t>(sv->used.size());
  }
  sv->r = Buffer<T>(rows * m);
  if (mixed) sv->u = Buffer<T>(rows * m);
  const Array<T> gammaT = gamma_transposed(Gamma);
  Array<T> out = Array<T>::uninitialized(Shape{B * T_, n, n});  // every state written by forward
  if (drive == ScanDrive::Token) {
    forward_token(g, *sv, table.value().data(), mixed ? gammaT.data() : nullptr, out.data());
  } else {
    sv->plans.assign(static_cast<size_t>(B * T_), ExpmPlan{});
    forward(g, *sv, table.value().data(), mixed ? gammaT.data() : nullptr, out.data());
  }
  // Recorded by hand (as ag::record_op does) because the backward reads the op's own
  // output, the states, from the output node.
  bool needs = false;
  if (ag::grad_enabled()) needs = H0.requires_grad() || table.requires_grad() || (mixed && Gamma.requires_grad());
  ag::Var<T> result(std::move(out), needs);
  if (needs) {
    result.node()->is_leaf = false;
    std::shared_ptr<ag::Node<T>> node = result.node_ptr();
    ag::Tape<T>::current().record([&g, node, H0, table, Gamma, sv, V]() {
      if (node->grad.empty()) return;
      prof::Scope timed_b(prof::Family::SmallProducts);
      const bool mixed_b = Gamma.defined();
      T* dH0 = H0.requires_grad() ? H0.node()->grad_ref().data() : nullptr;
      T* dtable = table.requires_grad() ? table.node()->grad_ref().data() : nullptr;
      T* dGamma = mixed_b && Gamma.requires_grad() ? Gamma.node()->grad_ref().data() : nullptr;
      if (sv->drive == ScanDrive::Token)
        backward_token(g, *sv, node->grad.data(), node->value.data(), mixed_b ? Gamma.value().data() : nullptr, dH0,
                       dtable, dGamma);
      else
        backward(g, *sv, node->grad.data(), node->value.data(), table.value().data(),
                 mixed_b ? Gamma.value().data() : nullptr, dH0, dtable, V, dGamma);
      node->grad = Array<T>();
    });
  }
  return result;
}

template <class T>
void osm_step_one(const Group& g, const T* H, const T* M, const T* gammaT, ScanDrive drive, T* Hn) {
  const int64_t n = g.n(), nn = n * n, m = g.dim();
  std::vector<T> R(static_cast<size_t>(nn)), A(static_cast<size_t>(nn)), E(static_cast<size_t>(nn)),
      r(static_cast<size_t>(m)), rt(static_cast<size_t>(m)), u(static_cast<size_t>(m)),
      scratch(static_cast<size_t>(expm_forward_scratch(n)));
  if (needs_relative(drive)) {
    small_gemm_ld<T>(true, false, n, n, n, T(1), H, n, M, n, T(0), R.data(), n);
    g.vee_kernel(R.data(), n, r.data());
  }
  if (needs_token(drive)) {
    g.vee_kernel(M, n, rt.data());
    for (int64_t k = 0; k < m; ++k)
      r[static_cast<size_t>(k)] = drive == ScanDrive::Both ? r[static_cast<size_t>(k)] + rt[static_cast<size_t>(k)]
                                                           : rt[static_cast<size_t>(k)];
  }
  const T* coords = r.data();
  if (gammaT) {  // u = r Gamma^T, the scan's product for one row
    small_gemm_ld<T>(false, false, 1, m, m, T(1), r.data(), m, gammaT, m, T(0), u.data(), m);
    coords = u.data();
  }
  g.hat_kernel(coords, A.data(), n);
  expm_one_forward_planned(n, A.data(), E.data(), scratch.data(), ExponentKind::Skew);
  small_gemm_ld<T>(false, false, n, n, n, T(1), H, n, E.data(), n, T(0), Hn, n);
}

#define LIEGRAD_INSTANTIATE(T)                                                                                   \
  template ag::Var<T> osm_scan(const Group&, const ag::Var<T>&, const ag::Var<T>&, const std::vector<int32_t>&, \
                               int64_t, int64_t, const ag::Var<T>&, ScanDrive, int64_t);            \
  template void osm_step_one(const Group&, const T*, const T*, const T*, ScanDrive, T*);
LIEGRAD_INSTANTIATE(float)
LIEGRAD_INSTANTIATE(double)
#undef LIEGRAD_INSTANTIATE

std::vector<ag::OpCheck> scan_op_checks() {
  std::vector<ag::OpCheck> c;
  struct Case {
    const char* group;
    bool mixed;
    ScanDrive drive;
    const char* label;
  };
  const Case cases[] = {{"SO(3)", false, ScanDrive::Relative, "relative"}, {"SO(4)", true, ScanDrive::Relative, "relative"},
                        {"U(2)", true, ScanDrive::Relative, "relative"},   {"SU(2)xT(1)", true, ScanDrive::Both, "both"},
                        {"SO(3)", true, ScanDrive::Token, "token"},        {"O(3)", false, ScanDrive::Both, "both"},
                        {"U(2)", false, ScanDrive::Token, "token"},        {"SO(2)xU(2)", true, ScanDrive::Token, "token"}};
  for (const Case& k : cases) {
    std::shared_ptr<const Group> g = make_group(k.group);
    const int64_t m = g->dim(), B = 3, T_ = 4, V = 5;
    const bool mixed = k.mixed;
    const ScanDrive drive = k.drive;
    const std::string name = std::string("group ") + g->name() + " osm_scan " + k.label + (mixed ? " (Gamma)" : "");
    c.push_back({name, [=](Rng& rng) {
                   std::vector<int32_t> ids(static_cast<size_t>(B * T_));
                   for (auto& id : ids) id = static_cast<int32_t>(rng.integer(V));
                   std::vector<Array<double>> in = {g->sample<double>(rng, B), g->sample<double>(rng, V)};
                   if (mixed) in.push_back(rng.normal_array<double>(Shape{m, m}, 0.5));
                   return ag::check_vjp(
                       name,
                       [g, ids, mixed, drive, B, T_](const std::vector<ag::Vard>& x) {
                         return osm_scan(*g, x[0], x[1], ids, B, T_, mixed ? x[2] : ag::Vard(), drive, 0);
                       },
                       in, rng);
                 }});
  }
  return c;
}

}  // namespace liegrad::kernels
