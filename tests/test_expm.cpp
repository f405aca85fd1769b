// Tests of groups/expm: the forward against closed forms (rotations, diagonal and
// nilpotent matrices, exp(A) exp(-A) = I, det exp(A) = e^tr A) and against a
// long-double Taylor reference at both sides of every degree's switching threshold;
// the pullback by check_vjp, the adjoint identity <G, L(A,E)> = <L(A^T,G), E>, and
// fast route = block route; batching; shape errors; the plans of skew exponents
// against their exact 2-norm (LAPACK).
//
// Tolerances are stated relative to the largest entry of the exact result. Scaling
// and squaring amplifies the unit roundoff u roughly by the number of squarings and
// by ||A|| (the rotation angle error of s squarings is ~ theta u), so the bounds grow
// with ||A||: double u = 1.1e-16, float u = 6e-8.
#include <doctest/doctest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "autograd/tape.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"
#include "groups/expm_kernel.hpp"
#include "tests/test_helpers.hpp"

using namespace liegrad;
using namespace liegrad::groups;

namespace {

using LD = long double;

// N random (n, n) matrices, each scaled to 1-norm `norm` (the norm the degree choice uses).
template <class T>
std::vector<T> random_batch(Rng& rng, int64_t N, int64_t n, double norm, bool skew) {
  std::vector<T> a(static_cast<size_t>(N * n * n));
  for (int64_t b = 0; b < N; ++b) {
    std::vector<double> x(static_cast<size_t>(n * n));
    for (auto& v : x) v = rng.normal();
    if (skew)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j <= i; ++j) {
          const double v = i == j ? 0.0 : x[size_t(i * n + j)] - x[size_t(j * n + i)];
          x[size_t(i * n + j)] = v;
          x[size_t(j * n + i)] = -v;
        }
    double n1 = 0;
    for (int64_t j = 0; j < n; ++j) {
      double col = 0;
      for (int64_t i = 0; i < n; ++i) col += std::abs(x[size_t(i * n + j)]);
      n1 = std::max(n1, col);
    }
    for (int64_t i = 0; i < n * n; ++i) a[size_t(b * n * n + i)] = static_cast<T>(x[size_t(i)] * norm / n1);
  }
  return a;
}

// exp(A) in long double: Taylor to 40 terms on 2^-s A with ||2^-s A||_1 <= 1/2, then s squarings.
template <class T>
std::vector<LD> reference_expm(int64_t n, const T* A) {
  const size_t n2 = size_t(n * n);
  LD norm = 0;
  for (int64_t j = 0; j < n; ++j) {
    LD col = 0;
    for (int64_t i = 0; i < n; ++i) col += std::fabs(LD(A[i * n + j]));
    norm = std::max(norm, col);
  }
  int s = 0;
  while (norm > 0.5L) norm /= 2, ++s;
  std::vector<LD> X(n2), term(n2), sum(n2, 0), tmp(n2);
  for (size_t i = 0; i < n2; ++i) X[i] = std::ldexp(LD(A[i]), -s);
  auto matmul = [n](const std::vector<LD>& a, const std::vector<LD>& b, std::vector<LD>& c) {
    std::fill(c.begin(), c.end(), LD(0));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < n; ++j) c[size_t(i * n + j)] += a[size_t(i * n + k)] * b[size_t(k * n + j)];
  };
  for (int64_t i = 0; i < n; ++i) term[size_t(i * n + i)] = 1;
  for (int k = 1; k <= 40; ++k) {
    for (size_t i = 0; i < n2; ++i) sum[i] += term[i];
    matmul(term, X, tmp);
    for (size_t i = 0; i < n2; ++i) term[i] = tmp[i] / k;
  }
  for (int k = 0; k < s; ++k) {
    matmul(sum, sum, tmp);
    sum.swap(tmp);
  }
  return sum;
}

// max |a - ref| / max |ref|
template <class T, class R>
double rel_err(const std::vector<T>& a, const std::vector<R>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, double(std::fabs(LD(a[i]) - LD(ref[i]))));
    scale = std::max(scale, double(std::fabs(LD(ref[i]))));
  }
  return err / std::max(scale, 1e-300);
}

template <class T>
std::vector<T> expm_of(int64_t N, int64_t n, const std::vector<T>& A) {
  std::vector<T> Q(A.size());
  expm_forward(N, n, A.data(), Q.data());
  return Q;
}

template <class T>
std::vector<T> pullback(int64_t N, int64_t n, const std::vector<T>& A, const std::vector<T>& G, bool block) {
  std::vector<T> dA(A.size(), T(0));
  if (block)
    expm_pullback_block(N, n, A.data(), G.data(), dA.data());
  else
    expm_pullback(N, n, A.data(), G.data(), dA.data());
  return dA;
}

template <class T>
double eps();
template <>
double eps<double>() {
  return 1.1e-16;
}
template <>
double eps<float>() {
  return 6e-8;
}

