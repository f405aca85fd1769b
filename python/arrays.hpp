// numpy <-> liegrad arrays for the Python module: dtype and shape checks with Python
// exceptions (TypeError for a dtype, ValueError for a shape or a value), and copies
// between C-contiguous numpy arrays and liegrad::Array<T>.
//
// Inputs: a numpy array must be float32 or float64 (other dtypes are a TypeError, never
// a silent conversion); anything else (lists, scalars) is converted with
// numpy.asarray(x, dtype=float64). Leading axes are batch axes: a group op on
// (..., n, n) runs on the (N, n, n) batch of their product N and reshapes back.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/array.hpp"

namespace liegrad::py_bind {

namespace py = pybind11;

// A float input: the array (C-contiguous, float32 or float64) and its shape.
struct FloatArray {
  py::array array;
  bool is_double = false;
  std::vector<int64_t> shape;
  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  // The product of the first `axes` sizes.
  int64_t lead_count(int64_t axes) const;
  std::string shape_str() const;
  std::string dtype_name() const { return is_double ? "float64" : "float32"; }
};

// Checks and converts `obj` (named `what` in messages, e.g. "exp: A").
FloatArray float_array(const py::handle& obj, const std::string& what);
// Throws TypeError when the arrays' dtypes differ.
void same_dtype(const FloatArray& a, const FloatArray& b, const std::string& what);
// Throws ValueError when an entry is NaN or infinite.
void require_finite(const FloatArray& a, const std::string& what);

// Copy of a's values as an Array<T> of the given shape (same element count).
template <class T>
Array<T> to_array(const FloatArray& a, const Shape& shape);
// A new numpy array of `shape` holding a's values (same element count).
template <class T>
py::array_t<T> to_numpy(const Array<T>& a, const std::vector<int64_t>& shape);

// numpy.float32 or numpy.float64 from a dtype argument (a dtype, a type or a name);
// true for float64. Anything else is a TypeError.
bool dtype_is_double(const py::handle& dtype, const std::string& what);

// Bytes of a text argument: str is encoded as UTF-8, bytes are taken as they are.
std::string text_bytes(const py::handle& obj, const std::string& what);

}  // namespace liegrad::py_bind
