// Tests of groups/ beyond the law registry (which tests/test_group_laws.cpp runs for
// every group): sizes and names, the spec's projection formulas, exact values of exp
// and log, the SU log across the cut, broadcasting, the inner product identities, Haar
// samples (determinants and trace moments), the block structure of tori and products,
// trivial groups, float against double, the group-kinds table, make_group's spellings
// and errors, shape errors, the tape ops (check_vjp and exact adjoints) and the
// structure kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <string>
#include <vector>

#include "autograd/tape.hpp"
#include "core/lapack.hpp"
#include "core/linalg.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"
#include "groups/group.hpp"
#include "groups/group_kinds.hpp"
#include "groups/group_ops.hpp"
#include "groups/real_form.hpp"
#include "groups/rotation_log.hpp"
#include "tests/test_helpers.hpp"

using namespace liegrad;
using namespace liegrad::groups;

namespace {

using A = Array<double>;
using cplx = std::complex<double>;

double dot(const A& a, const A& b) {
  double s = 0;
  for (int64_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// N coordinate vectors with Euclidean norm `norm` each (random directions).
A coords(Rng& rng, const Group& g, int64_t N, double norm) {
  A u = rng.normal_array<double>(Shape{N, g.dim()});
  for (int64_t b = 0; b < N; ++b) {
    double s = 0;
    for (int64_t k = 0; k < g.dim(); ++k) s += u.at(b, k) * u.at(b, k);
    for (int64_t k = 0; k < g.dim(); ++k) u.at(b, k) *= s > 0 ? norm / std::sqrt(s) : 0.0;
  }
  return u;
}

// Complex-convention Frobenius norm of each matrix of a batch: sqrt(real_scale) * ||.||_F.
std::vector<double> complex_norms(const Group& g, const A& X) {
  const int64_t N = X.shape().batch(), nn = g.n() * g.n();
  std::vector<double> out;
  for (int64_t b = 0; b < N; ++b) {
    double s = 0;
    for (int64_t i = 0; i < nn; ++i) s += X[b * nn + i] * X[b * nn + i];
    out.push_back(std::sqrt(g.real_scale() * s));
  }
  return out;
}

// The complex d x d matrix of a stored element of a single (non-product) group.
std::vector<cplx> as_complex(const Group& g, const double* X) {
  const int64_t d = g.complex_dim();
  std::vector<cplx> Z(static_cast<size_t>(d * d));
  if (g.is_complex())
    real_form::to_complex(d, X, g.n(), Z.data());
  else
    for (int64_t i = 0; i < d * d; ++i) Z[static_cast<size_t>(i)] = X[i];
  return Z;
}

A eye_batch(int64_t N, int64_t n) {
  A I(Shape{N, n, n});
  for (int64_t b = 0; b < N; ++b)
    for (int64_t i = 0; i < n; ++i) I.at(b, i, i) = 1;
  return I;
}

}  // namespace

TEST_CASE("group sizes and names") {
  struct Row {
    const char* spec;
    int64_t n, m;
    bool complex;
  };
  for (const Row& r : {Row{"SO(16)", 16, 120, false}, Row{"O(8)", 8, 28, false}, Row{"U(8)", 16, 64, true},
                       Row{"SU(8)", 16, 63, true}, Row{"T(16)", 32, 16, true}, Row{"SO(8)xSO(8)", 16, 56, false},
                       Row{"SO(3)xU(2)", 10, 7, true}, Row{"SO(1)", 1, 0, false}, Row{"SU(1)", 2, 0, true},
                       Row{"O(1)", 1, 0, false}, Row{"U(1)", 2, 1, true}}) {
    INFO(r.spec);
    auto g = make_group(r.spec);
    CHECK(g->name() == r.spec);
    CHECK(g->n() == r.n);
    CHECK(g->dim() == r.m);
    CHECK(g->is_complex() == r.complex);
    CHECK(g->real_scale() == (r.complex ? 0.5 : 1.0));
  }
  CHECK(make_group("SO(3)xU(2)")->complex_dim() == 5);
}

TEST_CASE("hat and vee: shapes, batched and unbatched, and vee = vee o project") {
  // The laws (vee(hat u) = u, isometry, orthonormal basis, vee the adjoint of hat) are in
  // the registry (tests/test_group_laws.cpp).
  Rng rng(11);
  for (const std::string& spec : test::group_specs()) {
    INFO(spec);
    auto g = make_group(spec);
    const int64_t m = g->dim(), n = g->n();
    const A u = rng.normal_array<double>(Shape{5, m});
    CHECK(g->hat(u).shape() == Shape{5, n, n});
    CHECK(g->vee(rng.normal_array<double>(Shape{5, n, n})).shape() == Shape{5, m});
    // vee(X) = vee(project(X)) on arbitrary matrices.
    const A X = rng.normal_array<double>(Shape{5, n, n});
    CHECK(max_abs_diff(g->vee(X), g->vee(g->project(X))) < 1e-14);
    // Unbatched shapes.
    const A u1 = rng.normal_array<double>(Shape{m});
    CHECK(g->hat(u1).shape() == Shape{n, n});
    CHECK(max_abs_diff(g->vee(g->hat(u1)), u1) < 1e-14);
  }
}

TEST_CASE("project matches the spec's formulas") {
  // Idempotence and self-adjointness are laws of the registry (tests/test_group_laws.cpp).
  Rng rng(12);
  // Spec §1 formulas on complex matrices in real form: U: (Z - Z*)/2; SU: S - tr(S)/d I; T: i diag(Im Z).
  const int64_t d = 3;
  std::vector<cplx> Z(d * d);
  for (auto& z : Z) z = cplx(rng.normal(), rng.normal());
  A R(Shape{2 * d, 2 * d});
  real_form::from_complex(d, Z.data(), R.data(), 2 * d);
  for (const char* spec : {"U(3)", "SU(3)", "T(3)"}) {
    INFO(spec);
    auto g = make_group(spec);
    std::vector<cplx> S(d * d);
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) S[size_t(i * d + j)] = (Z[size_t(i * d + j)] - std::conj(Z[size_t(j * d + i)])) / 2.0;
    cplx tr = 0;
    for (int64_t i = 0; i < d; ++i) tr += S[size_t(i * d + i)];
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) {
        cplx& s = S[size_t(i * d + j)];
        if (std::string(spec) == "SU(3)" && i == j) s -= tr / double(d);
        if (std::string(spec) == "T(3)") s = i == j ? cplx(0, Z[size_t(i * d + i)].imag()) : 0.0;
      }
    A expected(Shape{2 * d, 2 * d});
    real_form::from_complex(d, S.data(), expected.data(), 2 * d);
    CHECK(max_abs_diff(g->project(R), expected) < 1e-14);
  }
}