// The 1-norm thresholds of T_1, T_2, T_4, T_8, 15+ and T_18 for T's unit roundoff, as in
// groups/expm.cpp: BBC 2019's for the Taylor schemes, ours for Sastre et al.'s 15+.
template <class T>
std::vector<double> plan_thetas() {
  if (std::is_same_v<T, double>)
    return {2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
            4.991228871115323e-02, 6.764217495424514e-01, 1.090863719290036e+00};
  return {1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
          5.800524627688768e-01, 2.346206912756923e+00, 3.010066362817634e+00};
}

}  // namespace

TEST_CASE_TEMPLATE("expm of a rotation generator is the rotation", T, double, float) {
  // exp(theta [[0,-1],[1,0]]) = [[cos, -sin], [sin, cos]]. The error is an angle
  // error of a few u per squaring step, so ~ (1 + theta) u times a small constant:
  // measured worst 1.3 (double) and 8.4 (float, theta = 2.5: T_18 unsquared near its
  // threshold, whose coefficients of size ~10 cancel). The angles cover every Taylor
  // degree in both precisions, including the degree-8 windows (0.04 in double, 0.5 in
  // float) where a wrong x7 coefficient shows.
  for (double theta : {1e-9, 1e-5, 0.04, 0.2, 0.5, 1.0, 2.5, 10.0, 31.4, 100.0}) {
    const T t = static_cast<T>(theta);
    const std::vector<T> A = {T(0), -t, t, T(0)};
    const std::vector<T> Q = expm_of<T>(1, 2, A);
    const LD c = std::cos(LD(t)), s = std::sin(LD(t));
    const std::vector<LD> R = {c, -s, s, c};
    INFO("theta = " << theta);
    CHECK(rel_err(Q, R) <= 16 * eps<T>() * (1 + theta));
  }
}

TEST_CASE_TEMPLATE("expm of diagonal and nilpotent matrices", T, double, float) {
  SUBCASE("diagonal") {
    const int64_t n = 6;
    const std::vector<double> d = {-5.0, -1.0, 0.0, 1e-3, 0.7, 4.0};
    std::vector<T> A(size_t(n * n), T(0));
    for (int64_t i = 0; i < n; ++i) A[size_t(i * n + i)] = static_cast<T>(d[size_t(i)]);
    const std::vector<T> Q = expm_of<T>(1, n, A);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const LD want = i == j ? std::exp(LD(A[size_t(i * n + i)])) : LD(0);
        // Off the diagonal exactly 0. On it, relative for e^d >= 1 but absolute below:
        // the Taylor schemes cancel terms of size ~1 to form e^d << 1 (e^-5 carries
        // ~1e-5 relative error in float), so only the normwise error is ~u.
        if (i != j) CHECK(Q[size_t(i * n + j)] == T(0));
        CHECK(std::fabs(LD(Q[size_t(i * n + j)]) - want) <= 16 * eps<T>() * std::max(want, LD(1)));
      }
  }
  SUBCASE("nilpotent: the series terminates") {
    // c J (J the shift) gives (0, k) entries c^k / k!; strictly upper triangular random
    // matrices check the rest. Norms cross every degree and need squaring at the top;
    // 15+ (degree 16, exact to 15: n = 20 sees its every coefficient) runs unsquared at
    // 0.3 and 0.6 in double, 0.6, 1.0 and 2.0 in float, and squared at 2.5 in double.
    const int64_t n = 20;
    Rng rng(7);
    for (double c : {1e-9, 1e-4, 0.01, 0.04, 0.3, 0.6, 1.0, 2.0, 2.5, 10.0}) {
      for (int variant = 0; variant < 2; ++variant) {
        std::vector<T> A(size_t(n * n), T(0));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = i + 1; j < n; ++j)
            if (variant == 0 ? j == i + 1 : true)
              A[size_t(i * n + j)] = static_cast<T>(variant == 0 ? c : c * rng.uniform(-1, 1) / 4);
        // exp(A) = sum_{k < n} A^k / k!, exactly, in long double.
        std::vector<LD> term(size_t(n * n), 0), sum(size_t(n * n), 0), tmp(size_t(n * n));
        for (int64_t i = 0; i < n; ++i) term[size_t(i * n + i)] = 1;
        for (int k = 1; k <= n; ++k) {
          for (size_t i = 0; i < sum.size(); ++i) sum[i] += term[i];
          std::fill(tmp.begin(), tmp.end(), LD(0));
          for (int64_t i = 0; i < n; ++i)
            for (int64_t l = 0; l < n; ++l)
              for (int64_t j = 0; j < n; ++j)
                tmp[size_t(i * n + j)] += term[size_t(i * n + l)] * LD(A[size_t(l * n + j)]);
          for (size_t i = 0; i < sum.size(); ++i) term[i] = tmp[i] / k;
        }
        INFO("c = " << c << ", variant " << variant);
        // Measured worst: 1.9 u (1 + c). A wrong Taylor coefficient (e.g. x7 of T_8 off by
        // 1/x3) gives 1e-10 (double, c = 0.04) and 1e-6 (float, c = 0.3).
        CHECK(rel_err(expm_of<T>(1, n, A), sum) <= 4 * eps<T>() * (1 + c));
      }
    }
  }
}

