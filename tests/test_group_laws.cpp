// The Lie-group law registry (groups/group_laws.hpp), the suite `liegrad groupcheck`
// prints, run in full for every group kind at d in {1, 2, 3, 8, 16} and for products;
// a failing law is reported by group and law name with its three worst values.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "groups/group.hpp"
#include "groups/group_laws.hpp"
#include "tests/test_helpers.hpp"

using namespace liegrad;
using namespace liegrad::groups;

TEST_CASE("every group satisfies every law of the registry at the identity, near it and at random points") {
  for (const std::string& spec : test::group_specs()) {
    const auto g = make_group(spec);
    const std::vector<LawResult> results = check_group_laws(*g, 1234);
    REQUIRE(results.size() == group_laws().size());
    for (const LawResult& r : results) {
      INFO(spec << ": law \"" << r.law->name << "\" (" << r.law->measure << "): identity " << r.value[0]
                << ", near I " << r.value[1] << ", random " << r.value[2] << ", tolerance " << r.law->tol);
      CHECK(r.passed);
    }
  }
}

TEST_CASE("the law registry: distinct names, positive tolerances, deterministic for a seed") {
  std::set<std::string> names;
  for (const LawInfo& law : group_laws()) {
    CHECK(names.insert(law.name).second);
    CHECK(law.tol > 0);
    CHECK_FALSE(law.measure.empty());
    CHECK_FALSE(law.formula.empty());
  }
  CHECK(group_laws().size() >= 10);
  const auto g = make_group("SO(3)xU(2)");
  const std::vector<LawResult> a = check_group_laws(*g, 7), b = check_group_laws(*g, 7);
  for (size_t i = 0; i < a.size(); ++i)
    for (int k = 0; k < 3; ++k) CHECK(a[i].value[k] == b[i].value[k]);
  CHECK(has_o_factor("SU(2)xO(3)"));
  CHECK_FALSE(has_o_factor("SO(3)xSU(2)"));
}