TEST_CASE("exp(0) = I and log(I) = 0 exactly") {
  // exp(A) in G, exp(log X) = X, log(exp A) = A and exp against the generic kernel are
  // laws of the registry (tests/test_group_laws.cpp); here only the exact values.
  for (const std::string& spec : test::group_specs()) {
    INFO(spec);
    auto g = make_group(spec);
    const int64_t n = g->n();
    CHECK(max_abs_diff(g->exp(A(Shape{2, n, n})), eye_batch(2, n)) == 0.0);
    CHECK(max_abs_diff(g->log(g->identity<double>()), A(Shape{n, n})) < 1e-14);
  }
}

TEST_CASE("log: SU stays traceless across the cut, real groups reject the cut locus") {
  // diag(e^{2.5i}, e^{2.5i}, e^{-5i}) in SU(3): principal angles sum to 2 pi.
  auto su = make_group("SU(3)");
  std::vector<cplx> Z = {std::polar(1.0, 2.5), 0, 0, 0, std::polar(1.0, 2.5), 0, 0, 0, std::polar(1.0, -5.0)};
  A X(Shape{6, 6});
  real_form::from_complex(3, Z.data(), X.data(), 6);
  CHECK(su->defect(X) < 1e-14);
  const A L = su->log(X);
  CHECK(max_abs_diff(su->project(L), L) < 1e-14);
  CHECK(max_abs_diff(su->exp(L), X) < 1e-13);
  // O(3) with det -1 and a rotation by pi have no real logarithm.
  auto o3 = make_group("O(3)");
  A F = A::eye(3);
  F.at(0, 0) = -1;
  CHECK_THROWS_AS(o3->log(F), ValueError);
  A half_turn = A::eye(2);
  half_turn.at(0, 0) = half_turn.at(1, 1) = -1;
  CHECK_THROWS_AS(make_group("SO(2)")->log(half_turn), ValueError);
}