TEST_CASE_TEMPLATE("expm satisfies exp(A) exp(-A) = I and det exp(A) = e^tr(A)", T, double, float) {
  Rng rng(11);
  const int64_t n = 6;
  for (double norm : {0.1, 1.0, 4.0}) {
    for (bool skew : {false, true}) {
      const std::vector<T> A = random_batch<T>(rng, 1, n, norm, skew);
      std::vector<T> minus(A);
      for (auto& v : minus) v = -v;
      const std::vector<T> P = expm_of<T>(1, n, A), M = expm_of<T>(1, n, minus);
      double err = 0, np = 0, nm = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          LD s = i == j ? -1 : 0;
          for (int64_t k = 0; k < n; ++k) s += LD(P[size_t(i * n + k)]) * LD(M[size_t(k * n + j)]);
          err = std::max(err, double(std::fabs(s)));
          np = std::max(np, double(std::fabs(P[size_t(i * n + j)])));
          nm = std::max(nm, double(std::fabs(M[size_t(i * n + j)])));
        }
      INFO("norm " << norm << (skew ? " skew" : " general"));
      // |P M - I| <= n |P| |M| times the relative errors of both factors (measured
      // worst 0.8 of n u (1 + norm) |P| |M|; the same for the determinant).
      CHECK(err <= 4 * n * eps<T>() * (1 + norm) * np * nm);

      std::vector<double> lu(P.begin(), P.end());
      std::vector<lapack_int> piv(static_cast<size_t>(n));
      REQUIRE(LAPACKE_dgetrf(LAPACK_ROW_MAJOR, n, n, lu.data(), n, piv.data()) == 0);
      double det = 1, trace = 0;
      for (int64_t i = 0; i < n; ++i) {
        det *= lu[size_t(i * n + i)] * (piv[size_t(i)] != i + 1 ? -1 : 1);
        trace += double(A[size_t(i * n + i)]);
      }
      CHECK(std::abs(det / std::exp(trace) - 1) <= 4 * n * eps<T>() * (1 + norm));
    }
  }
}

TEST_CASE_TEMPLATE("expm matches a long-double reference around every switching threshold", T, double, float) {
  const std::vector<double> theta = plan_thetas<T>();
  std::vector<double> norms;
  for (double t : theta) norms.insert(norms.end(), {0.99 * t, 1.01 * t});
  norms.push_back(50.0);
  Rng rng(5);
  for (double norm : norms)
    for (bool skew : {false, true}) {
      const int64_t n = 8;
      const std::vector<T> A = random_batch<T>(rng, 1, n, norm, skew);
      const double err = rel_err(expm_of<T>(1, n, A), reference_expm(n, A.data()));
      INFO("||A||_1 = " << norm << (skew ? " skew" : " general") << ": rel err " << err);
      // Measured worst over 20 draws per norm: 6.2 u (1 + ||A||/2), i.e. 1.1e-14 in double
      // and 3.7e-6 in float at ||A||_1 = 50, below 1e-6 in float up to ||A||_1 = 3.
      CHECK(err <= 12 * eps<T>() * (1 + norm / 2));
    }
}

TEST_CASE("expm of matrices above the small-kernel size (BLAS path)") {
  Rng rng(9);
  const int64_t n = 70;
  const std::vector<double> A = random_batch<double>(rng, 2, n, 3.0, false);
  const std::vector<double> Q = expm_of<double>(2, n, A);
  CHECK(rel_err(std::vector<double>(Q.begin(), Q.begin() + n * n), reference_expm(n, A.data())) <= 1e-13);
  const std::vector<double> G = random_batch<double>(rng, 2, n, 1.0, false);
  CHECK(rel_err(pullback(2, n, A, G, false), pullback(2, n, A, G, true)) <= 1e-12);
}

TEST_CASE("expm pullback passes check_vjp (tape op, double)") {
  Rng rng(2024);
  const auto checks = expm_op_checks();
  CHECK(checks.size() >= 5);
  for (const auto& c : checks) {
    const ag::VjpResult r = c.run(rng);
    test::require_vjp(r);
    INFO(r.name << " at " << r.shapes << ": worst rel error " << r.max_rel_error);
    CHECK(r.max_rel_error <= 1e-7);
  }
}

TEST_CASE("expm pullback satisfies the adjoint identity <G, L(A,E)> = <L(A^T,G), E>") {
  // L(A, E) from the block route (top-right of exp([[A, E], [0, A]]), i.e. the block
  // pullback at A^T), L(A^T, G) from the fast route: checks both against each other.
  Rng rng(3);
  for (int64_t n : {2, 5, 16})
    for (double norm : {0.01, 0.5, 3.0, 30.0}) {
      const std::vector<double> A = random_batch<double>(rng, 1, n, norm, false);
      const std::vector<double> E = random_batch<double>(rng, 1, n, 1.0, false);
      const std::vector<double> G = random_batch<double>(rng, 1, n, 1.0, false);
      std::vector<double> At(A.size());
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) At[size_t(i * n + j)] = A[size_t(j * n + i)];
      const std::vector<double> LAE = pullback(1, n, At, E, true), LAtG = pullback(1, n, A, G, false);
      double lhs = 0, rhs = 0, mag = 0;
      for (size_t i = 0; i < A.size(); ++i) {
        lhs += G[i] * LAE[i];
        rhs += LAtG[i] * E[i];
        mag += std::abs(G[i] * LAE[i]) + std::abs(LAtG[i] * E[i]);
      }
      INFO("n " << n << ", ||A||_1 " << norm << ": " << lhs << " vs " << rhs);
      CHECK(std::abs(lhs - rhs) <= 1e-12 * mag);
    }
}

