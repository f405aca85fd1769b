// `liegrad groupcheck`: measures the laws every Lie group of liegrad must satisfy, in
// double precision, for every group kind at a few sizes, and prints one line per law
// with the worst value at three kinds of points (manif's triple, Sola et al. 2018):
//     identity   X = I,                      u = 0
//     near I     X = exp(hat(u)),            ||u|| = 1e-3
//     random     X Haar-random (Mezzadri 2007), u ~ N(0, 1) in every coordinate
// (for groups with an O(d) factor, whose det -1 component has no real logarithm, the
// random points of the log law are exp(hat(u)) with u ~ N(0, 1) instead).
//
// Tangent vectors at X are X A with A in g, so the linear laws are checked on the
// tangent space at each point: the tangent projection P_X(M) = X Pi(X* M) (Absil,
// Mahony & Sepulchre 2008, §3.6) must be idempotent and self-adjoint, and the chart
// u -> X hat(u) must be an isometry with inverse vee(X* .). At X = I they are the plain
// laws of Pi, hat and vee (groups/group.hpp). The derivative of exp is checked three
// ways at A = hat(u): check_vjp of u -> X exp(hat(u)) (autograd/gradcheck.hpp), the fast
// pullback against the block-triangular reference (Mathias 1996), and the adjoint
// identity <G, L(A, E)> = <L(A^T, G), E> (groups/expm.hpp).
//
// Norms are the spec's: ||M|| = sqrt(Re tr(M* M)) = sqrt(s tr(M^T M)) on stored matrices,
// s = real_scale() (1 real, 1/2 complex), the Euclidean norm on coordinates.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "autograd/gradcheck.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"
#include "groups/group.hpp"
#include "groups/group_ops.hpp"