TEST_CASE("rotation_log: exp of it is the rotation, on the cut locus too; det -1 and non-orthogonal refused") {
  // Random rotations (principal: the group's log agrees), and matrices with eigenvalues
  // -1 in pairs, where the principal logarithm is not real: -I_4, diag(-1, -1, 1),
  // a signed 5 x 5 permutation (a transposition times -1: four eigenvalues -1), and a
  // random rotation times a half turn.
  Rng rng(21);
  for (int64_t n : {2, 3, 4, 5, 14}) {
    CAPTURE(n);
    auto g = make_group("SO(" + std::to_string(n) + ")");
    std::vector<A> cases;
    const A random = g->sample<double>(rng, 3);
    for (int64_t b = 0; b < 3; ++b) {
      A X(Shape{n, n});
      std::copy(random.data() + b * n * n, random.data() + (b + 1) * n * n, X.data());
      cases.push_back(X);
    }
    A half_turn = A::eye(n);
    half_turn.at(0, 0) = half_turn.at(1, 1) = -1;
    cases.push_back(half_turn);
    cases.push_back(g->compose(cases[0], half_turn));
    if (n % 2 == 0) {
      A minus = A::eye(n);
      for (int64_t i = 0; i < n; ++i) minus.at(i, i) = -1;
      cases.push_back(minus);
    }
    if (n == 5) {  // -P of the transposition (0 1)
      A P(Shape{5, 5});
      const int perm[5] = {1, 0, 2, 3, 4};
      for (int64_t i = 0; i < 5; ++i) P.at(i, perm[i]) = -1;
      cases.push_back(P);
    }
    for (size_t c = 0; c < cases.size(); ++c) {
      CAPTURE(c);
      A L(Shape{n, n});
      rotation_log(n, cases[c].data(), L.data());
      CHECK(max_abs_diff(g->project(L), L) < 1e-14);   // skew
      CHECK(max_abs_diff(g->exp(L), cases[c]) < 1e-12);
      if (c < 3) CHECK(max_abs_diff(L, g->log(cases[c])) < 1e-10);  // principal where that is real
    }
  }
  A reflection = A::eye(3);
  reflection.at(0, 0) = -1;
  A L(Shape{3, 3});
  CHECK_THROWS_WITH_AS(rotation_log(3, reflection.data(), L.data()), doctest::Contains("determinant -1"), ValueError);
  A scaled = A::eye(3);
  scaled.at(2, 2) = 1.1;
  CHECK_THROWS_WITH_AS(rotation_log(3, scaled.data(), L.data()), doctest::Contains("not orthogonal"), ValueError);
}