TEST_CASE_TEMPLATE("expm fast pullback equals the block pullback", T, double, float) {
  const double tol = std::is_same_v<T, double> ? 1e-10 : 1e-4;
  Rng rng(17);
  double worst = 0;
  for (int64_t n : {1, 2, 3, 8, 16, 33})
    for (double norm : {0.01, 0.3, 1.0, 5.0, 30.0})
      for (bool skew : {false, true}) {
        if (skew && n == 1) continue;
        const int64_t N = 2;
        const std::vector<T> A = random_batch<T>(rng, N, n, norm, skew);
        const std::vector<T> G = random_batch<T>(rng, N, n, 1.0, false);
        const double err = rel_err(pullback(N, n, A, G, false), pullback(N, n, A, G, true));
        worst = std::max(worst, err);
        INFO("n " << n << ", ||A||_1 " << norm << (skew ? " skew" : " general") << ": rel err " << err);
        CHECK(err <= tol);
      }
  MESSAGE("worst fast-vs-block relative error (" << std::string(std::is_same_v<T, double> ? "double" : "float")
                                                 << "): " << worst);
}

TEST_CASE_TEMPLATE("expm results do not depend on batching", T, double, float) {
  Rng rng(23);
  const int64_t N = 9, n = 7, n2 = n * n;
  // Mixed norms, so one batch holds several degrees and squaring counts.
  std::vector<T> A;
  for (double norm : {1e-9, 1e-5, 1e-3, 0.04, 0.3, 1.0, 2.5, 10.0, 40.0}) {
    const std::vector<T> a = random_batch<T>(rng, 1, n, norm, false);
    A.insert(A.end(), a.begin(), a.end());
  }
  const std::vector<T> G = random_batch<T>(rng, N, n, 1.0, false);
  const std::vector<T> Q = expm_of<T>(N, n, A), dA = pullback(N, n, A, G, false);
  for (int64_t b = 0; b < N; ++b) {
    const std::vector<T> a(A.begin() + b * n2, A.begin() + (b + 1) * n2),
        g(G.begin() + b * n2, G.begin() + (b + 1) * n2);
    const std::vector<T> q = expm_of<T>(1, n, a), d = pullback(1, n, a, g, false);
    CHECK(std::equal(q.begin(), q.end(), Q.begin() + b * n2));
    CHECK(std::equal(d.begin(), d.end(), dA.begin() + b * n2));
  }
}

TEST_CASE_TEMPLATE("expm tape op: values, cached and uncached backward, shape errors", T, double, float) {
  Rng rng(29);
  const int64_t N = 5, n = 6;
  std::vector<T> A;
  for (double norm : {1e-3, 0.3, 1.0, 5.0, 30.0}) {
    const std::vector<T> a = random_batch<T>(rng, 1, n, norm, true);
    A.insert(A.end(), a.begin(), a.end());
  }
  const std::vector<T> G = random_batch<T>(rng, N, n, 1.0, false);
  const std::vector<T> want_q = expm_of<T>(N, n, A), want_d = pullback(N, n, A, G, false);
  for (int64_t budget : {int64_t(1) << 28, int64_t(0)}) {
    set_expm_cache_budget(budget);
    ag::Var<T> x = ag::Var<T>::parameter(Array<T>(Shape{N, n, n}, A));
    ag::Var<T> q = expm(x);
    CHECK(q.value().to_vector() == want_q);
    ag::Tape<T>::current().backward(q, Array<T>(Shape{N, n, n}, G));
    INFO("cache budget " << budget);
    CHECK(x.grad().to_vector() == want_d);  // the replayed and the recomputed pullback agree bitwise
  }
  set_expm_cache_budget(int64_t(256) << 20);
  CHECK_THROWS_AS(set_expm_cache_budget(-1), ValueError);

  ag::Var<T> single = ag::Var<T>::parameter(Array<T>(Shape{n, n}, std::vector<T>(A.begin(), A.begin() + n * n)));
  CHECK(expm(single).shape() == Shape{n, n});
  CHECK_THROWS_AS(expm(ag::Var<T>(Array<T>(Shape{2, 3}))), ShapeError);
  CHECK_THROWS_AS(expm(ag::Var<T>(Array<T>(Shape{4}))), ShapeError);
  CHECK_THROWS_AS(expm(ag::Var<T>(Array<T>(Shape{2, 3, 4}))), ShapeError);
}

