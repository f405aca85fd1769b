// Dense row-major arrays of up to three dimensions, templated on the scalar
// (float for training, double for gradient checks). A 3-D array (N, r, c) is a
// batch of N matrices of r x c, stored one after another.
//
// Array owns its storage (value semantics: copies are deep). Handles that alias
// live one level up, in autograd::Var.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/alloc_limit.hpp"
#include "core/buffer.hpp"
#include "core/errors.hpp"

namespace liegrad {

// std::allocator whose no-argument construct default-initialises: a vector<T, ...> of n
// scalars made without a fill value is left unwritten (Array::uninitialized); a fill
// value (Array's zeros) is still written.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// A shape of 0 to 3 dimensions; a 0-D shape is a scalar with one element.
struct Shape {
  int ndim = 0;
  std::array<int64_t, 3> dims{1, 1, 1};

  Shape() = default;
  Shape(std::initializer_list<int64_t> d);
  static Shape of(const std::vector<int64_t>& d);

  int64_t operator[](int i) const { return dims[static_cast<size_t>(i)]; }
  int64_t numel() const { return dims[0] * dims[1] * dims[2]; }
  // Size of axis i counted from the end when negative (-1 is the last axis).
  int64_t size(int axis) const;
  // Rows and columns of the trailing matrix; a 1-D shape (n) is one row of n.
  int64_t rows() const { return ndim >= 2 ? dims[ndim - 2] : 1; }
  int64_t cols() const { return ndim >= 1 ? dims[ndim - 1] : 1; }
  // Number of matrices: the leading axis of a 3-D shape, else 1.
  int64_t batch() const { return ndim == 3 ? dims[0] : 1; }
  std::vector<int64_t> vec() const;
  std::string str() const;  // "(2,3,4)"
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
};

template <class T>
class Array {
 public:
  Array() = default;
  explicit Array(const Shape& shape) : shape_(shape), data_(charged(shape), T(0)) {}
  Array(const Shape& shape, T fill) : shape_(shape), data_(charged(shape), fill) {}
  Array(const Shape& shape, std::vector<T> values);

  static Array zeros(const Shape& s) { return Array(s); }
  // Storage the caller writes in full before anything reads it (an op's output that its
  // kernel overwrites): no zero fill. NaN in the sanitizer build (core/buffer.hpp).
  static Array uninitialized(const Shape& s) {
    Array a;
    a.shape_ = s;
    a.data_ = Storage(charged(s));
    poison_unwritten(a.data_.data(), a.size());
    return a;
  }
  static Array scalar(T v) { return Array(Shape{}, v); }
  static Array eye(int64_t n);

  const Shape& shape() const { return shape_; }
  int ndim() const { return shape_.ndim; }
  int64_t size() const { return static_cast<int64_t>(data_.size()); }
  bool empty() const { return data_.empty(); }

  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  const T* begin() const { return data_.data(); }
  const T* end() const { return data_.data() + data_.size(); }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  T& operator[](int64_t i) { return data_[static_cast<size_t>(i)]; }
  const T& operator[](int64_t i) const { return data_[static_cast<size_t>(i)]; }
  // Indexing by axis; the caller gives as many indices as the array has axes.
  T& at(int64_t i, int64_t j) { return data_[static_cast<size_t>(i * shape_.cols() + j)]; }
  const T& at(int64_t i, int64_t j) const { return data_[static_cast<size_t>(i * shape_.cols() + j)]; }
  T& at(int64_t b, int64_t i, int64_t j) {
    return data_[static_cast<size_t>((b * shape_.rows() + i) * shape_.cols() + j)];
  }
  const T& at(int64_t b, int64_t i, int64_t j) const {
    return data_[static_cast<size_t>((b * shape_.rows() + i) * shape_.cols() + j)];
  }
  T item() const;  // the only element of a one-element array

  // Same data under another shape of equal element count (a copy).
  Array reshaped(const Shape& s) const;
  void reshape_inplace(const Shape& s);
  void fill(T v);
  // Converts element-wise to another scalar type.
  template <class U>
  Array<U> cast() const {
    Array<U> out(shape_);
    for (int64_t i = 0; i < size(); ++i) out[i] = static_cast<U>(data_[static_cast<size_t>(i)]);
    return out;
  }

 private:
  Shape shape_;
  // The element count of a new array, charged to the AllocationLimit in scope.
  static size_t charged(const Shape& s) {
    AllocationLimit::charge(s.numel());
    return static_cast<size_t>(s.numel());
  }
  using Storage = std::vector<T, DefaultInitAllocator<T>>;
  Storage data_;
};

// Throws ShapeError "op: expected a == b, got (..) and (..)" when shapes differ.
void require_same_shape(const char* op, const Shape& a, const Shape& b);
// Throws ShapeError when ndim is not among the allowed counts.
void require_ndim(const char* op, const Shape& s, int lo, int hi);

// Max |a-b| over elements (shapes must match); useful in tests and tools.
template <class T>
double max_abs_diff(const Array<T>& a, const Array<T>& b);
template <class T>
double frobenius_norm(const Array<T>& a);

}  // namespace liegrad