TEST_CASE("compose broadcasts one matrix over a batch and rejects mismatched batches") {
  // X X^-1 = X^-1 X = I and X Y in G are laws of the registry (tests/test_group_laws.cpp).
  Rng rng(15);
  for (const std::string& spec : test::group_specs()) {
    INFO(spec);
    auto g = make_group(spec);
    const A X = g->sample<double>(rng, 4);
    const A y0 = g->sample<double>(rng);
    const A XY = g->compose(X, y0), YX = g->compose(y0, X);
    CHECK(XY.shape() == X.shape());
    CHECK(YX.shape() == X.shape());
    CHECK(g->defect(XY) < 1e-12);
    CHECK_THROWS_AS(g->compose(X, g->sample<double>(rng, 3)), ShapeError);
  }
}

TEST_CASE("inner: Re tr(H* P) = d on the diagonal and d - ||H - P||^2 / 2") {
  Rng rng(16);
  for (const std::string& spec : test::group_specs()) {
    INFO(spec);
    auto g = make_group(spec);
    const int64_t d = g->complex_dim();
    const A H = g->sample<double>(rng, 5), P = g->sample<double>(rng, 5);
    const A hh = g->inner(H, H), hp = g->inner(H, P);
    A diff = H;
    for (int64_t i = 0; i < diff.size(); ++i) diff[i] -= P[i];
    const std::vector<double> dn = complex_norms(*g, diff);
    for (int64_t b = 0; b < 5; ++b) {
      CHECK(hh[b] == doctest::Approx(double(d)).epsilon(1e-12));
      CHECK(hp[b] == doctest::Approx(double(d) - dn[size_t(b)] * dn[size_t(b)] / 2).epsilon(1e-12));
    }
  }
  // Independent check of the real-form factor: Re tr(Z* W) on the complex matrices of U(3).
  auto u3 = make_group("U(3)");
  const A H = u3->sample<double>(rng), P = u3->sample<double>(rng);
  const auto Zh = as_complex(*u3, H.data()), Zp = as_complex(*u3, P.data());
  cplx tr = 0;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t k = 0; k < 3; ++k) tr += std::conj(Zh[size_t(k * 3 + i)]) * Zp[size_t(k * 3 + i)];
  CHECK(u3->inner(H, P).item() == doctest::Approx(tr.real()).epsilon(1e-13));
}

TEST_CASE("Haar samples: determinants and trace moments") {
  Rng rng(17);
  const int count = 400;
  for (int d : {1, 2, 3, 8}) {
    for (const char* kind : {"SO", "O", "U", "SU", "T"}) {
      const std::string spec = std::string(kind) + "(" + std::to_string(d) + ")";
      INFO(spec);
      auto g = make_group(spec);
      const A X = g->sample<double>(rng, count);
      const int64_t n = g->n(), nn = n * n;
      CHECK(g->defect(X) < 1e-12);
      int positive = 0;
      cplx phase_sum = 0;
      double tr2 = 0, max_det_err = 0;
      for (int b = 0; b < count; ++b) {
        const auto Z = as_complex(*g, X.data() + b * nn);
        const cplx det = lapack::det(d, Z.data());
        cplx tr = 0;
        for (int i = 0; i < d; ++i) tr += Z[size_t(i * d + i)];
        tr2 += std::norm(tr) / count;
        if (det.real() > 0) ++positive;
        phase_sum += det / double(count);
        max_det_err = std::max(max_det_err, std::abs(std::abs(det) - 1.0));
      }
      CHECK(max_det_err < 1e-12);
      const std::string k = kind;
      if (k == "SO" || k == "SU") CHECK(positive == count);  // det = 1 (the defect includes |det - 1|)
      if (k == "O") {
        CHECK(positive > 150);  // both components, about half each (binomial sd 10)
        CHECK(positive < 250);
      }
      if (k == "U" || k == "T") CHECK(std::abs(phase_sum) < 0.25);  // det phase spread over the circle
      // Diaconis-Shahshahani moments: E|tr X|^2 = 1 (SO(2): 2, T(d): d, trivial groups: 1).
      double expected = 1;
      if (k == "SO" && d == 2) expected = 2;
      if (k == "T") expected = d;
      CHECK(std::abs(tr2 - expected) < 0.35 * expected);
    }
  }
}