TEST_CASE_TEMPLATE("skew-symmetric exponents are planned from a bound on ||A||_2: fewer products, same accuracy", T,
                   double, float) {
  // The thresholds of 15+ and T_18 and the squaring range, approached from both
  // sides in sqrt(||A^2||_1), one of the two 2-norm bounds the skew route takes the
  // smaller of (the other is tested below).
  const std::vector<double> theta = {plan_thetas<T>()[4], plan_thetas<T>()[5]};
  Rng rng(41);
  const int64_t n = 16;
  std::vector<T> scratch(static_cast<size_t>(expm_forward_scratch(n)));
  int fewer = 0, cases = 0;
  for (double target : {0.99 * theta[0], 1.01 * theta[0], 0.99 * theta[1], 1.01 * theta[1], 3.0, 10.0, 50.0}) {
    // A random skew matrix scaled so that sqrt(||A^2||_1) = target.
    std::vector<T> A = random_batch<T>(rng, 1, n, 1.0, true);
    std::vector<double> a2(static_cast<size_t>(n * n), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < n; ++j) a2[size_t(i * n + j)] += double(A[size_t(i * n + k)]) * double(A[size_t(k * n + j)]);
    double a2_norm = 0, a_norm = 0;
    for (int64_t j = 0; j < n; ++j) {
      double c2 = 0, c1 = 0;
      for (int64_t i = 0; i < n; ++i) c2 += std::abs(a2[size_t(i * n + j)]), c1 += std::abs(double(A[size_t(i * n + j)]));
      a2_norm = std::max(a2_norm, c2), a_norm = std::max(a_norm, c1);
    }
    const double scale = target / std::sqrt(a2_norm);
    for (auto& v : A) v = static_cast<T>(v * scale);
    a_norm *= scale;
    // The plan: never more products than the 1-norm plan of the same matrix made non-skew
    // by a last-bit change (which takes the 1-norm route).
    const ExpmPlan skew_plan = expm_plan<T>(n, A.data(), scratch.data());
    CHECK(skew_plan.known_square);
    // The fused kernels' route (ExponentKind::Skew skips the check) plans the same.
    const ExpmPlan vouched = expm_plan<T>(n, A.data(), scratch.data(), ExponentKind::Skew);
    CHECK(vouched.degree == skew_plan.degree);
    CHECK(vouched.squarings == skew_plan.squarings);
    CHECK(vouched.known_square);
    std::vector<T> general = A;
    general[1] = std::nextafter(general[1], T(1e9));
    const ExpmPlan norm1_plan = expm_plan<T>(n, general.data(), scratch.data());
    CHECK_FALSE(norm1_plan.known_square);
    CHECK(skew_plan.products() <= norm1_plan.products());
    fewer += skew_plan.products() < norm1_plan.products();
    ++cases;
    // Accuracy: the same bound as the 1-norm route's (expm matches a long-double reference...).
    const double err = rel_err(expm_of<T>(1, n, A), reference_expm(n, A.data()));
    INFO("sqrt(||A^2||_1) = " << target << ", ||A||_1 = " << a_norm << ": products " << skew_plan.products() << " vs "
                              << norm1_plan.products() << ", rel err " << err);
    CHECK(err <= 12 * eps<T>() * (1 + a_norm / 2));
    // And the one-matrix kernel the fused ops use gives the batch route's result exactly.
    std::vector<T> Q1(A.size());
    const ExpmPlan p = expm_plan<T>(n, A.data(), scratch.data());
    expm_one_forward<T>(n, A.data(), p, Q1.data(), scratch.data(), nullptr);
    CHECK(rel_err(Q1, expm_of<T>(1, n, A)) == 0.0);
  }
  MESSAGE(fewer << " of " << cases << " skew matrices took fewer products than the 1-norm plan");
  CHECK(fewer >= 4);
}

TEST_CASE_TEMPLATE("expm_one_tangent in direction G^T is the transpose of expm_one_pullback of G", T, double, float) {
  // The fused kernels take A's cotangent as vee(-dAt) with dAt = L(A, dE^T) instead of
  // vee(L(A^T, dE)) (groups/expm_kernel.hpp). Both run one tangent program, so they agree
  // entry for entry: at every degree and with squarings, replaying a forward's cache
  // and recomputing, for skew and general A.
  Rng rng(17);
  int checked = 0;
  for (int64_t n : {3, 8, 16}) {
    std::vector<T> scratch(static_cast<size_t>(expm_pullback_scratch(n)));
    for (double norm : {1e-3, 0.3, 1.2, 2.9, 9.0, 40.0})
      for (bool skew : {true, false}) {
        const std::vector<T> A = random_batch<T>(rng, 1, n, norm, skew);
        std::vector<T> G(static_cast<size_t>(n * n)), Gt(G.size());
        for (auto& v : G) v = static_cast<T>(rng.normal());
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) Gt[size_t(j * n + i)] = G[size_t(i * n + j)];
        std::vector<T> Q(G.size());
        const ExpmPlan plan = expm_plan<T>(n, A.data(), scratch.data(), skew ? ExponentKind::Skew : ExponentKind::Unknown);
        std::vector<T> cache(static_cast<size_t>(std::max<int64_t>(expm_cache_size(plan, n), 1)));
        expm_one_forward<T>(n, A.data(), plan, Q.data(), scratch.data(), cache.data());
        for (const T* c : {static_cast<const T*>(cache.data()), static_cast<const T*>(nullptr)}) {
          std::vector<T> dA(G.size(), T(0)), dAt(G.size(), T(-7));
          expm_one_pullback<T>(n, A.data(), plan, G.data(), dA.data(), scratch.data(), c);
          expm_one_tangent<T>(n, A.data(), plan, Gt.data(), dAt.data(), scratch.data(), c);
          int differ = 0;
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) differ += dAt[size_t(j * n + i)] != dA[size_t(i * n + j)];
          INFO("n " << n << ", ||A||_1 " << norm << (skew ? " skew" : " general") << (c ? ", replayed" : ", recomputed"));
          CHECK(differ == 0);
          ++checked;
        }
      }
  }
  CHECK(checked == 72);
}

