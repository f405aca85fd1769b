// Buffer: an uninitialised, fixed-size heap array for the intermediates that fused ops
// keep for their backward pass (attention weights, exponentials, gates). Unlike Array
// it does not zero its memory, which is pure cost when every element is written before
// it is read; the ops using it say so where they fill it.
//
// poison_unwritten: in the sanitizer build (LIEGRAD_POISON_UNWRITTEN, set with
// LIEGRAD_SANITIZE in CMakeLists.txt) every uninitialised float or double element
// starts as NaN, so an element an op claims to write but does not reaches the tests'
// comparisons as NaN instead of as whatever the allocator left there.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

namespace liegrad {

template <class T>
inline void poison_unwritten([[maybe_unused]] T* p, [[maybe_unused]] int64_t n) {
#ifdef LIEGRAD_POISON_UNWRITTEN
  if constexpr (std::is_floating_point_v<T>) std::fill(p, p + n, std::numeric_limits<T>::quiet_NaN());
#endif
}

template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(int64_t n) : data_(n > 0 ? new T[static_cast<size_t>(n)] : nullptr), size_(n > 0 ? n : 0) {
    poison_unwritten(data_.get(), size_);
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  std::unique_ptr<T[]> data_;
  int64_t size_ = 0;
};

}  // namespace liegrad