TEST_CASE("tori are diagonal, products block diagonal") {
  Rng rng(18);
  auto t = make_group("T(4)");
  const A X = t->sample<double>(rng, 3);
  bool diagonal = true;
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 8; ++i)
      for (int64_t j = 0; j < 8; ++j)
        if (i % 4 != j % 4 && X.at(b, i, j) != 0) diagonal = false;
  CHECK(diagonal);
  CHECK(t->defect(X) < 1e-14);
  A Y = X;
  Y.at(0, 0, 1) = 1e-3;  // off the diagonal: no longer in T(4)
  CHECK(t->defect(Y) > 5e-4);

  // SO(3)xU(2): a complexified 6 x 6 SO(3) block [[Q, 0], [0, Q]], then U(2)'s 4 x 4 block.
  auto p = make_group("SO(3)xU(2)");
  const A P = p->sample<double>(rng);
  double off = 0, so_mismatch = 0;
  for (int64_t i = 0; i < 10; ++i)
    for (int64_t j = 0; j < 10; ++j)
      if ((i < 6) != (j < 6)) off += std::abs(P.at(i, j));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j)
      so_mismatch += std::abs(P.at(i, j) - P.at(3 + i, 3 + j)) + std::abs(P.at(i, 3 + j)) + std::abs(P.at(3 + i, j));
  CHECK(off == 0.0);
  CHECK(so_mismatch == 0.0);
  // Coordinates are concatenated: the first 3 are SO(3)'s.
  A u(Shape{7});
  u[0] = 1;
  const A H = p->hat(u);
  CHECK(H.at(0, 1) == doctest::Approx(std::sqrt(0.5)));
  CHECK(H.at(3, 4) == doctest::Approx(std::sqrt(0.5)));
  // make_product flattens nested products.
  std::vector<std::unique_ptr<Group>> parts;
  parts.push_back(make_group("SO(2)xSO(3)"));
  parts.push_back(make_group("U(1)"));
  auto q = make_product(std::move(parts));
  CHECK(q->name() == "SO(2)xSO(3)xU(1)");
  CHECK(q->n() == 12);
  CHECK(q->dim() == 5);
}

TEST_CASE("trivial groups (m = 0) are handled") {
  Rng rng(19);
  for (const char* spec : {"SO(1)", "SU(1)", "O(1)"}) {
    INFO(spec);
    auto g = make_group(spec);
    const int64_t n = g->n();
    const A Hz = g->hat(A(Shape{3, 0}));
    CHECK(Hz.shape() == Shape{3, n, n});
    CHECK(max_abs_diff(Hz, A(Shape{3, n, n})) == 0.0);
    CHECK(g->vee(rng.normal_array<double>(Shape{3, n, n})).shape() == Shape{3, 0});
    CHECK(max_abs_diff(g->exp(Hz), eye_batch(3, n)) == 0.0);
    CHECK(g->defect(g->sample<double>(rng, 5)) < 1e-14);
  }
}

TEST_CASE("float batch operations agree with double") {
  Rng rng(20);
  for (const char* spec : {"SO(5)", "U(3)", "SU(3)", "T(3)", "SO(3)xU(2)"}) {
    INFO(spec);
    auto g = make_group(spec);
    const A X = rng.normal_array<double>(Shape{3, g->n(), g->n()});
    const A u = coords(rng, *g, 3, 1.0);
    const Array<float> Xf = X.cast<float>(), uf = u.cast<float>();
    CHECK(max_abs_diff(g->project(Xf).cast<double>(), g->project(X)) < 1e-5);
    CHECK(max_abs_diff(g->vee(Xf).cast<double>(), g->vee(X)) < 1e-5);
    CHECK(max_abs_diff(g->hat(uf).cast<double>(), g->hat(u)) < 1e-6);
    CHECK(max_abs_diff(g->exp(g->hat(uf)).cast<double>(), g->exp(g->hat(u))) < 1e-5);
    CHECK(g->defect(g->sample<float>(rng, 2)) < 1e-5);
  }
}

