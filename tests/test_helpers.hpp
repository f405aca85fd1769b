// Small utilities shared by the test files.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "autograd/gradcheck.hpp"

namespace liegrad::test {

// Asserts a check_vjp result, printing op, shapes and the worst errors on failure.
inline void require_vjp(const ag::VjpResult& r) {
  INFO("op " << r.name << " at " << r.shapes << ": worst abs error " << r.max_abs_error << ", worst rel error "
             << r.max_rel_error);
  CHECK(r.passed);
}

}  // namespace liegrad::test