TEST_CASE_TEMPLATE("expm_one_tangent_with_value: the tangent and the forward's exp(A), bit for bit", T, double, float) {
  // The OSM-RNN scan keeps neither E nor the products from the forward; its backward
  // takes both from this call, so it must give expm_one_forward's Q and
  // expm_one_tangent's M exactly: every degree (T_1 at 1e-3 up to squarings at 40), the
  // plan's known A^2 (skew) and none (general), with no or one or more squarings.
  Rng rng(23);
  int checked = 0;
  for (int64_t n : {3, 8, 16, 23}) {
    std::vector<T> fwd_scratch(static_cast<size_t>(expm_forward_scratch(n)));
    std::vector<T> scratch(static_cast<size_t>(expm_pullback_scratch(n)));
    for (double norm : {1e-3, 0.3, 1.2, 2.9, 9.0, 40.0})
      for (bool skew : {true, false}) {
        const std::vector<T> A = random_batch<T>(rng, 1, n, norm, skew);
        std::vector<T> E(static_cast<size_t>(n * n));
        for (auto& v : E) v = static_cast<T>(rng.normal());
        const ExpmPlan plan =
            expm_plan<T>(n, A.data(), fwd_scratch.data(), skew ? ExponentKind::Skew : ExponentKind::Unknown);
        std::vector<T> Q(E.size()), M(E.size()), Q2(E.size(), T(-7)), M2(E.size(), T(-7));
        expm_one_forward<T>(n, A.data(), plan, Q.data(), fwd_scratch.data(), nullptr);
        expm_one_tangent<T>(n, A.data(), plan, E.data(), M.data(), scratch.data(), nullptr);
        expm_one_tangent_with_value<T>(n, A.data(), plan, E.data(), M2.data(), Q2.data(), scratch.data());
        INFO("n " << n << ", ||A||_1 " << norm << (skew ? " skew" : " general") << ", degree " << plan.degree
                  << ", squarings " << plan.squarings);
        CHECK(Q2 == Q);
        CHECK(M2 == M);
        ++checked;
      }
  }
  CHECK(checked == 48);
}

TEST_CASE("the float plan's 1-norm: every size and column, at the top threshold, NaN and inf") {
  // One nonzero entry (of either sign) decides ||A||_1, so the plan is known exactly: T_18
  // without squaring up to theta_18 (float), 15+ with one squaring just above it (the same
  // 5 products: 2 theta_15+ = 4.69 > theta_18). Sizes cover one to four SIMD registers
  // per row, their tails, and the scalar path past 64.
  const float theta18 = 3.010066362817634f;
  const float below = std::nextafter(theta18, 0.0f) <= 3.010066362817634 ? theta18 : std::nextafter(theta18, 0.0f);
  const float above = std::nextafter(below, 10.0f) > 3.010066362817634 ? std::nextafter(below, 10.0f)
                                                                       : std::nextafter(std::nextafter(below, 10.0f), 10.0f);
  auto plan_is = [](const ExpmPlan& p, int degree, int squarings) {
    return p.degree == degree && p.squarings == squarings;
  };
  int checked = 0;
  for (int64_t n : {1, 5, 8, 9, 16, 17, 31, 33, 48, 63, 64, 65}) {
    std::vector<float> scratch(static_cast<size_t>(expm_forward_scratch(n)));
    for (int64_t j : {int64_t(0), n / 2, n - 1}) {
      for (float sign : {1.0f, -1.0f}) {
        std::vector<float> A(static_cast<size_t>(n * n), 0.0f);
        if (n > 1) A[size_t((j + 1) % n)] = 0.5f;  // a smaller column elsewhere (row 0)
        float& e = A[size_t((n - 1) * n + j)];
        e = sign * below;
        INFO("n " << n << ", column " << j << ", sign " << sign);
        CHECK(plan_is(expm_plan<float>(n, A.data(), scratch.data()), 5, 0));
        e = sign * above;
        CHECK(plan_is(expm_plan<float>(n, A.data(), scratch.data()), 4, 1));
        e = NAN;  // a non-finite norm: T_18 without squaring, so the NaN reaches Q
        CHECK(plan_is(expm_plan<float>(n, A.data(), scratch.data()), 5, 0));
        ++checked;
      }
    }
  }
  CHECK(checked == 12 * 3 * 2);
}