TEST_CASE("the group-kinds table: builders, smallest non-trivial d, and the factors of a spelling") {
  std::vector<std::string> names;
  for (const GroupKind& k : group_kinds()) {
    INFO(k.name);
    names.push_back(k.name);
    CHECK(k.make(3)->name() == k.spelling(3));
    CHECK(make_group(k.spelling(3))->name() == k.spelling(3));
    // min_d is the first d whose algebra is not zero.
    CHECK(k.make(k.min_d)->dim() > 0);
    if (k.min_d > 1) CHECK(k.make(k.min_d - 1)->dim() == 0);
    CHECK(find_group_kind(k.name) == &k);
  }
  CHECK(names == std::vector<std::string>{"SO", "O", "U", "SU", "T"});
  CHECK(find_group_kind("su") == find_group_kind("SU"));
  CHECK(find_group_kind("SP") == nullptr);
  const auto factors = parse_group_spelling(" so(3) \xC3\x97 U ( 2 )");
  REQUIRE(factors.size() == 2);
  CHECK(factors[0].kind->name == "SO");
  CHECK(factors[0].d == 3);
  CHECK(factors[1].kind->name == "U");
  CHECK(factors[1].d == 2);
  CHECK(parse_group_spelling("T(16)").size() == 1);
  CHECK_THROWS_WITH_AS(parse_group_spelling("SP(3)"), doctest::Contains("unknown group \"SP\""), ValueError);
}

TEST_CASE("make_group spellings and errors") {
  CHECK(make_group("SO(16)")->name() == "SO(16)");
  CHECK(make_group("so(16)")->name() == "SO(16)");
  CHECK(make_group("  SU ( 8 ) ")->name() == "SU(8)");
  CHECK(make_group("T(16)")->name() == "T(16)");
  for (const char* s : {"SO(8)xSO(8)", "SO(8) x SO(8)", "SO(8)\xC3\x97SO(8)", "SO(8) \xC3\x97 SO(8)", "SO(8)*SO(8)",
                        "SO(8)XSO(8)"}) {
    INFO(s);
    auto g = make_group(s);
    CHECK(g->name() == "SO(8)xSO(8)");
    CHECK(g->n() == 16);
  }
  for (const char* bad : {"", "SO", "SO()", "SO(0)", "SP(3)", "SO(3)x", "SO(3)+SO(3)", "SO(3", "SO(-1)", "SO(3.5)",
                          "GL(3)", "SO(99999999)"}) {
    INFO("spec \"" << bad << "\"");
    bool threw = false;
    try {
      make_group(bad);
    } catch (const ValueError& e) {
      threw = true;
      const std::string msg = e.what();
      CHECK(msg.find(std::string("\"") + bad + "\"") != std::string::npos);
      CHECK(msg.find("accepted forms") != std::string::npos);
    }
    CHECK(threw);
  }
}

TEST_CASE("group batch operations reject bad shapes") {
  auto g = make_group("SO(3)");
  CHECK_THROWS_AS(g->project(A(Shape{2, 4, 4})), ShapeError);
  CHECK_THROWS_AS(g->hat(A(Shape{2, 4})), ShapeError);
  CHECK_THROWS_AS(g->vee(A(Shape{9})), ShapeError);
  ag::Vard x(A(Shape{2, 4, 4}), true);
  CHECK_THROWS_AS(project(*g, x), ShapeError);
  CHECK_THROWS_AS(inner_all(*g, ag::Vard(A(Shape{3, 3}), true), ag::Vard(A(Shape{2, 3, 3}), true)), ShapeError);
  CHECK_THROWS_AS(compose(*g, ag::Vard(A(Shape{3, 3}), true), ag::Vard(A(Shape{2, 3, 3}), true)), ShapeError);
}

