// The larger non-solvable groups of data/finite_group.hpp (PSL2_<p>, A6, S6, A7, S7)
// against constructions written here independently of the library:
//   PSL(2,p)  every 2x2 matrix over F_p of determinant 1, taken mod +-I, as a Moebius
//             map of the projective line: the same set of permutations, and the
//             same histogram of element orders counted on the matrices;
//   A<n>, S<n> every map of n points to itself (n^n of them) kept when it is a
//             bijection (and even, by counting inversions): the same set.
// Then the group laws on the library's products (computed, not tabulated, for A7
// and S7): identity, inverses, closure and associativity (all triples of a small
// group, random samples of a large one), the product against permutation
// composition, and simplicity (the normal closure of every non-identity class is
// the whole group) where it is cheap.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <unordered_set>

#include "core/errors.hpp"
#include "core/rng.hpp"
#include "data/group_words.hpp"

using namespace liegrad;
using data::FiniteGroup;

namespace {

using Perm = std::vector<int32_t>;

// "a then b", written independently of the library: (a . b)[i] = b[a[i]].
Perm then(const Perm& a, const Perm& b) {
  Perm c(a.size());
  for (size_t i = 0; i < a.size(); ++i) c[i] = b.at(static_cast<size_t>(a[i]));
  return c;
}

Perm identity(size_t n) {
  Perm p(n);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

// The order of p: the least k >= 1 with p^k the identity.
int64_t perm_order(const Perm& p) {
  int64_t k = 1;
  for (Perm q = p; q != identity(p.size()); q = then(q, p)) ++k;
  return k;
}

struct Mat {
  int64_t a, b, c, d;
};

// Moebius map x -> (a x + b) / (c x + d) on {0..p-1, infinity = p}.
Perm moebius(const Mat& m, int64_t p) {
  auto inv = [p](int64_t x) {  // x^-1 mod p by search
    for (int64_t y = 1; y < p; ++y)
      if (x * y % p == 1) return y;
    return int64_t(-1);
  };
  Perm out(static_cast<size_t>(p + 1));
  for (int64_t x = 0; x <= p; ++x) {
    int64_t num, den;
    if (x == p) {
      num = m.a;
      den = m.c;
    } else {
      num = (m.a * x + m.b) % p;
      den = (m.c * x + m.d) % p;
    }
    out[static_cast<size_t>(x)] = static_cast<int32_t>(den == 0 ? p : num * inv(den) % p);
  }
  return out;
}

// The order of a matrix in SL(2,p)/{+-I}: the least k with M^k = +-I.
int64_t psl_order(const Mat& m, int64_t p) {
  Mat q = m;
  for (int64_t k = 1;; ++k) {
    if (q.b == 0 && q.c == 0 && q.a == q.d && (q.a == 1 || q.a == p - 1)) return k;
    q = {(q.a * m.a + q.b * m.c) % p, (q.a * m.b + q.b * m.d) % p, (q.c * m.a + q.d * m.c) % p,
         (q.c * m.b + q.d * m.d) % p};
  }
}

// Every bijection of n points, found among all n^n maps; `even_only` keeps those with
// an even number of inversions.
std::set<Perm> brute_force_permutations(int64_t n, bool even_only) {
  std::set<Perm> out;
  Perm f(static_cast<size_t>(n), 0);
  while (true) {
    std::vector<bool> hit(static_cast<size_t>(n), false);
    bool bijective = true;
    for (int32_t v : f) {
      if (hit[static_cast<size_t>(v)]) bijective = false;
      hit[static_cast<size_t>(v)] = true;
    }
    if (bijective) {
      int64_t inversions = 0;
      for (size_t i = 0; i < f.size(); ++i)
        for (size_t j = i + 1; j < f.size(); ++j) inversions += f[i] > f[j];
      if (!even_only || inversions % 2 == 0) out.insert(f);
    }
    size_t k = 0;  // the next map in base-n counting
    while (k < f.size() && ++f[k] == n) f[k++] = 0;
    if (k == f.size()) return out;
  }
}

std::set<Perm> library_elements(const FiniteGroup& g) {
  std::set<Perm> out;
  for (int32_t i = 0; i < g.order(); ++i) out.insert(g.element(i));
  return out;
}

std::map<int64_t, int64_t> order_histogram(const FiniteGroup& g) {
  std::map<int64_t, int64_t> h;
  for (int32_t i = 0; i < g.order(); ++i) ++h[perm_order(g.element(i))];
  return h;
}

// The group laws on the library's ids: identity, inverses, products against
// composition, closure and associativity, on every pair/triple or on `samples` draws.
void check_group_laws(const FiniteGroup& g, int64_t samples) {
  const auto G = static_cast<int32_t>(g.order());
  CHECK(g.element(g.identity()) == identity(static_cast<size_t>(g.degree())));
  for (int32_t a = 0; a < G; ++a) {
    CHECK(g.multiply(a, g.identity()) == a);
    CHECK(g.multiply(g.identity(), a) == a);
    const int32_t inv = g.inverse(a);
    CHECK(g.multiply(a, inv) == g.identity());
    CHECK(g.multiply(inv, a) == g.identity());
  }
  Rng rng(17);
  for (int64_t s = 0; s < samples; ++s) {
    const auto a = static_cast<int32_t>(rng.integer(G)), b = static_cast<int32_t>(rng.integer(G)),
               c = static_cast<int32_t>(rng.integer(G));
    const int32_t ab = g.multiply(a, b);
    REQUIRE(ab >= 0);
    REQUIRE(ab < G);  // closure: the product is an element, and the right one
    CHECK(g.element(ab) == then(g.element(a), g.element(b)));
    CHECK(g.multiply(ab, c) == g.multiply(a, g.multiply(b, c)));
  }
}

// True when the normal closure of every non-identity element is the whole group
// (one element per conjugacy class tried): the group is simple.
bool simple_by_normal_closures(const FiniteGroup& g) {
  const auto G = static_cast<int32_t>(g.order());
  std::vector<bool> classified(static_cast<size_t>(G), false);
  classified[0] = true;
  for (int32_t x = 1; x < G; ++x) {
    if (classified[static_cast<size_t>(x)]) continue;
    std::unordered_set<int32_t> cls;  // {h^-1 x h}
    for (int32_t h = 0; h < G; ++h) cls.insert(g.multiply(g.multiply(g.inverse(h), x), h));
    for (int32_t y : cls) classified[static_cast<size_t>(y)] = true;
    std::vector<bool> in(static_cast<size_t>(G), false);
    std::vector<int32_t> reached = {g.identity()};
    in[0] = true;
    for (size_t i = 0; i < reached.size(); ++i)
      for (int32_t y : cls) {
        const int32_t z = g.multiply(reached[i], y);
        if (!in[static_cast<size_t>(z)]) {
          in[static_cast<size_t>(z)] = true;
          reached.push_back(z);
        }
      }
    if (static_cast<int32_t>(reached.size()) != G) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("PSL2_<p>: the matrices of SL(2,p) mod +-I give the same permutations and element orders") {
  for (const int64_t p : {5, 7, 11, 13}) {
    CAPTURE(p);
    const FiniteGroup g("PSL2_" + std::to_string(p));
    CHECK(g.degree() == p + 1);
    CHECK(g.order() == p * (p * p - 1) / 2);  // 60, 168, 660, 1092
    CHECK(g.tabulated() == (g.order() <= data::kMaxTabulatedOrder));
    std::set<Perm> from_matrices;
    std::map<int64_t, int64_t> matrix_orders;  // each class +-M counted once, from its two matrices
    int64_t sl2 = 0;
    for (int64_t a = 0; a < p; ++a)
      for (int64_t b = 0; b < p; ++b)
        for (int64_t c = 0; c < p; ++c)
          for (int64_t d = 0; d < p; ++d) {
            if ((a * d - b * c - 1) % p != 0) continue;
            ++sl2;
            const Mat m{a, b, c, d};
            if (from_matrices.insert(moebius(m, p)).second) ++matrix_orders[psl_order(m, p)];
          }
    CHECK(sl2 == p * (p * p - 1));                            // |SL(2,p)|
    CHECK(static_cast<int64_t>(from_matrices.size()) == g.order());  // M and -M give one map
    CHECK(library_elements(g) == from_matrices);
    CHECK(order_histogram(g) == matrix_orders);
  }
  // PSL(2,7): 1 identity, 21 involutions, 56 of order 3, 42 of order 4, 48 of order 7.
  CHECK(order_histogram(FiniteGroup("PSL2_7")) == std::map<int64_t, int64_t>{{1, 1}, {2, 21}, {3, 56}, {4, 42}, {7, 48}});
  // PSL(2,5) is isomorphic to A5: the same element orders.
  CHECK(order_histogram(FiniteGroup("PSL2_5")) == order_histogram(FiniteGroup("A5")));
}

TEST_CASE("A6, S6, A7, S7: the elements are the (even) bijections found by brute force") {
  for (const std::string name : {"A6", "S6", "A7", "S7"}) {
    CAPTURE(name);
    const FiniteGroup g(name);
    const int64_t n = std::stoll(name.substr(1));
    const std::set<Perm> brute = brute_force_permutations(n, name[0] == 'A');
    CHECK(static_cast<int64_t>(brute.size()) == (name == "A6" ? 360 : name == "S6" ? 720 : name == "A7" ? 2520 : 5040));
    CHECK(library_elements(g) == brute);
    CHECK(g.tabulated() == (g.order() <= data::kMaxTabulatedOrder));
  }
  CHECK(FiniteGroup("S6").tabulated());
  CHECK_FALSE(FiniteGroup("A7").tabulated());  // 2,520^2 ints would be 25 MB
}

TEST_CASE("the larger groups obey the group laws, tabulated or computed, and the simple ones are simple") {
  for (const std::string name : {"PSL2_7", "A6"}) {  // every triple is 4.8e6 / 4.7e7 products: samples
    CAPTURE(name);
    check_group_laws(FiniteGroup(name), 20000);
  }
  for (const std::string name : {"S6", "A7", "S7", "PSL2_13"}) {
    CAPTURE(name);
    check_group_laws(FiniteGroup(name), 20000);
  }
  // Every triple of a small group.
  const FiniteGroup a5("PSL2_5");
  for (int32_t a = 0; a < 60; ++a)
    for (int32_t b = 0; b < 60; ++b)
      for (int32_t c = 0; c < 60; ++c) REQUIRE(a5.multiply(a5.multiply(a, b), c) == a5.multiply(a, a5.multiply(b, c)));
  for (const std::string name : {"PSL2_7", "A6", "A7", "PSL2_11"}) {
    CAPTURE(name);
    CHECK(simple_by_normal_closures(FiniteGroup(name)));
  }
  // S6 is not: the normal closure of a 3-cycle is A6.
  CHECK_FALSE(simple_by_normal_closures(FiniteGroup("S6")));
}

// The number of permutations of {0..degree-1} reached from the identity by right
// multiplication with `generators` (a breadth-first closure over permutations, independent
// of FiniteGroup's products): the order of the group they generate.
static int64_t closure_size(const std::vector<Perm>& generators, size_t degree) {
  std::set<Perm> reached = {identity(degree)};
  std::vector<Perm> frontier(reached.begin(), reached.end());
  while (!frontier.empty()) {
    std::vector<Perm> next;
    for (const auto& p : frontier)
      for (const auto& t : generators) {
        Perm q = then(p, t);
        if (reached.insert(q).second) next.push_back(std::move(q));
      }
    frontier = std::move(next);
  }
  return static_cast<int64_t>(reached.size());
}

TEST_CASE("the larger groups' word tasks: generators generate, running products compose, bad names are one line") {
  for (const std::string name : {"PSL2_7", "A6", "S6", "A7"}) {
    CAPTURE(name);
    const data::WordTask all(name), gens(name, "generators");
    const FiniteGroup& g = all.group();
    CHECK(all.classes() == g.order());
    CHECK(all.input_vocab() == g.order());
    // The generators reach every element.
    std::vector<Perm> alphabet;
    for (int32_t s = 0; s < gens.input_vocab(); ++s) alphabet.push_back(g.element(gens.element_of(s)));
    CHECK(closure_size(alphabet, static_cast<size_t>(g.degree())) == g.order());
    // A word's targets are the composed permutations.
    Rng rng(5);
    const data::Batch w = all.sample(rng, 2, 300);
    for (int64_t b = 0; b < 2; ++b) {
      Perm state = identity(static_cast<size_t>(g.degree()));
      for (int64_t t = 0; t < 300; ++t) {
        const auto i = static_cast<size_t>(b * 300 + t);
        state = then(state, g.element(all.element_of(w.inputs[i])));
        REQUIRE(g.element(w.targets[i]) == state);
      }
    }
  }
  // S<n>'s Coxeter generators: the n - 1 adjacent transpositions, checked as permutations
  // (independently of the group's products) to satisfy the Coxeter relations and, through
  // the word task, to generate the group.
  for (int n : {3, 5, 6, 7}) {
    const std::string name = "S" + std::to_string(n);
    CAPTURE(name);
    const data::WordTask cox(name, "generators", "coxeter");
    const FiniteGroup& g = cox.group();
    REQUIRE(cox.input_vocab() == n - 1);
    CHECK(cox.generating_set() == "coxeter");
    std::vector<Perm> s;
    for (int i = 0; i + 1 < n; ++i) {
      Perm t = identity(static_cast<size_t>(n));
      std::swap(t[static_cast<size_t>(i)], t[static_cast<size_t>(i + 1)]);
      CHECK(g.element(cox.element_of(i)) == t);
      s.push_back(t);
    }
    for (int i = 0; i + 1 < n; ++i)
      for (int j = 0; j + 1 < n; ++j) {
        const int m = i == j ? 1 : std::abs(i - j) == 1 ? 3 : 2;  // the Coxeter matrix: (s_i s_j)^m = e
        CHECK(perm_order(then(s[static_cast<size_t>(i)], s[static_cast<size_t>(j)])) == m);
      }
    CHECK(closure_size(s, static_cast<size_t>(n)) == g.order());
    // With inputs "all" the same generators are the alphabet curriculum's symbols.
    std::vector<int32_t> ids;
    for (int i = 0; i + 1 < n; ++i) ids.push_back(cox.element_of(i));
    CHECK(data::WordTask(name, "all", "coxeter").generator_symbols() == ids);
    CHECK(data::WordTask(name).generator_symbols() == g.standard_generators());
  }
  CHECK_THROWS_WITH_AS(data::WordTask("A6", "generators", "coxeter"), doctest::Contains("not for A6"), ValueError);
  CHECK_THROWS_WITH_AS(data::WordTask("S6", "generators", "odd"), doctest::Contains("'odd'"), ValueError);
  // S: x -> -1/x has order 2 and T: x -> x + 1 order 7 in PSL(2,7); their product order 3.
  const data::WordTask psl("PSL2_7", "generators");
  const FiniteGroup& g = psl.group();
  REQUIRE(psl.input_vocab() == 2);
  const Perm S = g.element(psl.element_of(0)), T = g.element(psl.element_of(1));
  CHECK(S == Perm{7, 6, 3, 2, 5, 4, 1, 0});  // -1/x mod 7: 1 -> 6, 2 -> 3, 3 -> 2, 4 -> 5, ...
  CHECK(perm_order(S) == 2);
  CHECK(perm_order(T) == 7);
  CHECK(perm_order(then(S, T)) == 3);

  // "no_involutions": generators of order >= 3 that still generate the group, checked as
  // permutations (orders and closure independent of the group's products).
  const std::vector<std::pair<std::string, std::vector<int64_t>>> odd_free = {
      {"Z5", {5}}, {"S4", {3, 3, 4}}, {"S5", {3, 3, 3, 4}}, {"S6", {3, 3, 3, 3, 6}}, {"S7", {3, 3, 3, 3, 3, 6}},
      {"A5", {3, 3, 3}}, {"A7", {3, 3, 3, 3, 3}}, {"PSL2_7", {3, 3, 3}}};
  for (const auto& [name, orders] : odd_free) {
    CAPTURE(name);
    const data::WordTask task(name, "generators", "no_involutions");
    const FiniteGroup& gr = task.group();
    REQUIRE(task.input_vocab() == static_cast<int64_t>(orders.size()));
    std::vector<Perm> gens;
    for (int32_t i = 0; i < task.input_vocab(); ++i) {
      gens.push_back(gr.element(task.element_of(i)));
      CHECK(perm_order(gens.back()) == orders[static_cast<size_t>(i)]);
    }
    CHECK(closure_size(gens, static_cast<size_t>(gr.degree())) == gr.order());
  }
  // PSL(2,p): elements of order 3, the first S.T, any two multiplying to order 2 or 3.
  for (const std::string name : {"PSL2_5", "PSL2_7", "PSL2_13"}) {
    CAPTURE(name);
    const data::WordTask task(name, "generators", "no_involutions");
    const FiniteGroup& gr = task.group();
    const data::WordTask standard(name, "generators");
    std::vector<Perm> gens;
    for (int32_t i = 0; i < task.input_vocab(); ++i) gens.push_back(gr.element(task.element_of(i)));
    CHECK(gens[0] == then(gr.element(standard.element_of(0)), gr.element(standard.element_of(1))));
    for (const auto& a : gens) {
      CHECK(perm_order(a) == 3);
      for (const auto& b : gens)
        if (a != b) CHECK((perm_order(then(a, b)) == 2 || perm_order(then(a, b)) == 3));
    }
    CHECK(closure_size(gens, static_cast<size_t>(gr.degree())) == gr.order());
  }
  CHECK_THROWS_WITH_AS(data::WordTask("PSL2_11", "generators", "no_involutions"),
                       doctest::Contains("PSL2_11 the choice of elements of order 3 stops in a subgroup of order 60"),
                       ValueError);
  for (const std::string name : {"Z2", "S2", "S3"}) {
    CAPTURE(name);
    CHECK_THROWS_WITH_AS(data::WordTask(name, "generators", "no_involutions"),
                         doctest::Contains(name.c_str()), ValueError);
  }
  CHECK_THROWS_WITH_AS(data::WordTask("S6", "generators", "odd"), doctest::Contains("no_involutions"), ValueError);

  auto message = [](const std::string& name) {
    try {
      FiniteGroup rejected(name);
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const std::string bad : {"PSL2_8", "PSL2_17", "S8", "A8", "PSL(2,7)", "M11"}) {
    CAPTURE(bad);
    const std::string m = message(bad);
    CHECK(m.find('\n') == std::string::npos);
    CHECK(m.find("unknown group '" + bad + "'") != std::string::npos);
    CHECK(m.find("PSL2_<p>") != std::string::npos);
  }
  CHECK(message("PSL2_8").find("p = 5, 7, 11 or 13") != std::string::npos);
  CHECK(message("S8").find("n <= 7") != std::string::npos);
}