TEST_CASE("a float skew plan whose A^2 squares overflow falls back to the 1-norm of A^2") {
  // A rotation by 1e10 in the (0, 1) plane: A^2 has -1e20 twice on its diagonal, whose
  // squares overflow float (the plan sums them in float lanes), so the Samuelson bound is
  // inf and the plan must come from sqrt(||A^2||_1) = 1e10 = ||A||_2: the plan of the
  // same norm by the 1-norm route. (Its result is not checked: 32 squarings in float
  // amplify the rounding past overflow on either route.)
  const int64_t n = 16;
  std::vector<float> A(static_cast<size_t>(n * n), 0.0f), scratch(static_cast<size_t>(expm_forward_scratch(n)));
  A[1] = 1e10f;
  A[size_t(n)] = -1e10f;
  const ExpmPlan skew = expm_plan<float>(n, A.data(), scratch.data(), ExponentKind::Skew);
  CHECK(skew.known_square);
  std::vector<float> general = A;
  general[2] = 1e-30f;  // not skew: the 1-norm route, ||A||_1 = 1e10 as well
  const ExpmPlan by_norm1 = expm_plan<float>(n, general.data(), scratch.data());
  CHECK_FALSE(by_norm1.known_square);
  CHECK(skew.degree == by_norm1.degree);
  CHECK(skew.squarings == by_norm1.squarings);
  CHECK(skew.squarings == 32);  // 15+ covers 2.346 2^s: 2.346 2^31 < 1e10 <= 2.346 2^32
}

TEST_CASE("the plan's tie rule, and a finite double norm near DBL_MAX") {
  // Where 15+ with s + 1 squarings and T_18 with s cost the same products, i.e. for norms
  // in (theta_15+ 2^s, theta_18 2^s], T_18 is taken: it squares once less. One nonzero
  // entry decides ||A||_1 (the 1-norm route: the matrix is not skew).
  const int64_t n = 4;
  std::vector<float> scratch(static_cast<size_t>(expm_forward_scratch(n)));
  struct Case {
    float norm;
    int degree, squarings;
  };
  for (const Case& c : {Case{2.0f, 4, 0}, Case{2.5f, 5, 0}, Case{4.0f, 4, 1}, Case{5.0f, 5, 1}, Case{8.0f, 4, 2},
                        Case{10.0f, 5, 2}}) {
    std::vector<float> A(static_cast<size_t>(n * n), 0.0f);
    A[size_t(3 * n + 1)] = c.norm;
    const ExpmPlan plan = expm_plan<float>(n, A.data(), scratch.data());
    INFO("||A||_1 = " << c.norm << ": degree index " << plan.degree << ", squarings " << plan.squarings);
    CHECK(plan.degree == c.degree);
    CHECK(plan.squarings == c.squarings);
  }
  // A double norm near DBL_MAX: norm / theta_15+ would overflow (theta_15+ < 1) and the
  // squaring count with it (undefined behaviour, then a negative product count). The plan
  // must stay finite; and this A is nilpotent, so exp(A) = I + A, which scaling by 2^-s
  // and squaring s times reproduces to rounding (at DBL_MAX itself one ulp would overflow,
  // so only its plan is checked).
  std::vector<double> dscratch(static_cast<size_t>(expm_forward_scratch(n)));
  for (double big : {1.5e308, std::numeric_limits<double>::max()}) {
    std::vector<double> A(static_cast<size_t>(n * n), 0.0);
    A[size_t(3 * n + 1)] = big;
    const ExpmPlan plan = expm_plan<double>(n, A.data(), dscratch.data());
    INFO("||A||_1 = " << big << ": degree index " << plan.degree << ", squarings " << plan.squarings);
    CHECK(plan.squarings >= 1023);
    CHECK(plan.squarings <= 1026);
    if (big == std::numeric_limits<double>::max()) continue;
    const std::vector<double> Q = expm_of<double>(1, n, A);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double want = i == j ? 1.0 : A[size_t(i * n + j)];
        CHECK(std::abs(Q[size_t(i * n + j)] - want) <= 1e-14 * std::abs(want));
      }
  }
}

