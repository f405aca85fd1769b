// Tests of float drift off the group and of GroupParam (groups/group_param.hpp).
//
// Drift: a float state multiplied on the right by exp of random algebra elements,
// H <- H exp(A_t), stays in G only up to rounding, and the rounding accumulates. We run
// 100,000 steps on SO(16) and U(8) with ||A_t|| = 0.1, once with
// groups::renormalize_kernel (one Newton-Schulz polar step, Higham 2008 §8.3) every 16
// steps and once without, and compare the defect ||H* H - I|| (+ structure, + |det - 1|).
// Both runs see the very same exponentials, so the difference is the correction alone.
//
// GroupParam: algebra mode gives exp(hat(u)), manifold mode stores elements of G,
// rebase() keeps the elements while zeroing the coordinates, and the gradient of a loss
// through elements() matches finite differences in both modes (plus the Riemannian
// gradient of optim/riemannian.hpp against a derivative along W exp(t hat(v))).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"
#include "groups/group.hpp"
#include "groups/group_ops.hpp"
#include "groups/group_param.hpp"
#include "groups/renormalize.hpp"
#include "optim/riemannian.hpp"
#include "tests/test_helpers.hpp"

using namespace liegrad;
using namespace liegrad::groups;
using ag::Parameter;
using ag::ParamRole;

namespace {

// ---------------------------------------------------------------------------
// Drift

// Defects of one float chain, measured every `every` steps (a multiple of the
// renormalisation period), in double: the group's defect (unitarity + storage structure
// + |det - 1|) and the unitarity part alone, ||H* H - I|| in the complex norm.
struct DriftTrace {
  std::vector<int64_t> step;
  std::vector<double> renorm_before, renorm_after;  // renormalised state, just before / after its correction
  std::vector<double> raw;                          // the state that is never corrected
  std::vector<double> renorm_unitarity, raw_unitarity;
};

// sqrt(s) ||H^T H - I||_F for H (n,n), s = real_scale().
double unitarity(const Group& g, const Array<float>& H) {
  const int64_t n = g.n();
  double ss = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = i == j ? -1.0 : 0.0;
      for (int64_t r = 0; r < n; ++r) acc += double(H.at(r, i)) * double(H.at(r, j));
      ss += acc * acc;
    }
  return std::sqrt(g.real_scale() * ss);
}

// One chain of `steps` right-multiplications H <- H exp(hat(u_t)) in float, u_t a random
// direction of norm `norm`, carrying two states driven by the same exp(hat(u_t)): one
// renormalised every `renorm_every` steps, one never. Serial (the caller runs chains in
// parallel), so no parallel region is opened per step.
DriftTrace drift_chain(const Group& g, int64_t steps, double norm, int64_t renorm_every, int64_t every, uint64_t seed) {
  const int64_t n = g.n(), m = g.dim(), nn = n * n;
  Rng rng(seed);
  std::vector<float> u(static_cast<size_t>(m));
  Array<float> A(Shape{n, n}), Q(Shape{n, n});
  // The two states stacked, H2 = [H_renormalised; H_raw] (2n, n), so that one product
  // H2 <- H2 Q advances both.
  Array<float> H2(Shape{2 * n, n}), tmp(Shape{2 * n, n});
  for (int64_t i = 0; i < n; ++i) H2.at(i, i) = H2.at(n + i, i) = 1.0f;
  auto block = [&](int which) {  // copy of state 0 (renormalised) or 1 (raw)
    Array<float> H(Shape{n, n});
    std::copy(H2.data() + which * nn, H2.data() + (which + 1) * nn, H.data());
    return H;
  };
  std::vector<Array<float>> snaps;  // (before, after, raw) per checkpoint
  for (int64_t t = 1; t <= steps; ++t) {
    // A random direction (uniform in a cube, then scaled) of norm `norm`; hat is an
    // isometry, so ||hat(u)|| = ||u|| in the complex norm.
    float ss = 0;
    for (float& x : u) {
      x = static_cast<float>(rng.uniform(-1.0, 1.0));
      ss += x * x;
    }
    const float c = static_cast<float>(norm) / std::sqrt(ss);
    for (float& x : u) x *= c;
    g.hat_kernel(u.data(), A.data(), n);
    expm_forward<float>(1, n, A.data(), Q.data());
    small_gemm<float>(false, false, 2 * n, n, n, 1.0f, H2.data(), Q.data(), 0.0f, tmp.data());
    std::swap(H2, tmp);
    const bool checkpoint = t % every == 0;
    if (checkpoint) snaps.push_back(block(0));
    if (t % renorm_every == 0) renormalize_kernel<float>(g, 1, H2.data());  // the first state only
    if (checkpoint) {
      snaps.push_back(block(0));
      snaps.push_back(block(1));
    }
  }
  DriftTrace r;
  for (size_t k = 0; k < snaps.size() / 3; ++k) {
    r.step.push_back(static_cast<int64_t>(k + 1) * every);
    r.renorm_before.push_back(g.defect(snaps[3 * k]));
    r.renorm_after.push_back(g.defect(snaps[3 * k + 1]));
    r.raw.push_back(g.defect(snaps[3 * k + 2]));
    r.renorm_unitarity.push_back(unitarity(g, snaps[3 * k + 1]));
    r.raw_unitarity.push_back(unitarity(g, snaps[3 * k + 2]));
  }
  return r;
}

