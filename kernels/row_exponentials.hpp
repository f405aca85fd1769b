// Exponentials of a table of algebra coordinates, one per row, with their pullback: the
// part the token update (kernels/token_update.cpp) and the token-drive scan
// (kernels/osm_scan.cpp) share, whose step exp(hat(u_v)) depends on the table row v only.
//
//   forward:  E_v = exp(hat(u_v))                          v < U
//   pullback: du_v = -vee(L(A_v, dE_v^T)) / s = vee(L(A_v^T, dE_v)) / s,  A_v = hat(u_v)
//
// L is the exponential's exact pullback (groups/expm_kernel.hpp), taken with the transpose
// so that no matrix is transposed: L(A, dE^T) = L(A^T, dE)^T and, A being skew-Hermitian
// in the stored real form, vee(X^T) = -vee(X) (kernels/relative_update.cpp says more).
// s = group.real_scale(). Rows run in parallel (parallel_for).
#pragma once
#include <cstdint>
#include <vector>

#include "core/buffer.hpp"
#include "core/parallel.hpp"
#include "core/profile.hpp"
#include "groups/expm_kernel.hpp"
#include "groups/group.hpp"

namespace liegrad::kernels {

// What the forward keeps for the pullback: E (U,n,n), each row's plan and forward products.
template <class T>
struct RowExponentials {
  Buffer<T> E;
  std::vector<groups::ExpmPlan> plans;
  std::vector<Buffer<T>> cache;
};

// u (U,m) -> ex.E (U,n,n) = exp(hat(u_v)) per row.
template <class T>
void exponentiate_rows(const groups::Group& g, int64_t U, const T* u, RowExponentials<T>& ex) {
  using namespace groups;
  const int64_t n = g.n(), nn = n * n, m = g.dim();
  ex.E = Buffer<T>(U * nn);
  ex.plans.assign(static_cast<size_t>(U), ExpmPlan{});
  ex.cache.resize(static_cast<size_t>(U));
  parallel_for(U, grain_for_flops(20 * n * n * n), [&](int64_t v) {
    std::vector<T> A(static_cast<size_t>(nn)), scratch(static_cast<size_t>(expm_forward_scratch(n)));
    g.hat_kernel(u + v * m, A.data(), n);
    prof::Sub exp_time(prof::Family::ExpForward);
    prof::count(prof::Counter::Exponentials, 1);
    const ExpmPlan plan = expm_plan(n, A.data(), scratch.data(), ExponentKind::Skew);
    prof::count(prof::Counter::ExpForwardProducts, plan.products());
    ex.plans[static_cast<size_t>(v)] = plan;
    ex.cache[static_cast<size_t>(v)] = Buffer<T>(expm_cache_size(plan, n));
    expm_one_forward(n, A.data(), plan, ex.E.data() + v * nn, scratch.data(), ex.cache[static_cast<size_t>(v)].data());
  });
}

// du (U,m) = the coordinates' cotangents from dEt (U,n,n), the transposed cotangents dE_v^T
// of the rows' exponentials; rows for which `skip` (size U, or empty) is true get zeros.
template <class T>
void pull_back_rows(const groups::Group& g, int64_t U, const T* u, const RowExponentials<T>& ex, const T* dEt,
                    T* du, const std::vector<bool>& skip = {}) {
  using namespace groups;
  const int64_t n = g.n(), nn = n * n, m = g.dim();
  const T inv_s = static_cast<T>(1.0 / g.real_scale());
  parallel_for(U, 1, [&](int64_t v) {
    T* duv = du + v * m;
    if (!skip.empty() && skip[static_cast<size_t>(v)]) {
      for (int64_t k = 0; k < m; ++k) duv[k] = T(0);
      return;
    }
    std::vector<T> A(static_cast<size_t>(nn)), dAt(static_cast<size_t>(nn));
    std::vector<T> scratch(static_cast<size_t>(expm_pullback_scratch(n)));
    g.hat_kernel(u + v * m, A.data(), n);
    {
      prof::Sub exp_time(prof::Family::ExpPullback);
      expm_one_tangent(n, A.data(), ex.plans[static_cast<size_t>(v)], dEt + v * nn, dAt.data(), scratch.data(),
                       ex.cache[static_cast<size_t>(v)].data());
    }
    g.vee_kernel(dAt.data(), n, duv);
    for (int64_t k = 0; k < m; ++k) duv[k] *= -inv_s;
  });
}

}  // namespace liegrad::kernels