TEST_CASE("group tape ops: forward values and exact adjoints") {
  Rng rng(21);
  for (const char* spec : {"SO(4)", "U(3)", "SU(3)", "T(2)", "SO(3)xU(2)", "SO(2)xSO(2)"}) {
    INFO(spec);
    auto g = make_group(spec);
    const int64_t n = g->n(), m = g->dim(), N = 3;
    const A X = rng.normal_array<double>(Shape{N, n, n}), G = rng.normal_array<double>(Shape{N, n, n});
    const A u = rng.normal_array<double>(Shape{N, m}), w = rng.normal_array<double>(Shape{N, m});
    // Forward values equal the batch operations.
    ag::NoGrad ng;
    CHECK(max_abs_diff(project(*g, ag::Vard(X)).value(), g->project(X)) == 0.0);
    CHECK(max_abs_diff(hat(*g, ag::Vard(u)).value(), g->hat(u)) == 0.0);
    CHECK(max_abs_diff(vee(*g, ag::Vard(X)).value(), g->vee(X)) == 0.0);
    // <hat(u), G> = <u, hat^T G> with hat^T = vee / s; <vee(X), w> = <X, vee^T w> with vee^T = s hat.
    A hat_t(Shape{N, m}), vee_t(Shape{N, n, n}), proj_t(Shape{N, n, n});
    hat_backward(*g, N, G.data(), hat_t.data());
    vee_backward(*g, N, w.data(), vee_t.data());
    project_backward(*g, N, G.data(), proj_t.data());
    CHECK(dot(g->hat(u), G) == doctest::Approx(dot(u, hat_t)).epsilon(1e-12));
    CHECK(dot(g->vee(X), w) == doctest::Approx(dot(X, vee_t)).epsilon(1e-12));
    CHECK(dot(g->project(X), G) == doctest::Approx(dot(X, proj_t)).epsilon(1e-12));
    // inner_all: S_iv = Re tr(H_i* P_v).
    const A H = g->sample<double>(rng, N), P = g->sample<double>(rng, 4);
    const A S = inner_all(*g, ag::Vard(H), ag::Vard(P)).value();
    CHECK(S.shape() == Shape{N, 4});
    for (int64_t i = 0; i < N; ++i)
      for (int64_t v = 0; v < 4; ++v) {
        A hi(Shape{n, n}), pv(Shape{n, n});
        std::copy(H.data() + i * n * n, H.data() + (i + 1) * n * n, hi.data());
        std::copy(P.data() + v * n * n, P.data() + (v + 1) * n * n, pv.data());
        CHECK(S.at(i, v) == doctest::Approx(g->inner(hi, pv).item()).epsilon(1e-12));
      }
    // compose with conjugate transposes: H* M.
    const A R = compose(*g, ag::Vard(H), ag::Vard(H), true, false).value();
    CHECK(max_abs_diff(R, eye_batch(N, n)) < 1e-12);
  }
}

TEST_CASE("every group op passes check_vjp in double") {
  Rng rng(22);
  std::map<std::string, double> worst;
  for (const ag::OpCheck& c : group_op_checks()) {
    const ag::VjpResult r = c.run(rng);
    test::require_vjp(r);
    // "group SO(3) project" -> worst error per group
    const std::string group = c.name.substr(6, c.name.find(' ', 6) - 6);
    worst[group] = std::max(worst[group], r.max_rel_error);
  }
  for (const auto& [group, err] : worst) MESSAGE("worst check_vjp rel error for " << group << ": " << err);
}

