// `liegrad groupcheck`: runs the Lie-group law registry (groups/group_laws.hpp) for
// every group kind at a few sizes, or for the groups given with --group, and prints one
// line per law with the worst value at each kind of point. The tests run the same
// registry (tests/test_group_laws.cpp).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "groups/group.hpp"
#include "groups/group_laws.hpp"

namespace liegrad::app {

namespace {

using groups::Group;

const std::vector<std::string> kDefaultGroups = {"SO(2)", "SO(3)", "SO(8)", "O(3)", "U(2)", "U(4)",
                                                 "SU(2)", "SU(3)", "T(4)", "SO(3)xSO(2)", "SO(3)xU(2)"};

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
      "Laws (norms are ||M|| = sqrt(Re tr(M* M)); tangent vectors at X are X A, A in g):\n",
      static_cast<long long>(groups::kLawSamples), groups::kLawNear);
  for (const groups::LawInfo& law : groups::group_laws())
    std::printf("  %-34s %s\n", law.name.c_str(), law.formula.c_str());
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
  int wl = 4, wm = 7;  // column widths: the longest law name and measure
  for (const groups::LawInfo& law : groups::group_laws()) {
    wl = std::max(wl, static_cast<int>(law.name.size()));
    wm = std::max(wm, static_cast<int>(law.measure.size()));
  }

  std::printf("Lie-group laws in double precision: worst value over %lld samples per point (seed %llu)\n\n",
              static_cast<long long>(groups::kLawSamples), static_cast<unsigned long long>(seed));
  std::printf("%-12s %3s %3s  %-*s %-*s %8s %8s %8s %6s  %s\n", "group", "n", "m", wl, "law", wm, "measure",
              groups::kLawPointNames[0], groups::kLawPointNames[1], groups::kLawPointNames[2], "tol", "result");
  int failed = 0, ran = 0;
  for (const std::unique_ptr<Group>& g : gs) {
    for (const groups::LawResult& r : groups::check_group_laws(*g, seed)) {
      ++ran;
      if (!r.passed) ++failed;
      std::printf("%-12s %3lld %3lld  %-*s %-*s %8.1e %8.1e %8.1e %6.0e  %s\n", g->name().c_str(),
                  static_cast<long long>(g->n()), static_cast<long long>(g->dim()), wl, r.law->name.c_str(), wm,
                  r.law->measure.c_str(), r.value[0], r.value[1], r.value[2], r.law->tol, r.passed ? "pass" : "FAIL");
    }
    if (groups::has_o_factor(g->name()))
      std::printf("(%s: the random points of the log laws are exp(hat u), u ~ N(0, I): elements with det -1 have "
                  "no real logarithm)\n",
                  g->name().c_str());
    std::printf("\n");
  }
  std::printf("%zu groups, %d laws checked at 3 kinds of points: %d passed, %d failed\n", specs.size(), ran,
              ran - failed, failed);
  return failed ? 1 : 0;
}

}  // namespace liegrad::app
