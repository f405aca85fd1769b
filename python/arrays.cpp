// numpy <-> liegrad arrays (see arrays.hpp).
#include "arrays.hpp"

#include <algorithm>
#include <cmath>

namespace liegrad::py_bind {

using namespace pybind11::literals;

namespace {
// str(x) of any Python object.
std::string text_of(const py::handle& h) { return py::str(h).cast<std::string>(); }
std::string type_name(const py::handle& obj) { return text_of(py::type::handle_of(obj).attr("__name__")); }
}  // namespace

int64_t FloatArray::lead_count(int64_t axes) const {
  int64_t n = 1;
  for (int64_t i = 0; i < axes; ++i) n *= shape[static_cast<size_t>(i)];
  return n;
}

std::string FloatArray::shape_str() const {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

FloatArray float_array(const py::handle& obj, const std::string& what) {
  py::module_ np = py::module_::import("numpy");
  py::array arr;
  if (py::isinstance<py::array>(obj)) {
    arr = py::reinterpret_borrow<py::array>(obj);
    const py::dtype dt = arr.dtype();
    if (!dt.is(py::dtype::of<float>()) && !dt.is(py::dtype::of<double>()) &&
        !(dt.kind() == 'f' && (dt.itemsize() == 4 || dt.itemsize() == 8)))
      throw py::type_error(what + " has dtype " + text_of(dt) +
                           "; liegrad takes float32 or float64 arrays (convert with .astype(numpy.float64))");
  } else {
    try {
      arr = np.attr("asarray")(obj, "dtype"_a = np.attr("float64"));
    } catch (py::error_already_set&) {
      throw py::type_error(what + ": expected a numpy array of float32 or float64, got " +
                           type_name(obj));
    }
  }
  FloatArray out;
  out.is_double = arr.dtype().itemsize() == 8;
  // A C-contiguous array in native byte order of the same dtype (a copy only when needed).
  out.array = np.attr("ascontiguousarray")(arr, "dtype"_a = out.is_double ? np.attr("float64") : np.attr("float32"));
  for (py::ssize_t i = 0; i < out.array.ndim(); ++i) out.shape.push_back(out.array.shape(i));
  return out;
}

void same_dtype(const FloatArray& a, const FloatArray& b, const std::string& what) {
  if (a.is_double != b.is_double)
    throw py::type_error(what + ": the arrays have different dtypes (" + a.dtype_name() + " and " + b.dtype_name() +
                         "); give both as float32 or both as float64");
}

void require_finite(const FloatArray& a, const std::string& what) {
  const int64_t n = a.lead_count(a.ndim());
  bool ok = true;
  if (a.is_double) {
    const double* p = static_cast<const double*>(a.array.data());
    ok = std::all_of(p, p + n, [](double v) { return std::isfinite(v); });
  } else {
    const float* p = static_cast<const float*>(a.array.data());
    ok = std::all_of(p, p + n, [](float v) { return std::isfinite(v); });
  }
  if (!ok) throw py::value_error(what + " holds NaN or infinite entries");
}

template <class T>
Array<T> to_array(const FloatArray& a, const Shape& shape) {
  Array<T> out(shape);
  if (out.size() != a.lead_count(a.ndim())) throw py::value_error("internal: element counts differ");
  if (a.is_double) {
    const double* p = static_cast<const double*>(a.array.data());
    std::transform(p, p + out.size(), out.data(), [](double v) { return static_cast<T>(v); });
  } else {
    const float* p = static_cast<const float*>(a.array.data());
    std::transform(p, p + out.size(), out.data(), [](float v) { return static_cast<T>(v); });
  }
  return out;
}

template <class T>
py::array_t<T> to_numpy(const Array<T>& a, const std::vector<int64_t>& shape) {
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  py::array_t<T> out(dims);
  if (out.size() != a.size()) throw py::value_error("internal: element counts differ");
  std::copy(a.data(), a.data() + a.size(), out.mutable_data());
  return out;
}

bool dtype_is_double(const py::handle& dtype, const std::string& what) {
  py::dtype dt;
  try {
    dt = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
  } catch (py::error_already_set&) {
    throw py::type_error(what + ": dtype must be numpy.float32 or numpy.float64");
  }
  if (dt.kind() == 'f' && dt.itemsize() == 8) return true;
  if (dt.kind() == 'f' && dt.itemsize() == 4) return false;
  throw py::type_error(what + ": dtype must be numpy.float32 or numpy.float64, got " + text_of(dt));
}

std::string text_bytes(const py::handle& obj, const std::string& what) {
  if (py::isinstance<py::bytes>(obj)) return obj.cast<std::string>();
  if (py::isinstance<py::str>(obj)) return py::reinterpret_borrow<py::str>(obj).attr("encode")("utf-8").cast<std::string>();
  throw py::type_error(what + " must be str or bytes, got " +
                       type_name(obj));
}

template Array<float> to_array(const FloatArray&, const Shape&);
template Array<double> to_array(const FloatArray&, const Shape&);
template py::array_t<float> to_numpy(const Array<float>&, const std::vector<int64_t>&);
template py::array_t<double> to_numpy(const Array<double>&, const std::vector<int64_t>&);

}  // namespace liegrad::py_bind
