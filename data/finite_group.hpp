// Small finite groups for the group word problems (data/group_words.hpp), each
// given as a group of permutations of n points with its full multiplication table:
//   Z<n>  cyclic, 2 <= n <= 256: element k is the rotation i -> i + k (mod n), so
//         class id k is the residue k and the product is addition mod n;
//   S<n>  symmetric, 2 <= n <= 6: all n! permutations in lexicographic order;
//   A<n>  alternating, 3 <= n <= 6: the even permutations in lexicographic order.
// Element 0 is always the identity. A permutation is stored as its image list p
// (p[i] = image of point i). Products read left to right, "a then b":
//   (a . b)[i] = b[a[i]],
// so the running product x_1 . x_2 . ... . x_t of a word is the state of a right
// action H <- H . x, as in the OSM update H <- H exp(...).
// Standard generating sets (Coxeter & Moser 1980, ch. 6): Z<n> by 1; S<n> by the
// transposition (0 1) and the n-cycle (0 1 ... n-1); A<n> by the 3-cycles
// (0 1 k), k = 2..n-1.
// Why these groups: S5 and A5 are the smallest non-solvable groups, whose word
// problem is NC1-complete (Barrington 1989); Z2 (parity) and S3 are solvable.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace liegrad::data {

class FiniteGroup {
 public:
  // name: "Z<n>", "S<n>" or "A<n>" as above. Anything else throws ValueError
  // naming the name and the known families.
  explicit FiniteGroup(const std::string& name);

  const std::string& name() const { return name_; }
  int64_t order() const { return static_cast<int64_t>(elements_.size()); }  // |G|
  int64_t degree() const { return n_; }  // the points permuted
  int32_t identity() const { return 0; }
  // The permutation (n) of element id; ValueError outside [0, |G|).
  const std::vector<int32_t>& element(int32_t id) const;
  // The id of a . b ("a then b"); no range check (ids come from this group).
  int32_t multiply(int32_t a, int32_t b) const {
    return table_[static_cast<size_t>(a) * elements_.size() + static_cast<size_t>(b)];
  }
  // The id of permutation p (n); ValueError when p is not an element of the group.
  int32_t id_of(const std::vector<int32_t>& p) const;
  // The standard generating set, as element ids in a fixed order.
  std::vector<int32_t> standard_generators() const;

 private:
  std::string name_;
  char family_ = 'Z';
  int64_t n_ = 0;
  std::vector<std::vector<int32_t>> elements_;  // (|G|, n)
  std::map<std::vector<int32_t>, int32_t> ids_;
  std::vector<int32_t> table_;  // (|G|, |G|): table_[a*|G| + b] = id of a . b
};

// The families and their size limits, for messages: "Z<n> (2..256)", ...
std::string finite_group_families();

// +1 for an even permutation p (n), -1 for an odd one.
int permutation_sign(const std::vector<int32_t>& p);

}  // namespace liegrad::data
