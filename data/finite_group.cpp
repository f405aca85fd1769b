// Permutation groups and their multiplication tables (see finite_group.hpp).
#include "data/finite_group.hpp"

#include <algorithm>
#include <numeric>
#include <regex>

#include "core/errors.hpp"

namespace liegrad::data {

namespace {

std::vector<int32_t> identity_perm(int64_t n) {
  std::vector<int32_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  return p;
}

// a then b: (a . b)[i] = b[a[i]].
std::vector<int32_t> compose(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  std::vector<int32_t> c(a.size());
  for (size_t i = 0; i < a.size(); ++i) c[i] = b[static_cast<size_t>(a[i])];
  return c;
}

}  // namespace

std::string finite_group_families() { return "Z<n> (cyclic, n = 2..256), S<n> (symmetric, n = 2..6), A<n> (alternating, n = 3..6)"; }

int permutation_sign(const std::vector<int32_t>& p) {
  // The parity of n minus the number of cycles.
  std::vector<bool> seen(p.size(), false);
  int64_t cycles = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (seen[i]) continue;
    ++cycles;
    for (size_t j = i; !seen[j]; j = static_cast<size_t>(p[j])) seen[j] = true;
  }
  return (static_cast<int64_t>(p.size()) - cycles) % 2 == 0 ? 1 : -1;
}

FiniteGroup::FiniteGroup(const std::string& name) : name_(name) {
  static const std::regex pattern(R"(^([ZSA])([1-9]\d{0,3})$)");
  std::smatch m;
  auto unknown = [&](const std::string& why) {
    return ValueError("unknown group '" + printable(name) + "'" + why + "; known groups: " + finite_group_families());
  };
  if (!std::regex_match(name, m, pattern)) throw unknown("");
  family_ = m[1].str()[0];
  n_ = std::stoll(m[2].str());
  const int64_t lo = family_ == 'A' ? 3 : 2, hi = family_ == 'Z' ? 256 : 6;
  if (n_ < lo || n_ > hi)
    throw unknown(" (" + std::string(1, family_) + "<n> needs " + std::to_string(lo) + " <= n <= " + std::to_string(hi) + ")");
  if (family_ == 'Z') {
    for (int64_t k = 0; k < n_; ++k) {
      std::vector<int32_t> p(static_cast<size_t>(n_));
      for (int64_t i = 0; i < n_; ++i) p[static_cast<size_t>(i)] = static_cast<int32_t>((i + k) % n_);
      elements_.push_back(std::move(p));
    }
  } else {
    std::vector<int32_t> p = identity_perm(n_);
    do {
      if (family_ == 'S' || permutation_sign(p) == 1) elements_.push_back(p);
    } while (std::next_permutation(p.begin(), p.end()));
  }
  for (size_t i = 0; i < elements_.size(); ++i) ids_[elements_[i]] = static_cast<int32_t>(i);
  const size_t G = elements_.size();
  table_.resize(G * G);
  for (size_t a = 0; a < G; ++a)
    for (size_t b = 0; b < G; ++b) table_[a * G + b] = ids_.at(compose(elements_[a], elements_[b]));
}

const std::vector<int32_t>& FiniteGroup::element(int32_t id) const {
  if (id < 0 || id >= order())
    throw ValueError(name_ + ": element id " + std::to_string(id) + " is outside [0, " + std::to_string(order()) + ")");
  return elements_[static_cast<size_t>(id)];
}

int32_t FiniteGroup::id_of(const std::vector<int32_t>& p) const {
  auto it = ids_.find(p);
  if (it == ids_.end()) throw ValueError(name_ + ": the permutation is not an element of the group");
  return it->second;
}

std::vector<int32_t> FiniteGroup::standard_generators() const {
  std::vector<std::vector<int32_t>> gens;
  if (family_ == 'Z') {
    gens.push_back(elements_[1]);
  } else if (family_ == 'S') {
    std::vector<int32_t> t = identity_perm(n_), c(static_cast<size_t>(n_));
    std::swap(t[0], t[1]);
    for (int64_t i = 0; i < n_; ++i) c[static_cast<size_t>(i)] = static_cast<int32_t>((i + 1) % n_);
    gens.push_back(t);
    if (c != t) gens.push_back(c);  // S2: the 2-cycle is the transposition
  } else {
    for (int64_t k = 2; k < n_; ++k) {
      std::vector<int32_t> c = identity_perm(n_);  // the 3-cycle 0 -> 1 -> k -> 0
      c[0] = 1;
      c[1] = static_cast<int32_t>(k);
      c[static_cast<size_t>(k)] = 0;
      gens.push_back(c);
    }
  }
  std::vector<int32_t> ids;
  for (const auto& g : gens) ids.push_back(id_of(g));
  return ids;
}

}  // namespace liegrad::data