std::string drift_table(const DriftTrace& r) {
  std::string table = "\n      step   renormalised (peak before)  [unitarity]     raw  [unitarity]";
  for (size_t k = 0; k < r.step.size(); ++k) {
    char line[160];
    std::snprintf(line, sizeof line, "\n  %8lld   %.2e (%.2e)       [%.2e]   %.2e  [%.2e]",
                  static_cast<long long>(r.step[k]), r.renorm_after[k], r.renorm_before[k], r.renorm_unitarity[k],
                  r.raw[k], r.raw_unitarity[k]);
    table += line;
  }
  return table;
}

}  // namespace

// Measured (seeds 2024 and 2025, one chain per group, Release, x86-64 with FMA), defect
// after 100,000 steps (in parentheses: at 10,000 steps, or the worst checkpoint). The
// last digit depends on the kernels' rounding (it moved by ~10% when expm's linear
// combinations were vectorised); the bounds below leave a margin of 3x or more.
//
//                     renormalised every 16 steps                never corrected
//   SO(16)  defect    ~9e-7 (peak just before a correction 2.9e-6)  2.1e-4 (~5e-5 at 10,000)
//   U(8)    unitarity ~3.5e-7 (worst checkpoint 3.9e-7)             1.0e-4 (~3e-5 at 10,000)
//   U(8)    defect    ~5e-7 (peak before a correction 2.0e-6)        ~1.5e-4 (4.1e-5 at 10,000)
//
// Without correction the defect grows like a random walk (x4 from 10,000 to 100,000
// steps; each float exp and product adds ~6e-7 in Frobenius norm at 16 x 16), past 1e-4
// by 100,000 steps. One Newton-Schulz step every 16 steps holds the unitarity part at the
// float rounding floor (~5e-7, peaking at ~3e-6 just before each correction). U(8)'s full
// defect also counts the distance of the stored matrix from the real-form structure
// [[X, -Y], [Y, X]]: float products round the two copies of X (and of Y) differently,
// and Newton-Schulz preserves the structure but does not restore it. With the polar
// step alone that part random-walked on (~9e-6 at 10,000 steps, ~3e-5 at 100,000), so
// renormalize first averages the two copies (Group::restore_structure_kernel, the
// projection onto real forms of groups/real_form.hpp), which holds the whole U(8)
// defect at the rounding floor too.
//
// Cost: ~14 us per step (a float 16 x 16 expm, ~10 us, and one product of the two
// stacked states); 16 chains would take ~45 s, so each group runs one chain of the full
// 100,000 steps, the two groups on two threads.
TEST_CASE("float drift over 100,000 exp steps: renormalisation keeps states on the group") {
  const int64_t steps = 100000, renorm_every = 16, every = 10000;
  const std::vector<std::string> specs = {"SO(16)", "U(8)"};
  std::vector<std::unique_ptr<Group>> groups;
  for (const std::string& s : specs) groups.push_back(make_group(s));
  std::vector<DriftTrace> traces(specs.size());
  const auto t0 = std::chrono::steady_clock::now();
  parallel_for(static_cast<int64_t>(specs.size()), 1, [&](int64_t i) {
    traces[static_cast<size_t>(i)] =
        drift_chain(*groups[static_cast<size_t>(i)], steps, 0.1, renorm_every, every, 2024 + static_cast<uint64_t>(i));
  });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < specs.size(); ++i)
    MESSAGE(specs[i] << ": defect of a float state after t steps of ||A|| = 0.1 (both groups " << secs << " s)"
                     << drift_table(traces[i]));
  auto max_of = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };

  {  // (plain blocks, not SUBCASEs: doctest would rerun the whole case per subcase)
    INFO("SO(16)");
    const DriftTrace& r = traces[0];
    REQUIRE(r.step.back() == steps);
    // Renormalised: on the group to the float rounding floor at every checkpoint, even
    // at the peak just before a correction.
    CHECK(max_of(r.renorm_before) <= 1e-5);
    CHECK(max_of(r.renorm_after) <= 2e-6);
    // Uncorrected: past 1e-4 after 100,000 steps, growing, and far above the corrected state.
    CHECK(r.raw.back() > 1e-4);
    CHECK(r.raw.back() > 2 * r.raw.front());
    CHECK(r.raw.back() > 20 * max_of(r.renorm_before));
  }
  {
    INFO("U(8)");
    const DriftTrace& r = traces[1];
    REQUIRE(r.step.back() == steps);
    // The unitarity part is held at the rounding floor ...
    CHECK(max_of(r.renorm_unitarity) <= 2e-6);
    CHECK(r.raw_unitarity.back() > 20 * max_of(r.renorm_unitarity));
    // ... and so is the full defect, the distance from the real-form structure included,
    // because renormalize restores the structure before its polar step (see above).
    CHECK(max_of(r.renorm_before) <= 1e-5);
    CHECK(max_of(r.renorm_after) <= 2e-6);
    CHECK(r.raw.back() > 20 * max_of(r.renorm_before));
  }
}

