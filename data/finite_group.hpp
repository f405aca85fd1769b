// Finite groups for the group word problems (data/group_words.hpp), each given as a
// group of permutations of n points:
//   Z<n>      cyclic, 2 <= n <= 256: element k is the rotation i -> i + k (mod n), so
//             class id k is the residue k and the product is addition mod n;
//   S<n>      symmetric, 2 <= n <= 7: all n! permutations in lexicographic order;
//   A<n>      alternating, 3 <= n <= 7: the even permutations in lexicographic order;
//   PSL2_<p>  PSL(2,p) for the primes p = 5, 7, 11, 13, acting on the p + 1 points of
//             the projective line over F_p (points 0..p-1 are the field elements, point
//             p is infinity) by the Moebius maps x -> (ax + b)/(cx + d), ad - bc = 1;
//             the elements are generated from S: x -> -1/x and T: x -> x + 1 and
//             listed in lexicographic order. S and T generate the modular group
//             SL(2,Z)/{+-1} (Serre 1973, "A Course in Arithmetic", ch. VII, Thm. 2) and
//             reduction mod p maps SL(2,Z) onto SL(2,F_p) (Shimura 1971, "Introduction
//             to the Arithmetic Theory of Automorphic Functions", Lemma 1.38), so they
//             generate PSL(2,p), of order p(p^2 - 1)/2: 60 (isomorphic to A5), 168, 660,
//             1092.
// Element 0 is always the identity. A permutation is stored as its image list p
// (p[i] = image of point i). Products read left to right, "a then b":
//   (a . b)[i] = b[a[i]],
// so the running product x_1 . x_2 . ... . x_t of a word is the state of a right
// action H <- H . x, as in the OSM update H <- H exp(...).
//
// Products of groups of order <= kMaxTabulatedOrder come from a multiplication table
// built once (|G|^2 ints: 4 MB at 1,024 elements, about the size of a last-level cache);
// larger groups (A7: 2,520 elements, whose table would take 25 MB; S7: 5,040, 102 MB)
// compute each product: compose the two permutations (n <= 14 points) and look the
// result up in a hash map from the packed permutation to its id, built once.
//
// Standard generating sets (Coxeter & Moser 1980, ch. 6): Z<n> by 1; S<n> by the
// transposition (0 1) and the n-cycle (0 1 ... n-1); A<n> by the 3-cycles
// (0 1 k), k = 2..n-1; PSL2_<p> by S and T above (S of order 2, T of order p).
// Why these groups: S5 and A5 are the smallest non-solvable groups, whose word
// problem is NC1-complete (Barrington 1989); Z2 (parity) and S3 are solvable; A<n>
// (n >= 5) and PSL(2,p) (p >= 5) are simple, PSL(2,7) the second smallest
// non-abelian simple group.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace liegrad::data {

// Groups up to this order get a multiplication table; larger ones compute products.
inline constexpr int64_t kMaxTabulatedOrder = 1024;

class FiniteGroup {
 public:
  // name: "Z<n>", "S<n>", "A<n>" or "PSL2_<p>" as above. Anything else throws
  // ValueError naming the name and the known families.
  explicit FiniteGroup(const std::string& name);

  const std::string& name() const { return name_; }
  int64_t order() const { return static_cast<int64_t>(elements_.size()); }  // |G|
  int64_t degree() const { return n_; }  // the points permuted
  int32_t identity() const { return 0; }
  // The permutation (n) of element id; ValueError outside [0, |G|).
  const std::vector<int32_t>& element(int32_t id) const;
  // The id of a . b ("a then b"); no range check (ids come from this group).
  int32_t multiply(int32_t a, int32_t b) const {
    if (!table_.empty()) return table_[static_cast<size_t>(a) * elements_.size() + static_cast<size_t>(b)];
    return computed_product(a, b);
  }
  // The id of a^-1; no range check.
  int32_t inverse(int32_t a) const;
  // True when products come from a table (order <= kMaxTabulatedOrder).
  bool tabulated() const { return !table_.empty(); }
  // The id of permutation p (n); ValueError when p is not an element of the group.
  int32_t id_of(const std::vector<int32_t>& p) const;
  // The standard generating set, as element ids in a fixed order.
  std::vector<int32_t> standard_generators() const;
  // A named generating set, as element ids in a fixed order: "standard" (above) or
  // "coxeter", S<n>'s n - 1 adjacent transpositions s_i = (i i+1), whose Coxeter
  // presentation has only short relations: s_i^2 = (s_i s_{i+1})^3 = (s_i s_j)^2 = 1
  // for |i - j| > 1 (Coxeter 1934; the standard set's transposition and n-cycle need
  // relations as long as (s c)^(n-1)). ValueError for another name, or "coxeter" on a
  // group that is not symmetric. "no_involutions": generators none of which has order 2
  // (Z<n>, n >= 3: 1; A<n>: the standard 3-cycles; S<n>, n >= 4: A<n>'s 3-cycles and
  // the odd one of the cycles (0 1 ... n-1) and (0 1 ... n-2); PSL2_<p>: elements of order
  // 3, the first S.T, any two of them multiplying to order 2 or 3, as 3-cycles (0 1 i) and
  // (0 1 j) do; the rest taken in id order until they generate, which fails for PSL2_11). An OSM transition exp(X) that must reach an element with eigenvalue -1 in
  // more than one plane (a transposition as sgn(s) times its permutation matrix in SO(5))
  // meets a point where exp's derivative is singular; these generators avoid it. ValueError
  // for Z2, S2 and S3, which no such set generates, and for PSL2_11.
  std::vector<int32_t> generating_set(const std::string& name) const;

 private:
  std::vector<int32_t> no_involution_generators() const;
  int32_t computed_product(int32_t a, int32_t b) const;
  int32_t id_of_packed(uint64_t key) const;

  std::string name_;
  char family_ = 'Z';  // 'Z', 'S', 'A' or 'P' (PSL2_<p>)
  int64_t n_ = 0;      // points permuted (p + 1 for PSL2_<p>)
  std::vector<std::vector<int32_t>> elements_;  // (|G|, n)
  std::unordered_map<uint64_t, int32_t> ids_;   // packed permutation -> id
  std::vector<int32_t> table_;  // (|G|, |G|): table_[a*|G| + b] = id of a . b; empty when computed
};

// The families and their size limits, for messages: "Z<n> (2..256)", ...
std::string finite_group_families();

// +1 for an even permutation p (n), -1 for an odd one.
int permutation_sign(const std::vector<int32_t>& p);

}  // namespace liegrad::data