TEST_CASE("restore_structure_kernel: the orthogonal projection onto each group's storage pattern") {
  Rng rng(31);
  for (const char* spec : {"SO(5)", "O(3)", "U(3)", "SU(3)", "T(3)", "SO(3)xU(2)", "SO(2)xSO(3)", "U(2)xT(1)"}) {
    INFO(spec);
    auto g = make_group(spec);
    const int64_t n = g->n();
    auto R = [&](A M) {
      g->restore_structure_kernel(M.data(), n);
      return M;
    };
    const A X = g->sample<double>(rng);
    // R(X) = X and R idempotent and orthogonal are laws of the registry
    // (tests/test_group_laws.cpp). Anything orthogonal to the pattern (E = N - R(N)) is removed completely, so a state
    // that rounding pushed off the pattern comes back to it: R(X + E) = X.
    A N = rng.normal_array<double>(Shape{n, n});
    const A RN = R(N);
    A E = N;
    for (int64_t i = 0; i < E.size(); ++i) E[i] -= RN[i];
    A XE = X;
    for (int64_t i = 0; i < XE.size(); ++i) XE[i] += 1e-3 * E[i];
    CHECK(max_abs_diff(R(XE), X) < 1e-15);
    // The float kernel agrees with the double one.
    Array<float> Nf(Shape{n, n});
    for (int64_t i = 0; i < N.size(); ++i) Nf[i] = static_cast<float>(N[i]);
    g->restore_structure_kernel(Nf.data(), n);
    for (int64_t i = 0; i < N.size(); ++i) CHECK(std::abs(Nf[i] - RN[i]) < 1e-6);
  }
  // The pattern is a proper subspace for the complex and product groups: a random
  // matrix is changed; for SO and O it is all of R^{n x n}: nothing changes.
  for (const char* spec : {"U(2)", "T(2)", "SO(2)xSO(2)"}) {
    auto g = make_group(spec);
    A M = rng.normal_array<double>(Shape{4, 4});
    const A M0 = M;
    g->restore_structure_kernel(M.data(), 4);
    CHECK(max_abs_diff(M, M0) > 0.1);
  }
  auto so = make_group("SO(4)");
  A M = rng.normal_array<double>(Shape{4, 4});
  const A M0 = M;
  so->restore_structure_kernel(M.data(), 4);
  CHECK(max_abs_diff(M, M0) == 0.0);
}

TEST_CASE("SO(d) float hat and vee equal the element formulas exactly, with a row stride, padding untouched") {
  Rng rng(33);
  const float c = static_cast<float>(real_form::kInvSqrt2);
  for (int64_t d : {1, 2, 3, 5, 8, 15, 16, 17, 31, 33, 64, 65}) {
    INFO("d = " << d);
    auto g = make_group("SO(" + std::to_string(d) + ")");
    const int64_t m = g->dim(), ld = d + 3;
    std::vector<float> u(static_cast<size_t>(m)), X(static_cast<size_t>(d * ld)), out(static_cast<size_t>(d * ld), 7.0f);
    for (auto& v : u) v = static_cast<float>(rng.normal());
    for (auto& v : X) v = static_cast<float>(rng.normal());
    g->hat_kernel(u.data(), out.data(), ld);
    std::vector<float> back(static_cast<size_t>(m), 0.0f);
    g->vee_kernel(X.data(), ld, back.data());
    int64_t p = 0, bad_hat = 0, bad_vee = 0, padding = 0;
    for (int64_t i = 0; i < d; ++i) {
      bad_hat += out[size_t(i * ld + i)] != 0.0f;
      for (int64_t j = i + 1; j < d; ++j, ++p) {
        bad_hat += out[size_t(i * ld + j)] != c * u[size_t(p)];
        bad_hat += out[size_t(j * ld + i)] != -c * u[size_t(p)];
        bad_vee += back[size_t(p)] != c * (X[size_t(i * ld + j)] - X[size_t(j * ld + i)]);
      }
      for (int64_t j = d; j < ld; ++j) padding += out[size_t(i * ld + j)] != 7.0f;
    }
    CHECK(bad_hat == 0);
    CHECK(bad_vee == 0);
    CHECK(padding == 0);  // nothing written past column d-1 of a row
  }
}
