// Shape bookkeeping and the non-inline members of Array (instantiated for float
// and double).
#include "core/array.hpp"

#include <cmath>
#include <sstream>

namespace liegrad {

namespace {

// The element count of dims must fit in int64_t with room for byte counts (a hostile
// checkpoint can ask for (1e9, 1e9, 1e9)): ShapeError otherwise.
void check_numel(const Shape& s) {
  int64_t n = 1;
  for (int i = 0; i < s.ndim; ++i)
    if (__builtin_mul_overflow(n, s.dims[static_cast<size_t>(i)], &n) || n > (INT64_MAX >> 4))
      throw ShapeError("Shape: " + s.str() + " has too many elements");
}

}  // namespace

Shape::Shape(std::initializer_list<int64_t> d) {
  if (d.size() > 3) throw ShapeError("Shape: at most 3 dimensions, got " + std::to_string(d.size()));
  ndim = static_cast<int>(d.size());
  int i = 0;
  for (int64_t v : d) {
    if (v < 0) throw ShapeError("Shape: negative dimension " + std::to_string(v));
    dims[static_cast<size_t>(i++)] = v;
  }
  check_numel(*this);
}

Shape Shape::of(const std::vector<int64_t>& d) {
  if (d.size() > 3) throw ShapeError("Shape: at most 3 dimensions, got " + std::to_string(d.size()));
  Shape s;
  s.ndim = static_cast<int>(d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] < 0) throw ShapeError("Shape: negative dimension " + std::to_string(d[i]));
    s.dims[i] = d[i];
  }
  check_numel(s);
  return s;
}

int64_t Shape::size(int axis) const {
  int a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    throw ShapeError("Shape::size: axis " + std::to_string(axis) + " out of range for " + str());
  return dims[static_cast<size_t>(a)];
}

std::vector<int64_t> Shape::vec() const { return std::vector<int64_t>(dims.begin(), dims.begin() + ndim); }

std::string Shape::str() const {
  std::ostringstream os;
  os << "(";
  for (int i = 0; i < ndim; ++i) os << (i ? "," : "") << dims[static_cast<size_t>(i)];
  os << ")";
  return os.str();
}

bool Shape::operator==(const Shape& o) const {
  if (ndim != o.ndim) return false;
  for (int i = 0; i < ndim; ++i)
    if (dims[static_cast<size_t>(i)] != o.dims[static_cast<size_t>(i)]) return false;
  return true;
}

template <class T>
Array<T>::Array(const Shape& shape, std::vector<T> values) : shape_(shape), data_(values.begin(), values.end()) {
  AllocationLimit::charge(size());
  if (static_cast<int64_t>(data_.size()) != shape.numel())
    throw ShapeError("Array: shape " + shape.str() + " needs " + std::to_string(shape.numel()) +
                     " values, got " + std::to_string(data_.size()));
}

template <class T>
Array<T> Array<T>::eye(int64_t n) {
  Array a(Shape{n, n});
  for (int64_t i = 0; i < n; ++i) a.at(i, i) = T(1);
  return a;
}

template <class T>
T Array<T>::item() const {
  if (data_.size() != 1) throw ShapeError("Array::item: expected one element, shape is " + shape_.str());
  return data_[0];
}

template <class T>
Array<T> Array<T>::reshaped(const Shape& s) const {
  Array out = *this;
  out.reshape_inplace(s);
  return out;
}

template <class T>
void Array<T>::reshape_inplace(const Shape& s) {
  if (s.numel() != shape_.numel())
    throw ShapeError("reshape: cannot view " + shape_.str() + " as " + s.str() + " (element counts differ)");
  shape_ = s;
}

template <class T>
void Array<T>::fill(T v) {
  std::fill(data_.begin(), data_.end(), v);
}

void require_same_shape(const char* op, const Shape& a, const Shape& b) {
  if (a != b) throw ShapeError(std::string(op) + ": shapes must match, got " + a.str() + " and " + b.str());
}

void require_ndim(const char* op, const Shape& s, int lo, int hi) {
  if (s.ndim < lo || s.ndim > hi)
    throw ShapeError(std::string(op) + ": expected " + std::to_string(lo) +
                     (lo == hi ? "" : ".." + std::to_string(hi)) + " dimensions, got " + s.str());
}

template <class T>
double max_abs_diff(const Array<T>& a, const Array<T>& b) {
  require_same_shape("max_abs_diff", a.shape(), b.shape());
  double m = 0;
  for (int64_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - double(b[i])));
  return m;
}

template <class T>
double frobenius_norm(const Array<T>& a) {
  double s = 0;
  for (int64_t i = 0; i < a.size(); ++i) s += double(a[i]) * double(a[i]);
  return std::sqrt(s);
}

template class Array<float>;
template class Array<double>;
template double max_abs_diff(const Array<float>&, const Array<float>&);
template double max_abs_diff(const Array<double>&, const Array<double>&);
template double frobenius_norm(const Array<float>&);
template double frobenius_norm(const Array<double>&);

}  // namespace liegrad
