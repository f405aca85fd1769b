// The kinds of single group make_group knows (SO, O, U, SU, T), one table row each:
// its name, its builder, and the smallest d whose Lie algebra is not zero (SO(1),
// O(1) and SU(1) have nothing to learn). parse_group_spelling splits a spelling into
// its factors by make_group's grammar; make_group builds them, and the --match size
// knob (models/param_search.hpp) reads a single factor's kind and d from it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "groups/group.hpp"

namespace liegrad::groups {

struct GroupKind {
  std::string name;   // upper case, as make_group spells it in Group::name(): "SO"
  int64_t min_d = 1;  // the smallest d with a non-zero algebra: 2 for SO, O, SU; 1 for U, T
  std::unique_ptr<Group> (*make)(int64_t d) = nullptr;
  // "SO(d)": the canonical spelling of this kind at size d.
  std::string spelling(int64_t d) const { return name + "(" + std::to_string(d) + ")"; }
};

// Every kind, in the order of make_group's grammar: SO, O, U, SU, T.
const std::vector<GroupKind>& group_kinds();
// The kind named `name` (case-insensitive), or nullptr.
const GroupKind* find_group_kind(const std::string& name);

// One factor of a group spelling: its kind and size d (>= 1).
struct GroupFactor {
  const GroupKind* kind = nullptr;
  int64_t d = 0;
};

// The factors of `spec` in order ("SO(3) x U(2)": SO 3, U 2; a single group: one
// factor). Throws make_group's ValueError naming the bad spelling and the accepted forms.
std::vector<GroupFactor> parse_group_spelling(const std::string& spec);

}  // namespace liegrad::groups
