// The Lie-group law registry (see group_laws.hpp): the laws, the points they are
// measured at, and check_group_laws.
#include "groups/group_laws.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "autograd/gradcheck.hpp"
#include "core/linalg.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"
#include "groups/group_ops.hpp"

namespace liegrad::groups {

namespace {

using A = Array<double>;

constexpr int64_t N = kLawSamples;

// One kind of point (identity, near I, random): N group elements X (N,n,n), N
// coordinate vectors U (N,m), and the points of the log laws.
struct Points {
  A X, U;
  A X_log;  // X, or identity-component points for groups with an O factor
};

// ---- small array helpers (batches of N matrices or coordinate rows) ----

// Worst spec norm sqrt(s sum M_ij^2) over the N matrices (or rows, with s = 1) of M.
double worst_norm(const A& M, double s) {
  const int64_t per = M.size() / N;
  double worst = 0;
  for (int64_t b = 0; b < N; ++b) {
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

A eye_batch(int64_t n) {
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
A directions(Rng& rng, int64_t m, double norm) {
  A u = rng.normal_array<double>(Shape{N, m});
  for (int64_t b = 0; b < N; ++b) {
    double ss = 0;
    for (int64_t k = 0; k < m; ++k) ss += u.at(b, k) * u.at(b, k);
    for (int64_t k = 0; k < m; ++k) u.at(b, k) *= ss > 0 ? norm / std::sqrt(ss) : 0.0;
  }
  return u;
}

// u with every row of norm above `cap` scaled down to norm `cap`.
A capped(A u, double cap) {
  const int64_t m = u.shape().cols();
  for (int64_t b = 0; b < N; ++b) {
    double ss = 0;
    for (int64_t k = 0; k < m; ++k) ss += u.at(b, k) * u.at(b, k);
    if (ss > cap * cap)
      for (int64_t k = 0; k < m; ++k) u.at(b, k) *= cap / std::sqrt(ss);
  }
  return u;
}

// A seed per group name (FNV-1a).
uint64_t name_seed(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::vector<Points> make_points(const Group& g, Rng& rng) {
  const int64_t n = g.n(), m = g.dim();
  std::vector<Points> pts;
  pts.push_back({eye_batch(n), A(Shape{N, m}), eye_batch(n)});
  const A u_near = directions(rng, m, kLawNear);
  const A X_near = g.exp(g.hat(u_near));
  pts.push_back({X_near, u_near, X_near});
  const A X_rand = g.sample<double>(rng, N);
  const A u_rand = rng.normal_array<double>(Shape{N, m});
  const A X_log = has_o_factor(g.name()) ? g.exp(g.hat(rng.normal_array<double>(Shape{N, m}))) : X_rand;
  pts.push_back({X_rand, u_rand, X_log});
  return pts;
}

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

// ---- the laws ----

using Measure = std::function<double(const Group&, const Points&, Rng&)>;

struct Law {
  LawInfo info;
  Measure measure;
};

std::vector<Law> make_laws() {
  std::vector<Law> L;
  auto add = [&L](const char* name, const char* measure, const char* formula, double tol, Measure f) {
    L.push_back({LawInfo{name, measure, formula, tol}, std::move(f)});
  };
  add("exp(log X) = X", "||exp(log X) - X||", "log is the principal logarithm", 1e-12,
      [](const Group& g, const Points& p, Rng&) {
        return worst_norm(minus(g.exp(g.log(p.X_log)), p.X_log), g.real_scale());
      });
  add("log(exp A) = A, ||A|| <= 1", "||log(exp A) - A||, A = hat(u), ||u|| <= 1",
      "log inverts exp inside the injectivity radius (u capped at norm 1)", 1e-13,
      [](const Group& g, const Points& p, Rng&) {
        const A Am = g.hat(capped(p.U, 1.0));
        return worst_norm(minus(g.log(g.exp(Am)), Am), g.real_scale());
      });
  add("log X lies in g", "||Pi(log X) - log X||", "the logarithm lands in the algebra", 1e-13,
      [](const Group& g, const Points& p, Rng&) {
        const A Lx = g.log(p.X_log);
        return worst_norm(minus(g.project(Lx), Lx), g.real_scale());
      });
  add("X X^-1 = X^-1 X = I", "max(||X X^-1 - I||, ||X^-1 X - I||)", "the inverse is the (conjugate) transpose", 1e-12,
      [](const Group& g, const Points& p, Rng&) {
        const A I = eye_batch(g.n()), Xi = g.inverse(p.X);
        return std::max(worst_norm(minus(g.compose(p.X, Xi), I), g.real_scale()),
                        worst_norm(minus(g.compose(Xi, p.X), I), g.real_scale()));
      });
  add("X Y lies in G", "defect(X Y), Y Haar", "compose stays in the group", 1e-12,
      [](const Group& g, const Points& p, Rng& rng) { return g.defect(g.compose(p.X, g.sample<double>(rng, N))); });
  add("exp(A) lies in G", "defect(exp(hat u))", "defect = ||H* H - I|| + structure (+ |det H - 1|)", 1e-12,
      [](const Group& g, const Points& p, Rng&) { return g.defect(g.exp(g.hat(p.U))); });
  add("exp = the generic kernel", "||exp(hat u) - expm_forward(hat u)||",
      "the group's exp (closed forms, blockwise) agrees with groups/expm", 1e-12,
      [](const Group& g, const Points& p, Rng&) {
        const A Am = g.hat(p.U);
        A Q(Am.shape());
        expm_forward<double>(N, g.n(), Am.data(), Q.data());
        return worst_norm(minus(g.exp(Am), Q), g.real_scale());
      });
  add("structure projection keeps G", "||R(X) - X||", "R restores the storage pattern (renormalize)", 1e-15,
      [](const Group& g, const Points& p, Rng&) {
        return worst_norm(minus(restore_structure(g, p.X), p.X), g.real_scale());
      });
  // R is the orthogonal projection onto a linear subspace: idempotent, and M - R(M) is
  // orthogonal to everything in its range.
  add("structure projection orthogonal", "||R(R M) - R M|| / ||M|| + |<M - R M, R N>| / ||M|| ||N||",
      "R is idempotent and M - R M is orthogonal to its range", 1e-13, [](const Group& g, const Points& p, Rng& rng) {
        const A M = rng.normal_array<double>(p.X.shape()), Nm = rng.normal_array<double>(p.X.shape());
        const A RM = restore_structure(g, M);
        const double s = g.real_scale();
        return ratio(worst_norm(minus(restore_structure(g, RM), RM), s), std::sqrt(s * dot(M, M) / N)) +
               ratio(std::abs(s * dot(minus(M, RM), restore_structure(g, Nm))), s * std::sqrt(dot(M, M) * dot(Nm, Nm)));
      });
  // The linear laws are relative to the size of their inputs (their rounding grows with n).
  add("tangent projection idempotent", "||P(P M) - P M|| / ||M||", "P(M) = X Pi(X* M) on Gaussian M", 1e-13,
      [](const Group& g, const Points& p, Rng& rng) {
        const A M = rng.normal_array<double>(p.X.shape());
        const A PM = tangent_project(g, p.X, M);
        const double s = g.real_scale();
        return ratio(worst_norm(minus(tangent_project(g, p.X, PM), PM), s), std::sqrt(s * dot(M, M) / N));
      });
  add("tangent projection self-adjoint", "|<P M, N> - <M, P N>| / ||M|| ||N||", "<P M, N> = <M, P N>", 1e-13,
      [](const Group& g, const Points& p, Rng& rng) {
        const A M = rng.normal_array<double>(p.X.shape()), Nm = rng.normal_array<double>(p.X.shape());
        const double s = g.real_scale();
        return ratio(std::abs(s * dot(tangent_project(g, p.X, M), Nm) - s * dot(M, tangent_project(g, p.X, Nm))),
                     s * std::sqrt(dot(M, M) * dot(Nm, Nm)));
      });
  add("hat lands in g (at X)", "||P(X hat u) - X hat u|| / ||u||", "X hat(u) is a tangent vector at X", 1e-13,
      [](const Group& g, const Points& p, Rng& rng) {
        const A u = rng.normal_array<double>(p.U.shape());
        const A V = g.compose(p.X, g.hat(u));
        return ratio(worst_norm(minus(tangent_project(g, p.X, V), V), g.real_scale()), std::sqrt(dot(u, u) / N));
      });
  add("hat lands in the skew matrices", "||hat u + (hat u)^T|| / ||u||",
      "g lies in u(d), whose real forms are skew: kernels may use hat(u)^T = -hat(u)", 1e-13,
      [](const Group& g, const Points& p, Rng& rng) {
        const A u = rng.normal_array<double>(p.U.shape());
        const A Hm = g.hat(u);  // (N,n,n)
        const int64_t n = g.n();
        A sym(Hm.shape());
        for (int64_t b = 0; b < N; ++b)
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j)
              sym.data()[(b * n + i) * n + j] = Hm.data()[(b * n + i) * n + j] + Hm.data()[(b * n + j) * n + i];
        return ratio(worst_norm(sym, g.real_scale()), std::sqrt(dot(u, u) / N));
      });
  add("hat basis orthonormal (at X)", "max |<X hat e_k, X hat e_l> - delta_kl|",
      "the tangent basis X hat(e_k) is orthonormal under Re tr(A* B)", 1e-13,
      [](const Group& g, const Points& p, Rng&) {
        const int64_t n = g.n(), m = g.dim(), nn = n * n;
        if (m == 0) return 0.0;
        const A E = g.hat(A::eye(m));  // (m,n,n)
        double worst = 0;
        for (int64_t b = 0; b < N; ++b) {
          A Xb(Shape{n, n});
          std::copy(p.X.data() + b * nn, p.X.data() + (b + 1) * nn, Xb.data());
          const A V = g.compose(Xb, E);  // X hat(e_k), (m,n,n)
          A gram(Shape{m, m});
          gemm<double>(false, true, m, m, nn, g.real_scale(), V.data(), nn, V.data(), nn, 0.0, gram.data(), m);
          for (int64_t k = 0; k < m; ++k)
            for (int64_t l = 0; l < m; ++l) worst = std::max(worst, std::abs(gram.at(k, l) - (k == l ? 1.0 : 0.0)));
        }
        return worst;
      });
  add("vee is the adjoint of hat (at X)", "|s <X hat u, M> - <u, vee(X* M)>| / ||u|| ||M||",
      "vee(X* .) = s (X hat)^T: the chart's adjoint under Re tr", 1e-13, [](const Group& g, const Points& p, Rng& rng) {
        const A u = rng.normal_array<double>(p.U.shape()), M = rng.normal_array<double>(p.X.shape());
        const double s = g.real_scale();
        const double lhs = s * dot(g.compose(p.X, g.hat(u)), M), rhs = dot(u, g.vee(g.compose(g.inverse(p.X), M)));
        return ratio(std::abs(lhs - rhs), std::sqrt(dot(u, u) * s * dot(M, M)));
      });
  add("vee inverts hat (at X)", "||vee(X* X hat u) - u|| / ||u||", "vee(X* (X hat u)) = u", 1e-13,
      [](const Group& g, const Points& p, Rng& rng) {
        const A u = rng.normal_array<double>(p.U.shape());
        const A V = g.compose(p.X, g.hat(u));  // a tangent vector at X
        return ratio(worst_norm(minus(g.vee(g.compose(g.inverse(p.X), V)), u), 1.0), std::sqrt(dot(u, u) / N));
      });
  // The fused kernels' backward (kernels/osm_scan.cpp, relative_update.cpp) takes Pi(M)
  // for hat(vee(M)) when no mixing matrix stands between them.
  add("hat vee is Pi", "||hat(vee M) - Pi(M)|| / ||M||", "hat vee = s hat hat^T, the orthogonal projection onto g", 1e-13,
      [](const Group& g, const Points& p, Rng& rng) {
        const A M = rng.normal_array<double>(p.X.shape());
        return ratio(worst_norm(minus(g.hat(g.vee(M)), g.project(M)), g.real_scale()),
                     std::sqrt(g.real_scale() * dot(M, M) / N));
      });
  add("hat is an isometry (at X)", "| ||X hat u|| - ||u|| | / ||u||", "||X hat u|| = ||u||", 1e-13,
      [](const Group& g, const Points& p, Rng& rng) {
        const A u = rng.normal_array<double>(p.U.shape());
        const A V = g.compose(p.X, g.hat(u));
        const int64_t nn = g.n() * g.n(), m = g.dim();
        double worst = 0;
        for (int64_t b = 0; b < N; ++b) {
          double sv = 0, su = 0;
          for (int64_t i = 0; i < nn; ++i) sv += V[b * nn + i] * V[b * nn + i];
          for (int64_t k = 0; k < m; ++k) su += u.at(b, k) * u.at(b, k);
          worst = std::max(worst, ratio(std::abs(std::sqrt(g.real_scale() * sv) - std::sqrt(su)), std::sqrt(su)));
        }
        return worst;
      });
  add("d exp: tape vs finite differences", "check_vjp rel. error, X exp(hat u)",
      "check_vjp of u -> X exp(hat u) (the expm tape op)", 1e-6, [](const Group& g, const Points& p, Rng& rng) {
        const A X = p.X;
        const ag::VjpFn f = [&g, X](const std::vector<ag::Vard>& x) {
          return compose(g, ag::Vard::constant(X), expm(hat(g, x[0])));
        };
        return ag::check_vjp("X exp(hat u)", f, {p.U}, rng).max_rel_error;
      });
  add("d exp: fast pullback = block", "max|fast - block| / max|block|",
      "expm_pullback against exp([[A^T, G], [0, A^T]])", 1e-12, [](const Group& g, const Points& p, Rng& rng) {
        const int64_t n = g.n();
        const A Am = g.hat(p.U), G = rng.normal_array<double>(Am.shape());
        A fast(Am.shape()), block(Am.shape());
        expm_pullback<double>(N, n, Am.data(), G.data(), fast.data());
        expm_pullback_block<double>(N, n, Am.data(), G.data(), block.data());
        double diff = 0, scale = 0;
        for (int64_t i = 0; i < fast.size(); ++i) {
          diff = std::max(diff, std::abs(fast[i] - block[i]));
          scale = std::max(scale, std::abs(block[i]));
        }
        return diff / std::max(scale, 1e-300);
      });
  add("d exp: adjoint identity", "|<G,L(A,E)> - <L(A^T,G),E>| / |G||L|", "<G, L(A, E)> = <L(A^T, G), E>", 1e-13,
      [](const Group& g, const Points& p, Rng& rng) {
        // L(A, E) is the block route at A^T (it returns L(B^T, E) for input B);
        // L(A^T, G) is the fast pullback at A. The gap is scaled by the
        // Cauchy-Schwarz bound ||G||_F ||L(A, E)||_F of either inner product.
        const int64_t n = g.n();
        const A Am = g.hat(p.U), At = g.inverse(Am);  // the transpose of each matrix
        const A G = rng.normal_array<double>(Am.shape()), E = rng.normal_array<double>(Am.shape());
        A LE(Am.shape()), LG(Am.shape());
        expm_pullback_block<double>(N, n, At.data(), E.data(), LE.data());
        expm_pullback<double>(N, n, Am.data(), G.data(), LG.data());
        return std::abs(dot(G, LE) - dot(LG, E)) / std::sqrt(dot(G, G) * dot(LE, LE));
      });
  return L;
}

const std::vector<Law>& laws() {
  static const std::vector<Law> L = make_laws();
  return L;
}

}  // namespace

const std::vector<LawInfo>& group_laws() {
  static const std::vector<LawInfo> infos = [] {
    std::vector<LawInfo> v;
    for (const Law& l : laws()) v.push_back(l.info);
    return v;
  }();
  return infos;
}

std::vector<LawResult> check_group_laws(const Group& g, uint64_t seed) {
  Rng rng(name_seed(seed, g.name()));
  const std::vector<Points> pts = make_points(g, rng);
  const std::vector<LawInfo>& infos = group_laws();
  std::vector<LawResult> out;
  for (size_t i = 0; i < laws().size(); ++i) {
    LawResult r;
    r.law = &infos[i];
    r.passed = true;
    for (size_t k = 0; k < 3; ++k) {
      r.value[k] = laws()[i].measure(g, pts[k], rng);
      r.passed = r.passed && r.value[k] <= infos[i].tol;  // NaN fails
    }
    out.push_back(r);
  }
  return out;
}

bool has_o_factor(const std::string& name) {
  for (size_t i = name.find("O("); i != std::string::npos; i = name.find("O(", i + 1))
    if (i == 0 || name[i - 1] != 'S') return true;
  return false;
}

}  // namespace liegrad::groups
