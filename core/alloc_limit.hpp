// AllocationLimit: a scoped cap on the array elements this thread allocates, for
// building something whose size comes from a user's file (a model from a config or a
// checkpoint), so that an absurd size ends in a ValueError naming the limit instead of
// std::bad_alloc or an exhausted machine. While a limit is in scope every new Array
// (core/array.hpp) charges its element count to it, and to every enclosing limit; the
// first charge that goes over throws ValueError("<what>: needs more than N array
// elements") of the tightest limit it exceeds, and charges nothing. Copies of existing
// arrays are not charged. Limits nest and are per thread: OpenMP workers are never
// charged.
#pragma once
#include <cstdint>
#include <string>

namespace liegrad {

class AllocationLimit {
 public:
  // what: who is building and what the limit is for, e.g. "model: the configuration is too large".
  AllocationLimit(int64_t max_elements, std::string what);
  ~AllocationLimit();
  AllocationLimit(const AllocationLimit&) = delete;
  AllocationLimit& operator=(const AllocationLimit&) = delete;

  // Charges n elements to the limits in scope (a no-op when there are none).
  static void charge(int64_t n) {
    if (innermost() != nullptr) charge_slow(n);
  }

 private:
  static AllocationLimit*& innermost();
  static void charge_slow(int64_t n);
  int64_t max_, used_ = 0;
  std::string what_;
  AllocationLimit* outer_;
};

}  // namespace liegrad
