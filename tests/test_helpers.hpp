// Small utilities shared by the test files.
#pragma once
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "autograd/gradcheck.hpp"

// Ends the running test case as skipped (a missing interpreter, package or data set):
// it prints a line CTest recognises (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt),
// so the case is reported as skipped, never as passed, and scripts/test.sh --no-skips
// (CI) fails. Use only before the case has checked anything.
#define LIEGRAD_SKIP_TEST(reason)                  \
  do {                                             \
    MESSAGE("LIEGRAD-TEST-SKIPPED: " << reason);   \
    return;                                        \
  } while (0)

namespace liegrad::test {

// Asserts a check_vjp result, printing op, shapes and the worst errors on failure.
inline void require_vjp(const ag::VjpResult& r) {
  INFO("op " << r.name << " at " << r.shapes << ": worst abs error " << r.max_abs_error << ", worst rel error "
             << r.max_rel_error);
  CHECK(r.passed);
}

// The groups the group tests run over: every kind at d in {1, 2, 3, 8, 16}, and products.
inline std::vector<std::string> group_specs() {
  std::vector<std::string> s;
  for (int d : {1, 2, 3, 8, 16})
    for (const char* k : {"SO", "O", "U", "SU", "T"}) s.push_back(std::string(k) + "(" + std::to_string(d) + ")");
  for (const char* p : {"SO(8)xSO(8)", "SO(3)xU(2)", "SO(2)xSO(3)xT(2)", "SU(2)xO(3)", "U(1)xSO(1)"}) s.push_back(p);
  return s;
}

}  // namespace liegrad::test