namespace {

// Products of the plan an exact ||A||_2 would give: the smallest degree whose threshold
// it is within, else the cheaper of 15+ (4 products) and T_18 (5) with the squarings
// each needs (groups/expm.cpp).
template <class T>
int exact_plan_products(double norm2) {
  const std::vector<double> theta = plan_thetas<T>();
  for (int d = 0; d < 6; ++d)
    if (norm2 <= theta[size_t(d)]) return d;
  auto squarings = [&](int d) { return std::max(0, int(std::ceil(std::log2(norm2 / theta[size_t(d)])))); };
  return std::min(4 + squarings(4), 5 + squarings(5));
}

// ||A||_2 of a real skew A (n,n), from the eigenvalues of the symmetric -A^2 in double.
template <class T>
double skew_norm2(int64_t n, const std::vector<T>& A) {
  std::vector<double> m(static_cast<size_t>(n * n), 0.0), w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < n; ++j) m[size_t(i * n + j)] -= double(A[size_t(i * n + k)]) * double(A[size_t(k * n + j)]);
  REQUIRE(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', int(n), m.data(), int(n), w.data()) == 0);
  return std::sqrt(std::max(0.0, w.back()));
}

// A random real skew (n,n) matrix Q diag(sigma_j J) Q^T: rotation planes at rates sigma
// (k = n/2 of them, the rest 0), turned by a random orthogonal Q so no entry pattern gives
// the spectrum away.
template <class T>
std::vector<T> skew_with_rates(Rng& rng, int64_t n, const std::vector<double>& sigma) {
  std::vector<double> q(static_cast<size_t>(n * n)), tau(static_cast<size_t>(n));
  for (auto& v : q) v = rng.normal();
  REQUIRE(LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, int(n), int(n), q.data(), int(n), tau.data()) == 0);
  REQUIRE(LAPACKE_dorgqr(LAPACK_ROW_MAJOR, int(n), int(n), int(n), q.data(), int(n), tau.data()) == 0);
  std::vector<T> A(size_t(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double v = 0;  // sum_p sigma_p (q_i,2p q_j,2p+1 - q_i,2p+1 q_j,2p)
      for (size_t p = 0; p < sigma.size(); ++p)
        v += sigma[p] * (q[size_t(i * n) + 2 * p] * q[size_t(j * n) + 2 * p + 1] -
                         q[size_t(i * n) + 2 * p + 1] * q[size_t(j * n) + 2 * p]);
      A[size_t(i * n + j)] = static_cast<T>(v);
    }
  for (int64_t i = 0; i < n; ++i)  // skew bit for bit, as hat(u) is
    for (int64_t j = 0; j < i; ++j) A[size_t(j * n + i)] = -A[size_t(i * n + j)];
  for (int64_t i = 0; i < n; ++i) A[size_t(i * n + i)] = 0;
  return A;
}

}  // namespace

TEST_CASE_TEMPLATE("a skew exponent's plan: never below its exact 2-norm's, equal to it for one plane or equal rates",
                   T, double, float) {
  // The skew route's second bound (Samuelson's inequality on the paired spectrum of -A^2,
  // groups/expm.cpp) is exact when one rotation plane dominates and when every plane
  // turns at the same rate; sqrt(||A^2||_1) alone overestimates the first case by a
  // factor of about 1.3-3, so the squaring counts below fail without it.
  Rng rng(43);
  int checked = 0;
  for (int64_t n : {3, 4, 9, 16, 17}) {
    const int64_t k = n / 2;
    std::vector<T> scratch(static_cast<size_t>(expm_forward_scratch(n)));
    // Just below and above theta_8, theta_15+, theta_18 and theta_15+ 2^s for s = 1..3.
    const std::vector<double> theta = plan_thetas<T>();
    for (double edge : {theta[3], theta[4], theta[5], 2 * theta[4], 4 * theta[4], 8 * theta[4]})
      for (double side : {0.999, 1.001}) {
        for (bool one_plane : {true, false}) {
          std::vector<double> sigma(size_t(k), one_plane ? 0.0 : 1.0);
          sigma[0] = 1.0;
          std::vector<T> A = skew_with_rates<T>(rng, n, sigma);
          const double scale = side * edge / skew_norm2(n, A);
          for (auto& v : A) v = static_cast<T>(v * scale);
          const double norm2 = skew_norm2(n, A);
          const ExpmPlan plan = expm_plan<T>(n, A.data(), scratch.data(), ExponentKind::Skew);
          const std::string rates = one_plane ? "one plane" : "equal rates";
          INFO("n " << n << ", " << rates << ", ||A||_2 = " << norm2 << " (" << side << " x " << edge << ")");
          CHECK(plan.products() == exact_plan_products<T>(norm2));
          const double err = rel_err(expm_of<T>(1, n, A), reference_expm(n, A.data()));
          // For these normal A the error grows with ||A||_2 (s squarings of a rotation):
          // at most 16 u (1 + ||A||_2) here, and 20 for the 1-norm route on the same
          // matrices made non-skew by a last bit.
          CHECK(err <= 24 * eps<T>() * (1 + norm2));
          ++checked;
        }
      }
    // Random rates, spread over two decades: never fewer products than the exact norm
    // allows, never more than the 1-norm route (the same matrix made non-skew).
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> sigma(static_cast<size_t>(k));
      for (auto& s : sigma) s = std::exp(rng.normal() * 1.5);
      std::vector<T> A = skew_with_rates<T>(rng, n, sigma);
      const double scale = std::exp(rng.normal() * 1.5) / skew_norm2(n, A);
      for (auto& v : A) v = static_cast<T>(v * scale);
      const ExpmPlan plan = expm_plan<T>(n, A.data(), scratch.data(), ExponentKind::Skew);
      std::vector<T> general = A;
      general[1] = std::nextafter(general[1], T(1e9));
      INFO("n " << n << ", trial " << trial << ", ||A||_2 = " << skew_norm2(n, A));
      CHECK(plan.products() >= exact_plan_products<T>(skew_norm2(n, A)));
      CHECK(plan.products() <= expm_plan<T>(n, general.data(), scratch.data()).products());
      ++checked;
    }
  }
  CHECK(checked == 5 * (6 * 2 * 2 + 20));
}