// ---------------------------------------------------------------------------
// GroupParam

namespace {

using Ad = Array<double>;

double entry_dot(const Ad& a, const Ad& b) {
  double s = 0;
  for (int64_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// A smooth test loss of elements E (count, n, n): L = sum((E B - C)^2), B (n,n) and
// C (count,n,n) fixed Gaussian matrices.
struct TestLoss {
  Ad B, C;
  TestLoss(Rng& rng, int64_t count, int64_t n)
      : B(rng.normal_array<double>(Shape{n, n})), C(rng.normal_array<double>(Shape{count, n, n})) {}
  ag::Vard operator()(const ag::Vard& E) const {
    return ag::sum(ag::square(ag::sub(ag::matmul(E, ag::Vard::constant(B)), ag::Vard::constant(C))));
  }
};

// The loss of p's elements, without recording (for finite differences).
double loss_value(const GroupParam<double>& p, const TestLoss& loss) {
  ag::NoGrad ng;
  return loss(p.elements()).value().item();
}

// The gradient of the loss w.r.t. p's stored tensor, by one backward pass.
Ad loss_grad(const GroupParam<double>& p, const TestLoss& loss) {
  ag::Tape<double>::current().clear();
  ag::Vard s = p.stored();  // aliases the parameter
  s.zero_grad();
  ag::backward(loss(p.elements()));
  return s.grad();
}

// Relative difference |a - b| / max(|a|, |b|, 1e-12).
double rel(double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-12}); }

const std::vector<std::string> kParamSpecs = {"SO(4)", "U(2)", "SU(3)", "SO(3)xU(2)"};

}  // namespace

