// `liegrad gradcheck`: runs check_vjp over every registered op (autograd, then the
// group layer) and prints one row per check; exits 1 if any check fails.
#include <cstdio>
#include <string>

#include "apps/commands.hpp"
#include "autograd/gradcheck.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"
#include "groups/group_ops.hpp"
#include "kernels/kernel_checks.hpp"

namespace liegrad::app {

int cmd_gradcheck(const std::vector<std::string>& argv) {
  Args args(argv, {"help", "quiet"}, {"seed", "filter"});
  if (args.help(
          "usage: liegrad gradcheck [--filter SUBSTRING] [--seed N] [--quiet]\n"
          "Compares every op's reverse-mode derivative with central differences in double\n"
          "precision (worst relative error over random cotangents and directions, tolerance 1e-6),\n"
          "then every fused kernel with its unfused reference, forward and backward (tolerance 1e-10).\n"))
    return 0;
  const std::string filter = args.get("filter");
  const uint64_t seed = static_cast<uint64_t>(args.get_int("seed", 1234));
  // Each check draws from its own stream, seeded from --seed and its name (FNV-1a), so
  // its numbers do not depend on which checks run before it: a --filter run repeats
  // them exactly, and adding a check leaves every other check's inputs as they were.
  auto rng_for = [seed](const std::string& name) {
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
    return Rng(seed ^ h);
  };
  // Autograd first, then the group layer: the expm tape op and the group tape ops.
  std::vector<ag::OpCheck> checks = ag::autograd_op_checks();
  const std::vector<ag::OpCheck> expm_checks = groups::expm_op_checks(), group_checks = groups::group_op_checks();
  checks.insert(checks.end(), expm_checks.begin(), expm_checks.end());
  checks.insert(checks.end(), group_checks.begin(), group_checks.end());
  const std::vector<ag::OpCheck> kernel_checks = kernels::kernel_op_checks();
  checks.insert(checks.end(), kernel_checks.begin(), kernel_checks.end());
  int failed = 0, ran = 0;
  std::printf("%-44s %-28s %12s %12s  %s\n", "op", "shapes", "max abs err", "max rel err", "result");
  for (const auto& c : checks) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    Rng rng = rng_for(c.name);
    const ag::VjpResult r = c.run(rng);
    ++ran;
    if (!r.passed) ++failed;
    if (!args.flag("quiet") || !r.passed)
      std::printf("%-44s %-28s %12.3e %12.3e  %s\n", r.name.c_str(), r.shapes.c_str(), r.max_abs_error,
                  r.max_rel_error, r.passed ? "pass" : "FAIL");
  }
  std::printf("%d ops checked: %d passed, %d failed\n", ran, ran - failed, failed);
  // The fused kernels against their unfused references (kernels/reference.hpp).
  int ref_failed = 0, ref_ran = 0;
  std::printf("\n%-56s %-24s %12s %12s  %s\n", "fused kernel == reference", "shapes", "forward err", "backward err",
              "result");
  for (const auto& c : kernels::kernel_reference_checks()) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    Rng rng = rng_for(c.name);
    const ag::EquivalenceResult r = c.run(rng);
    ++ref_ran;
    if (!r.passed) ++ref_failed;
    if (!args.flag("quiet") || !r.passed)
      std::printf("%-56s %-24s %12.3e %12.3e  %s\n", r.name.c_str(), r.shapes.c_str(), r.forward_error,
                  r.backward_error, r.passed ? "pass" : "FAIL");
  }
  std::printf("%d fused kernels compared with their references: %d passed, %d failed\n", ref_ran,
              ref_ran - ref_failed, ref_failed);
  return failed || ref_failed ? 1 : 0;
}

}  // namespace liegrad::app