namespace liegrad::app {

namespace {

using A = Array<double>;
using groups::Group;

constexpr int64_t kSamples = 4;  // matrices per point kind
constexpr double kNear = 1e-3;   // ||u|| near the identity

const std::vector<std::string> kDefaultGroups = {"SO(2)", "SO(3)", "SO(8)", "O(3)", "U(2)", "U(4)",
                                                 "SU(2)", "SU(3)", "T(4)", "SO(3)xSO(2)", "SO(3)xU(2)"};

// One kind of point (identity, near I, random): N group elements X (N,n,n) and N
// coordinate vectors U (N,m).
struct Points {
  A X, U;
  A X_log;  // the points of the log law (X, or identity-component points for O factors)
};

// ---- small array helpers (batches of N matrices or coordinate rows) ----

// Worst spec norm sqrt(s sum M_ij^2) over the matrices (or rows, with s = 1) of M.
double worst_norm(const A& M, int64_t rows, double s) {
  const int64_t per = M.size() / rows;
  double worst = 0;
  for (int64_t b = 0; b < rows; ++b) {
    double ss = 0;
    for (int64_t i = 0; i < per; ++i) ss += M[b * per + i] * M[b * per + i];
    worst = std::max(worst, std::sqrt(s * ss));
  }
  return worst;
}

A minus(A a, const A& b) {
  for (int64_t i = 0; i < a.size(); ++i) a[i] -= b[i];
  return a;
}

A eye_batch(int64_t N, int64_t n) {
  A I(Shape{N, n, n});
  for (int64_t b = 0; b < N; ++b)
    for (int64_t i = 0; i < n; ++i) I.at(b, i, i) = 1;
  return I;
}

double dot(const A& a, const A& b) {
  double s = 0;
  for (int64_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// a / b, with 0 / 0 = 0 (groups with m = 0 have nothing to measure).
double ratio(double a, double b) { return a == 0 ? 0.0 : a / b; }

// N coordinate vectors of norm `norm` in random directions.
A directions(Rng& rng, int64_t N, int64_t m, double norm) {
  A u = rng.normal_array<double>(Shape{N, m});
  for (int64_t b = 0; b < N; ++b) {
    double ss = 0;
    for (int64_t k = 0; k < m; ++k) ss += u.at(b, k) * u.at(b, k);
    for (int64_t k = 0; k < m; ++k) u.at(b, k) *= ss > 0 ? norm / std::sqrt(ss) : 0.0;
  }
  return u;
}

// True when some factor of the group is O(d) (not SO(d)).
bool has_o_factor(const std::string& name) {
  for (size_t i = name.find("O("); i != std::string::npos; i = name.find("O(", i + 1))
    if (i == 0 || name[i - 1] != 'S') return true;
  return false;
}

// A seed per group name (FNV-1a), so a group's numbers do not depend on which other
// groups are checked.
uint64_t name_seed(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::vector<Points> make_points(const Group& g, Rng& rng) {
  const int64_t n = g.n(), m = g.dim(), N = kSamples;
  std::vector<Points> pts;
  pts.push_back({eye_batch(N, n), A(Shape{N, m}), eye_batch(N, n)});
  const A u_near = directions(rng, N, m, kNear);
  const A X_near = g.exp(g.hat(u_near));
  pts.push_back({X_near, u_near, X_near});
  const A X_rand = g.sample<double>(rng, N);
  const A u_rand = rng.normal_array<double>(Shape{N, m});
  const A X_log = has_o_factor(g.name()) ? g.exp(g.hat(rng.normal_array<double>(Shape{N, m}))) : X_rand;
  pts.push_back({X_rand, u_rand, X_log});
  return pts;
}

// ---- the laws ----

struct Law {
  const char* name;  // what must hold
  const char* what;  // the printed measure
  double tol;
  std::function<double(const Group&, const Points&, Rng&)> measure;
};

// P_X(M) = X Pi(X* M), the orthogonal projection onto the tangent space X g at X.
A tangent_project(const Group& g, const A& X, const A& M) {
  return g.compose(X, g.project(g.compose(g.inverse(X), M)));
}

// R(M): each matrix of the batch projected onto the group's storage pattern
// (Group::restore_structure_kernel, which groups::renormalize applies).
A restore_structure(const Group& g, A M) {
  const int64_t n = g.n();
  for (int64_t b = 0; b < M.size() / (n * n); ++b) g.restore_structure_kernel(M.data() + b * n * n, n);
  return M;
}

std::vector<Law> laws() {
  std::vector<Law> L;
  L.push_back({"exp(log X) = X", "||exp(log X) - X||", 1e-12, [](const Group& g, const Points& p, Rng&) {
                 return worst_norm(minus(g.exp(g.log(p.X_log)), p.X_log), kSamples, g.real_scale());
               }});
  L.push_back({"X X^-1 = I", "||X X^-1 - I||", 1e-12, [](const Group& g, const Points& p, Rng&) {
                 return worst_norm(minus(g.compose(p.X, g.inverse(p.X)), eye_batch(kSamples, g.n())), kSamples,
                                   g.real_scale());
               }});
  L.push_back({"exp(A) lies in G", "defect(exp(hat u))", 1e-12, [](const Group& g, const Points& p, Rng&) {
                 return g.defect(g.exp(g.hat(p.U)));
               }});
  L.push_back({"structure projection keeps G", "||R(X) - X||", 1e-15, [](const Group& g, const Points& p, Rng&) {
                 return worst_norm(minus(restore_structure(g, p.X), p.X), kSamples, g.real_scale());
               }});
  // R is the orthogonal projection onto a linear subspace: idempotent, and M - R(M) is
  // orthogonal to everything in its range.
  L.push_back({"structure projection orthogonal", "||R(R M) - R M|| / ||M|| + |<M - R M, R N>| / ||M|| ||N||", 1e-13,
               [](const Group& g, const Points& p, Rng& rng) {
                 const A M = rng.normal_array<double>(p.X.shape()), N = rng.normal_array<double>(p.X.shape());
                 const A RM = restore_structure(g, M);
                 const double s = g.real_scale();
                 return ratio(worst_norm(minus(restore_structure(g, RM), RM), kSamples, s),
                              std::sqrt(s * dot(M, M) / kSamples)) +
                        ratio(std::abs(s * dot(minus(M, RM), restore_structure(g, N))), s * std::sqrt(dot(M, M) * dot(N, N)));
               }});
  // The linear laws are relative to the size of their inputs (their rounding grows with n).
  L.push_back({"tangent projection idempotent", "||P(P M) - P M|| / ||M||", 1e-13,
               [](const Group& g, const Points& p, Rng& rng) {
                 const A M = rng.normal_array<double>(p.X.shape());
                 const A PM = tangent_project(g, p.X, M);
                 const double s = g.real_scale();
                 return ratio(worst_norm(minus(tangent_project(g, p.X, PM), PM), kSamples, s),
                              std::sqrt(s * dot(M, M) / kSamples));
               }});
  L.push_back({"tangent projection self-adjoint", "|<P M, N> - <M, P N>| / ||M|| ||N||", 1e-13,
               [](const Group& g, const Points& p, Rng& rng) {
                 const A M = rng.normal_array<double>(p.X.shape()), N = rng.normal_array<double>(p.X.shape());
                 const double s = g.real_scale();
                 return ratio(std::abs(s * dot(tangent_project(g, p.X, M), N) - s * dot(M, tangent_project(g, p.X, N))),
                              s * std::sqrt(dot(M, M) * dot(N, N)));
               }});
  L.push_back({"vee inverts hat (at X)", "||vee(X* X hat u) - u|| / ||u||", 1e-13,
               [](const Group& g, const Points& p, Rng& rng) {
                 const A u = rng.normal_array<double>(p.U.shape());
                 const A V = g.compose(p.X, g.hat(u));  // a tangent vector at X
                 return ratio(worst_norm(minus(g.vee(g.compose(g.inverse(p.X), V)), u), kSamples, 1.0),
                              std::sqrt(dot(u, u) / kSamples));
               }});
  L.push_back({"hat is an isometry (at X)", "| ||X hat u|| - ||u|| | / ||u||", 1e-13,
               [](const Group& g, const Points& p, Rng& rng) {
                 const A u = rng.normal_array<double>(p.U.shape());
                 const A V = g.compose(p.X, g.hat(u));
                 const int64_t nn = g.n() * g.n(), m = g.dim();
                 double worst = 0;
                 for (int64_t b = 0; b < kSamples; ++b) {
                   double sv = 0, su = 0;
                   for (int64_t i = 0; i < nn; ++i) sv += V[b * nn + i] * V[b * nn + i];
                   for (int64_t k = 0; k < m; ++k) su += u.at(b, k) * u.at(b, k);
                   worst = std::max(worst, ratio(std::abs(std::sqrt(g.real_scale() * sv) - std::sqrt(su)), std::sqrt(su)));
                 }
                 return worst;
               }});
  L.push_back({"d exp: tape vs finite differences", "check_vjp rel. error, X exp(hat u)", 1e-6,
               [](const Group& g, const Points& p, Rng& rng) {
                 const A X = p.X;
                 const ag::VjpFn f = [&g, X](const std::vector<ag::Vard>& x) {
                   return groups::compose(g, ag::Vard::constant(X), groups::expm(groups::hat(g, x[0])));
                 };
                 return ag::check_vjp("X exp(hat u)", f, {p.U}, rng).max_rel_error;
               }});
  L.push_back({"d exp: fast pullback = block", "max|fast - block| / max|block|", 1e-12,
               [](const Group& g, const Points& p, Rng& rng) {
                 const int64_t n = g.n();
                 const A Am = g.hat(p.U), G = rng.normal_array<double>(Am.shape());
                 A fast(Am.shape()), block(Am.shape());
                 groups::expm_pullback<double>(kSamples, n, Am.data(), G.data(), fast.data());
                 groups::expm_pullback_block<double>(kSamples, n, Am.data(), G.data(), block.data());
                 double diff = 0, scale = 0;
                 for (int64_t i = 0; i < fast.size(); ++i) {
                   diff = std::max(diff, std::abs(fast[i] - block[i]));
                   scale = std::max(scale, std::abs(block[i]));
                 }
                 return diff / std::max(scale, 1e-300);
               }});
  L.push_back({"d exp: adjoint identity", "|<G,L(A,E)> - <L(A^T,G),E>| / |G||L|", 1e-13,
               [](const Group& g, const Points& p, Rng& rng) {
                 // L(A, E) is the block route at A^T (it returns L(B^T, E) for input B);
                 // L(A^T, G) is the fast pullback at A. The gap is scaled by the
                 // Cauchy-Schwarz bound ||G||_F ||L(A, E)||_F of either inner product.
                 const int64_t n = g.n();
                 const A Am = g.hat(p.U), At = g.inverse(Am);  // the transpose of each matrix
                 const A G = rng.normal_array<double>(Am.shape()), E = rng.normal_array<double>(Am.shape());
                 A LE(Am.shape()), LG(Am.shape());
                 groups::expm_pullback_block<double>(kSamples, n, At.data(), E.data(), LE.data());
                 groups::expm_pullback<double>(kSamples, n, Am.data(), G.data(), LG.data());
                 return std::abs(dot(G, LE) - dot(LG, E)) / std::sqrt(dot(G, G) * dot(LE, LE));
               }});
  return L;
}

void print_help() {
  std::printf(
      "usage: liegrad groupcheck [--group SPEC]... [--seed N]\n"
      "Measures the Lie-group laws of liegrad's groups in double precision and prints one line\n"
      "per law: the worst value over %lld samples at the identity (X = I, u = 0), near it\n"
      "(X = exp(hat u), ||u|| = %g) and at random points (Haar X, u ~ N(0, I)), against a\n"
      "tolerance. Exits 1 if any law fails.\n\n"
      "  --group SPEC  check this group instead of the default list (repeatable), e.g.\n"
      "                --group \"SU(5)\" --group \"SO(4)xT(2)\"\n"
      "  --seed N      random seed (default 1234)\n\n"
      "Laws (norms are ||M|| = sqrt(Re tr(M* M)); tangent vectors at X are X A, A in g):\n"
      "  exp(log X) = X                     log is the principal logarithm\n"
      "  X X^-1 = I                         the inverse is the (conjugate) transpose\n"
      "  exp(A) lies in G                   defect = ||H* H - I|| + structure (+ |det H - 1|)\n"
      "  tangent projection idempotent      P(M) = X Pi(X* M) on Gaussian M\n"
      "  tangent projection self-adjoint    <P M, N> = <M, P N>\n"
      "  vee inverts hat (at X)             vee(X* (X hat u)) = u\n"
      "  hat is an isometry (at X)          ||X hat u|| = ||u||\n"
      "  d exp: tape vs finite differences  check_vjp of u -> X exp(hat u) (the expm tape op)\n"
      "  d exp: fast pullback = block       expm_pullback against exp([[A^T, G], [0, A^T]])\n"
      "  d exp: adjoint identity            <G, L(A, E)> = <L(A^T, G), E>\n",
      static_cast<long long>(kSamples), kNear);
}

}  // namespace

int cmd_groupcheck(const std::vector<std::string>& argv) {
  Args args(argv, {"help"}, {"seed"}, {"group"});
  if (args.flag("help")) {
    print_help();
    return 0;
  }
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "' (see --help)");
  const uint64_t seed = static_cast<uint64_t>(args.get_int("seed", 1234));
  const std::vector<std::string> specs = args.has("group") ? args.all("group") : kDefaultGroups;
  std::vector<std::unique_ptr<Group>> gs;  // parsed up front, so a bad spelling fails before any output
  for (const std::string& spec : specs) gs.push_back(groups::make_group(spec));
  const std::vector<Law> L = laws();

  std::printf("Lie-group laws in double precision: worst value over %lld samples per point (seed %llu)\n\n",
              static_cast<long long>(kSamples), static_cast<unsigned long long>(seed));
  std::printf("%-12s %3s %3s  %-34s %-37s %8s %8s %8s %6s  %s\n", "group", "n", "m", "law", "measure", "identity",
              "near I", "random", "tol", "result");
  int failed = 0, ran = 0;
  for (const std::unique_ptr<Group>& g : gs) {
    Rng rng(name_seed(seed, g->name()));
    const std::vector<Points> pts = make_points(*g, rng);
    for (const Law& law : L) {
      double v[3];
      bool ok = true;
      for (size_t k = 0; k < 3; ++k) {
        v[k] = law.measure(*g, pts[k], rng);
        ok = ok && v[k] <= law.tol;  // NaN fails
      }
      ++ran;
      if (!ok) ++failed;
      std::printf("%-12s %3lld %3lld  %-34s %-37s %8.1e %8.1e %8.1e %6.0e  %s\n", g->name().c_str(),
                  static_cast<long long>(g->n()), static_cast<long long>(g->dim()), law.name, law.what, v[0], v[1],
                  v[2], law.tol, ok ? "pass" : "FAIL");
    }
    if (has_o_factor(g->name()))
      std::printf("(%s: the random points of exp(log X) = X are exp(hat u), u ~ N(0, I): elements with det -1 have "
                  "no real logarithm)\n",
                  g->name().c_str());
    std::printf("\n");
  }
  std::printf("%zu groups, %d laws checked at 3 kinds of points: %d passed, %d failed\n", specs.size(), ran,
              ran - failed, failed);
  return failed ? 1 : 0;
}

}  // namespace liegrad::app