TEST_CASE("GroupParam: algebra mode is exp(hat(u)), manifold mode stores elements of G") {
  Rng rng(31);
  for (const std::string& spec : kParamSpecs) {
    INFO(spec);
    std::shared_ptr<const Group> g = make_group(spec);
    const int64_t n = g->n(), m = g->dim(), count = 5;
    std::vector<Parameter<double>> params;
    GroupParam<double> pa("embed", g, count, GroupParamMode::Algebra, 1.0, rng, params);
    GroupParam<double> pm("proto", g, count, GroupParamMode::Manifold, 1.0, rng, params);
    REQUIRE(params.size() == 2);
    // Algebra mode: the coordinates (count, m) are the parameter; the elements are exp(hat(u)).
    CHECK(params[0].name == "embed");
    CHECK(params[0].role == ParamRole::GroupAlgebra);
    CHECK(params[0].dof == count * m);
    CHECK(params[0].var.same(pa.stored()));
    CHECK(pa.stored().shape() == Shape{count, m});
    const Ad E = pa.elements().value();
    CHECK(E.shape() == Shape{count, n, n});
    CHECK(max_abs_diff(E, g->exp(g->hat(pa.stored().value()))) < 1e-14);
    CHECK(g->defect(E) < 1e-12);
    // Manifold mode: the elements (count, n, n) themselves, in G, and elements() is the parameter.
    CHECK(params[1].role == ParamRole::GroupManifold);
    CHECK(params[1].dof == count * m);
    CHECK(params[1].var.same(pm.stored()));
    CHECK(pm.stored().shape() == Shape{count, n, n});
    CHECK(g->defect(pm.stored().value()) < 1e-12);
    CHECK(pm.elements().same(pm.stored()));
  }
  // Initial coordinates u ~ N(0, init_scale^2 / m): ||hat(u)||^2 = ||u||^2 averages init_scale^2.
  std::shared_ptr<const Group> so8 = make_group("SO(8)");
  std::vector<Parameter<double>> params;
  GroupParam<double> p("embed", so8, 400, GroupParamMode::Algebra, 0.5, rng, params);
  const double mean_sq = entry_dot(p.stored().value(), p.stored().value()) / 400;
  CHECK(mean_sq == doctest::Approx(0.25).epsilon(0.05));  // sd of the mean ~ 0.25 * sqrt(2 / (400 * 28))
  // Errors: a base in manifold mode, a group without degrees of freedom, an unknown mode.
  CHECK_THROWS_AS(GroupParam<double>("w", so8, 2, GroupParamMode::Manifold, 1.0, rng, params, true), ValueError);
  CHECK_THROWS_AS(GroupParam<double>("w", make_group("SO(1)"), 2, GroupParamMode::Algebra, 1.0, rng, params),
                  ValueError);
  CHECK(parse_group_param_mode("algebra") == GroupParamMode::Algebra);
  CHECK(parse_group_param_mode("manifold") == GroupParamMode::Manifold);
  CHECK_THROWS_AS(parse_group_param_mode("riemannian"), ValueError);
}

TEST_CASE("GroupParam: rebase keeps the elements and zeroes the coordinates") {
  Rng rng(32);
  for (const std::string& spec : kParamSpecs) {
    INFO(spec);
    std::shared_ptr<const Group> g = make_group(spec);
    const int64_t m = g->dim(), count = 4;
    std::vector<Parameter<double>> params;
    GroupParam<double> p("embed", g, count, GroupParamMode::Algebra, 1.0, rng, params, true);
    REQUIRE(params.size() == 2);
    CHECK(params[1].name == "embed.base");
    CHECK(params[1].role == ParamRole::GroupBase);
    CHECK(params[1].dof == 0);
    ag::Vard u = p.stored();  // aliases the coordinates
    // Before any rebase the base is I: elements = exp(hat(u)).
    CHECK(max_abs_diff(p.elements().value(), g->exp(g->hat(u.value()))) < 1e-14);
    for (int round = 0; round < 3; ++round) {
      INFO("rebase " << round);
      u.value() = rng.normal_array<double>(Shape{count, m});  // as if trained: ||u|| ~ sqrt(m)
      const Ad before = p.elements().value();
      p.rebase();
      CHECK(max_abs_diff(p.elements().value(), before) < 1e-12);
      CHECK(frobenius_norm(u.value()) == 0.0);
      const Ad base = params[1].var.value();
      CHECK(g->defect(base) < 1e-12);
      CHECK(max_abs_diff(base, before) == 0.0);  // the base is the old elements
      // From there on the elements are base exp(hat(u)).
      u.value() = rng.normal_array<double>(Shape{count, m}, 0.3);
      CHECK(max_abs_diff(p.elements().value(), g->compose(base, g->exp(g->hat(u.value())))) < 1e-14);
    }
  }
  std::vector<Parameter<double>> params;
  GroupParam<double> no_base("w", make_group("SO(3)"), 2, GroupParamMode::Algebra, 1.0, rng, params);
  CHECK_THROWS_AS(no_base.rebase(), ValueError);
}

