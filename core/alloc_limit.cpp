// AllocationLimit (see alloc_limit.hpp).
#include "core/alloc_limit.hpp"

#include "core/errors.hpp"

namespace liegrad {

AllocationLimit*& AllocationLimit::innermost() {
  static thread_local AllocationLimit* top = nullptr;
  return top;
}

AllocationLimit::AllocationLimit(int64_t max_elements, std::string what)
    : max_(max_elements), what_(std::move(what)), outer_(innermost()) {
  innermost() = this;
}

AllocationLimit::~AllocationLimit() { innermost() = outer_; }

void AllocationLimit::charge_slow(int64_t n) {
  // The tightest limit that n exceeds speaks (the one with the least room left).
  const AllocationLimit* over = nullptr;
  for (const AllocationLimit* l = innermost(); l != nullptr; l = l->outer_)
    if (n > l->max_ - l->used_ && (over == nullptr || l->max_ - l->used_ < over->max_ - over->used_)) over = l;
  if (over != nullptr)
    throw ValueError(over->what_ + ": needs more than " + std::to_string(over->max_) + " array elements");
  for (AllocationLimit* l = innermost(); l != nullptr; l = l->outer_) l->used_ += n;
}

}  // namespace liegrad
