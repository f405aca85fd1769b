// make_group: builds a Group from its spelling in a config or on a command line: the
// factors parse_group_spelling reads (groups/group_kinds.hpp), each built by its
// kind's builder, joined by make_product.
#include "groups/group_kinds.hpp"

namespace liegrad::groups {

std::unique_ptr<Group> make_group(const std::string& spec) {
  std::vector<std::unique_ptr<Group>> factors;
  for (const GroupFactor& f : parse_group_spelling(spec)) factors.push_back(f.kind->make(f.d));
  return make_product(std::move(factors));
}

}  // namespace liegrad::groups