TEST_CASE("GroupParam: gradients through elements() match finite differences in both modes") {
  Rng rng(33);
  for (const std::string& spec : kParamSpecs) {
    INFO(spec);
    std::shared_ptr<const Group> g = make_group(spec);
    const int64_t n = g->n(), m = g->dim(), count = 3;
    const TestLoss loss(rng, count, n);
    std::vector<Parameter<double>> params;

    // Algebra mode, with a base moved away from I by one rebase so the product B exp(hat(u)) is exercised.
    GroupParam<double> pa("embed", g, count, GroupParamMode::Algebra, 1.0, rng, params, true);
    ag::Vard u = pa.stored();
    u.value() = rng.normal_array<double>(Shape{count, m});
    pa.rebase();
    u.value() = rng.normal_array<double>(Shape{count, m}, 0.7);
    const Ad u0 = u.value();
    const Ad grad_u = loss_grad(pa, loss);
    REQUIRE(grad_u.shape() == Shape{count, m});
    for (int trial = 0; trial < 3; ++trial) {
      const Ad v = rng.normal_array<double>(Shape{count, m});
      double err = 0;
      const double numeric = ag::ridders_derivative(
          [&](double t) {
            for (int64_t k = 0; k < u0.size(); ++k) u.value()[k] = u0[k] + t * v[k];
            return loss_value(pa, loss);
          },
          0.1, &err);
      u.value() = u0;
      INFO("algebra mode: <grad, v> = " << entry_dot(grad_u, v) << ", Ridders " << numeric << " (+- " << err << ")");
      CHECK(rel(entry_dot(grad_u, v), numeric) < 1e-8);
    }
    // check_vjp on the coordinates of the map elements() records, u -> B exp(hat(u)) ...
    const Ad base = params.back().var.value();
    const ag::VjpFn elements_of = [&](const std::vector<ag::Vard>& x) {
      return compose(*g, ag::Vard::constant(base), expm(hat(*g, x[0])));
    };
    test::require_vjp(ag::check_vjp(spec + " GroupParam algebra elements", elements_of, {u0}, rng));
    // ... which is exactly that map: same value, same gradient.
    {
      ag::Tape<double>::current().clear();
      ag::Vard x = ag::Vard::parameter(u0);
      const ag::Vard E = elements_of({x});
      CHECK(max_abs_diff(E.value(), pa.elements().value()) == 0.0);
      ag::backward(loss(E));
      CHECK(max_abs_diff(x.grad(), grad_u) < 1e-14 * (1 + frobenius_norm(grad_u)));
    }

    // Manifold mode: the Euclidean gradient w.r.t. W (any direction of R^{n x n}) ...
    GroupParam<double> pm("proto", g, count, GroupParamMode::Manifold, 1.0, rng, params);
    ag::Vard W = pm.stored();
    const Ad W0 = W.value();
    const Ad grad_W = loss_grad(pm, loss);
    REQUIRE(grad_W.shape() == Shape{count, n, n});
    for (int trial = 0; trial < 3; ++trial) {
      const Ad V = rng.normal_array<double>(Shape{count, n, n});
      const double numeric = ag::ridders_derivative(
          [&](double t) {
            for (int64_t k = 0; k < W0.size(); ++k) W.value()[k] = W0[k] + t * V[k];
            return loss_value(pm, loss);
          },
          0.1);
      W.value() = W0;
      INFO("manifold mode: <grad, V> = " << entry_dot(grad_W, V) << ", Ridders " << numeric);
      CHECK(rel(entry_dot(grad_W, V), numeric) < 1e-8);
    }
    // ... and its Riemannian coordinates (optim/riemannian.hpp): <g, v> = d/dt L(W exp(t hat(v))) at 0.
    const Ad rg = optim::riemannian_grad_coords(*g, W0, grad_W);
    REQUIRE(rg.shape() == Shape{count, m});
    for (int trial = 0; trial < 3; ++trial) {
      const Ad v = rng.normal_array<double>(Shape{count, m});
      const double numeric = ag::ridders_derivative(
          [&](double t) {
            Ad tv = v;
            for (int64_t k = 0; k < tv.size(); ++k) tv[k] *= t;
            W.value() = g->compose(W0, g->exp(g->hat(tv)));
            return loss_value(pm, loss);
          },
          0.1);
      W.value() = W0;
      INFO("manifold mode, Riemannian: <g, v> = " << entry_dot(rg, v) << ", Ridders " << numeric);
      CHECK(rel(entry_dot(rg, v), numeric) < 1e-8);
    }
  }
}
