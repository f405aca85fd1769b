// liegrad.group("SU(3)") and the matrix exponential on numpy arrays (docs/library.md).
//
// Every op takes float32 or float64 arrays and returns the same dtype; leading axes are
// batch axes ((..., n, n) matrices, (..., m) coordinates). Shapes, dtypes and values
// are checked before liegrad sees them, so bad input is a Python exception:
// TypeError (dtype), ValueError (shape, non-finite entries, A not in the algebra, X not
// in the group, a bad group name).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "arrays.hpp"
#include "bindings.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"
#include "groups/group.hpp"

namespace liegrad::py_bind {

namespace {

using namespace pybind11::literals;

// Runs f(T{}) with T the input's scalar type.
template <class F>
py::object dispatch(const FloatArray& a, F&& f) {
  if (a.is_double) return f(double{});
  return f(float{});
}

// Zeros of `shape` in the input's dtype (the result of an op on an empty batch).
py::object zeros(const std::vector<int64_t>& shape, bool is_double) {
  py::module_ np = py::module_::import("numpy");
  py::tuple dims(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) dims[i] = py::int_(shape[i]);
  return np.attr("zeros")(dims, "dtype"_a = is_double ? np.attr("float64") : np.attr("float32"));
}

// The number N of (n, n) matrices in an (..., n, n) array.
int64_t matrix_batch(const FloatArray& a, int64_t n, const std::string& what, const std::string& group) {
  const int64_t d = a.ndim();
  if (d < 2 || a.shape[d - 1] != n || a.shape[d - 2] != n)
    throw py::value_error(what + " must have shape (..., " + std::to_string(n) + ", " + std::to_string(n) + ")" +
                          (group.empty() ? "" : " for " + group) + ", got " + a.shape_str());
  return a.lead_count(d - 2);
}

std::vector<int64_t> lead_shape(const FloatArray& a, int64_t trailing) {
  return std::vector<int64_t>(a.shape.begin(), a.shape.end() - trailing);
}

std::vector<int64_t> with_tail(std::vector<int64_t> s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

// A square (..., n, n) input of any size n (for expm): n, or ValueError.
int64_t square_side(const FloatArray& a, const std::string& what) {
  const int64_t d = a.ndim();
  if (d < 2 || a.shape[d - 1] != a.shape[d - 2] || a.shape[d - 1] < 1)
    throw py::value_error(what + " must be square matrices of shape (..., n, n), got " + a.shape_str());
  return a.shape[d - 1];
}

// exp of a batch of any square matrices; A checked by the caller.
py::object expm_of(const FloatArray& A, int64_t n, int64_t N) {
  if (N == 0) return zeros(A.shape, A.is_double);
  return dispatch(A, [&](auto tag) -> py::object {
    using T = decltype(tag);
    const Array<T> a = to_array<T>(A, Shape{N, n, n});
    Array<T> q(Shape{N, n, n});
    groups::expm_forward<T>(N, n, a.data(), q.data());
    return to_numpy(q, A.shape);
  });
}

// dL/dA = L(A^T, G) for a batch of any square matrices; A, G checked by the caller.
py::object expm_pullback_of(const FloatArray& A, const FloatArray& G, int64_t n, int64_t N) {
  if (N == 0) return zeros(A.shape, A.is_double);
  return dispatch(A, [&](auto tag) -> py::object {
    using T = decltype(tag);
    const Array<T> a = to_array<T>(A, Shape{N, n, n}), g = to_array<T>(G, Shape{N, n, n});
    Array<T> da(Shape{N, n, n});
    groups::expm_pullback<T>(N, n, a.data(), g.data(), da.data());
    return to_numpy(da, A.shape);
  });
}

void check_pullback_args(const FloatArray& A, const FloatArray& G, const std::string& what) {
  same_dtype(A, G, what);
  if (A.shape != G.shape)
    throw py::value_error(what + ": G must have the shape of A, " + A.shape_str() + ", got " + G.shape_str());
  require_finite(A, what + ": A");
  require_finite(G, what + ": G");
}

class PyGroup {
 public:
  explicit PyGroup(const std::string& spec) : g_(groups::make_group(spec)) {}

  std::string name() const { return g_->name(); }
  int64_t n() const { return g_->n(); }
  int64_t dim() const { return g_->dim(); }
  bool is_complex() const { return g_->is_complex(); }
  double real_scale() const { return g_->real_scale(); }
  std::string repr() const {
    return "liegrad.group(\"" + name() + "\")  # stored " + std::to_string(n()) + "x" + std::to_string(n()) +
           (is_complex() ? " real form" : "") + ", algebra dimension " + std::to_string(dim());
  }

  py::object exp(const py::handle& obj) const {
    const FloatArray A = float_array(obj, "exp: A");
    const int64_t N = matrix_batch(A, n(), "exp: A", name());
    require_finite(A, "exp: A");
    if (N == 0) return zeros(A.shape, A.is_double);
    return dispatch(A, [&](auto tag) -> py::object {
      using T = decltype(tag);
      const Array<T> a = to_array<T>(A, Shape{N, n(), n()});
      require_in_algebra(a, A.is_double);
      return to_numpy(g_->exp(a), A.shape);
    });
  }

  py::object exp_pullback(const py::handle& a_obj, const py::handle& g_obj) const {
    const FloatArray A = float_array(a_obj, "exp_pullback: A"), G = float_array(g_obj, "exp_pullback: G");
    const int64_t N = matrix_batch(A, n(), "exp_pullback: A", name());
    check_pullback_args(A, G, "exp_pullback");
    return expm_pullback_of(A, G, n(), N);
  }

  py::object hat(const py::handle& obj) const {
    const FloatArray u = float_array(obj, "hat: u");
    const int64_t d = u.ndim(), m = dim();
    if (d < 1 || u.shape[d - 1] != m)
      throw py::value_error("hat: u must have shape (..., " + std::to_string(m) + ") for " + name() + ", got " +
                            u.shape_str());
    const int64_t N = u.lead_count(d - 1);
    const auto out_shape = with_tail(lead_shape(u, 1), {n(), n()});
    if (N == 0) return zeros(out_shape, u.is_double);
    return dispatch(u, [&](auto tag) -> py::object {
      using T = decltype(tag);
      return to_numpy(g_->hat(to_array<T>(u, Shape{N, m})), out_shape);
    });
  }

  py::object vee(const py::handle& obj) const {
    const FloatArray A = float_array(obj, "vee: A");
    const int64_t N = matrix_batch(A, n(), "vee: A", name());
    const auto out_shape = with_tail(lead_shape(A, 2), {dim()});
    if (N == 0) return zeros(out_shape, A.is_double);
    return dispatch(A, [&](auto tag) -> py::object {
      using T = decltype(tag);
      return to_numpy(g_->vee(to_array<T>(A, Shape{N, n(), n()})), out_shape);
    });
  }

  py::object project(const py::handle& obj) const {
    return matrix_op(obj, "project: X", [&](const auto& x) { return g_->project(x); });
  }

  py::object inverse(const py::handle& obj) const {
    return matrix_op(obj, "inverse: X", [&](const auto& x) { return g_->inverse(x); });
  }

  py::object log(const py::handle& obj) const {
    const FloatArray X = float_array(obj, "log: X");
    require_finite(X, "log: X");
    return matrix_op(obj, "log: X", [&](const auto& x) {
      const double defect = g_->defect(x);
      const double tol = X.is_double ? 1e-8 : 1e-4;
      if (!(defect <= tol))
        throw py::value_error("log: X is not in " + name() + " (defect " + std::to_string(defect) + ")");
      return g_->log(x);
    });
  }

  py::object compose(const py::handle& x_obj, const py::handle& y_obj) const {
    const FloatArray X = float_array(x_obj, "compose: X"), Y = float_array(y_obj, "compose: Y");
    same_dtype(X, Y, "compose");
    const int64_t NX = matrix_batch(X, n(), "compose: X", name()), NY = matrix_batch(Y, n(), "compose: Y", name());
    // Same batch shape, or one side a single (n, n) matrix broadcast over the other.
    const bool x_single = X.ndim() == 2, y_single = Y.ndim() == 2;
    if (!x_single && !y_single && X.shape != Y.shape)
      throw py::value_error("compose: X " + X.shape_str() + " and Y " + Y.shape_str() +
                            " must have the same shape, or one of them be a single (n, n) matrix");
    const FloatArray& big = x_single ? Y : X;
    const int64_t N = x_single ? NY : NX;
    if (N == 0) return zeros(big.shape, big.is_double);
    return dispatch(X, [&](auto tag) -> py::object {
      using T = decltype(tag);
      const Array<T> x = x_single ? to_array<T>(X, Shape{n(), n()}) : to_array<T>(X, Shape{NX, n(), n()});
      const Array<T> y = y_single ? to_array<T>(Y, Shape{n(), n()}) : to_array<T>(Y, Shape{NY, n(), n()});
      return to_numpy(g_->compose(x, y), big.shape);
    });
  }

  py::object inner(const py::handle& h_obj, const py::handle& p_obj) const {
    const FloatArray H = float_array(h_obj, "inner: H"), P = float_array(p_obj, "inner: P");
    same_dtype(H, P, "inner");
    const int64_t N = matrix_batch(H, n(), "inner: H", name());
    matrix_batch(P, n(), "inner: P", name());
    if (H.shape != P.shape)
      throw py::value_error("inner: H " + H.shape_str() + " and P " + P.shape_str() + " must have the same shape");
    const auto out_shape = lead_shape(H, 2);
    if (N == 0) return zeros(out_shape, H.is_double);
    return dispatch(H, [&](auto tag) -> py::object {
      using T = decltype(tag);
      const Array<T> s = g_->inner(to_array<T>(H, Shape{N, n(), n()}), to_array<T>(P, Shape{N, n(), n()}));
      return to_numpy(s, out_shape);
    });
  }

  double defect(const py::handle& obj) const {
    const FloatArray H = float_array(obj, "defect: H");
    const int64_t N = matrix_batch(H, n(), "defect: H", name());
    if (N == 0) return 0.0;
    const Array<double> h = to_array<double>(H, Shape{N, n(), n()});
    return g_->defect(h);
  }

  py::object identity(const py::handle& dtype) const {
    if (dtype_is_double(dtype, "identity")) return to_numpy(g_->identity<double>(), {n(), n()});
    return to_numpy(g_->identity<float>(), {n(), n()});
  }

  py::object sample(const py::object& count, uint64_t seed, const py::handle& dtype) const {
    const bool dbl = dtype_is_double(dtype, "sample");
    Rng rng(seed);
    if (count.is_none()) {
      if (dbl) return to_numpy(g_->sample<double>(rng), {n(), n()});
      return to_numpy(g_->sample<float>(rng), {n(), n()});
    }
    const int64_t N = count.cast<int64_t>();
    if (N < 0) throw py::value_error("sample: count must be >= 0, got " + std::to_string(N));
    if (N == 0) return zeros({0, n(), n()}, dbl);
    if (dbl) return to_numpy(g_->sample<double>(rng, N), {N, n(), n()});
    return to_numpy(g_->sample<float>(rng, N), {N, n(), n()});
  }

 private:
  // f(Array<T> (N,n,n)) -> Array<T> (N,n,n) on an (..., n, n) input.
  template <class F>
  py::object matrix_op(const py::handle& obj, const std::string& what, F&& f) const {
    const FloatArray X = float_array(obj, what);
    const int64_t N = matrix_batch(X, n(), what, name());
    if (N == 0) return zeros(X.shape, X.is_double);
    return dispatch(X, [&](auto tag) -> py::object {
      using T = decltype(tag);
      return to_numpy(f(to_array<T>(X, Shape{N, n(), n()})), X.shape);
    });
  }

  // ValueError unless every A_b is in the algebra: ||A_b - Pi(A_b)|| <= tol max(1, ||A_b||).
  template <class T>
  void require_in_algebra(const Array<T>& a, bool is_double) const {
    const Array<T> p = g_->project(a);
    const int64_t N = a.shape()[0], nn = n() * n();
    const double tol = is_double ? 1e-9 : 1e-5;
    for (int64_t b = 0; b < N; ++b) {
      double off = 0, norm = 0;
      for (int64_t i = b * nn; i < (b + 1) * nn; ++i) {
        off += double(a[i] - p[i]) * double(a[i] - p[i]);
        norm += double(a[i]) * double(a[i]);
      }
      if (std::sqrt(off) > tol * std::max(1.0, std::sqrt(norm)))
        throw py::value_error("exp: A" + (N > 1 ? "[" + std::to_string(b) + "]" : std::string()) +
                              " is not in the Lie algebra of " + name() + " (distance " + std::to_string(std::sqrt(off)) +
                              "); build it with hat(u) or project(X), or use liegrad.expm for any square matrix");
    }
  }

  std::shared_ptr<const groups::Group> g_;
};

}  // namespace

void bind_groups(py::module_& m) {
  py::class_<PyGroup>(m, "Group",
                      "A Lie group G in U(d), stored as real n x n matrices (complex groups in real form).\n"
                      "Make one with liegrad.group(name).")
      .def_property_readonly("name", &PyGroup::name, "canonical name, e.g. 'SU(3)'")
      .def_property_readonly("n", &PyGroup::n, "side of the stored real matrices")
      .def_property_readonly("dim", &PyGroup::dim, "dimension m of the Lie algebra (number of coordinates)")
      .def_property_readonly("is_complex", &PyGroup::is_complex, "stored in complex real form")
      .def_property_readonly("real_scale", &PyGroup::real_scale,
                             "Re tr(Z* W) = real_scale * tr(R^T S) on the stored matrices: 1 or 1/2")
      .def("exp", &PyGroup::exp, "A"_a, "exp: g -> G of (..., n, n) algebra elements (ValueError if A is not in g)")
      .def("exp_pullback", &PyGroup::exp_pullback, "A"_a, "G"_a,
           "The exact pullback of exp: dL/dA = L(A^T, G) for G = dL/dexp(A), shapes (..., n, n)")
      .def("hat", &PyGroup::hat, "u"_a, "coordinates (..., m) -> algebra elements (..., n, n)")
      .def("vee", &PyGroup::vee, "A"_a, "(..., n, n) -> coordinates (..., m) of the projection onto g")
      .def("project", &PyGroup::project, "X"_a, "orthogonal projection onto g, (..., n, n)")
      .def("log", &PyGroup::log, "X"_a, "a logarithm in g of group elements (..., n, n), exp(log X) = X")
      .def("compose", &PyGroup::compose, "X"_a, "Y"_a, "X Y per matrix; either may be one (n, n) matrix")
      .def("inverse", &PyGroup::inverse, "X"_a, "X^-1 = X* per matrix")
      .def("inner", &PyGroup::inner, "H"_a, "P"_a, "Re tr(H* P) per matrix: (..., n, n) x 2 -> (...)")
      .def("defect", &PyGroup::defect, "H"_a, "distance from the group (max over a batch); 0 exactly on G")
      .def("identity", &PyGroup::identity, "dtype"_a = py::dtype::of<double>(), "the identity (n, n)")
      .def("sample", &PyGroup::sample, "count"_a = py::none(), "seed"_a = 0, "dtype"_a = py::dtype::of<double>(),
           "Haar-random element(s): (n, n), or (count, n, n)")
      .def("__repr__", &PyGroup::repr);

  m.def(
      "group", [](const std::string& spec) { return PyGroup(spec); }, "name"_a,
      "The group named e.g. 'SO(3)', 'O(4)', 'U(2)', 'SU(3)', 'T(4)', 'SO(3)xU(1)' (ValueError otherwise)");
  m.def(
      "expm",
      [](const py::handle& obj) {
        const FloatArray A = float_array(obj, "expm: A");
        const int64_t n = square_side(A, "expm: A");
        require_finite(A, "expm: A");
        return expm_of(A, n, A.lead_count(A.ndim() - 2));
      },
      "A"_a, "exp of any square matrices (..., n, n) (scaling and squaring, Taylor)");
  m.def(
      "expm_pullback",
      [](const py::handle& a_obj, const py::handle& g_obj) {
        const FloatArray A = float_array(a_obj, "expm_pullback: A"), G = float_array(g_obj, "expm_pullback: G");
        const int64_t n = square_side(A, "expm_pullback: A");
        check_pullback_args(A, G, "expm_pullback");
        return expm_pullback_of(A, G, n, A.lead_count(A.ndim() - 2));
      },
      "A"_a, "G"_a, "dL/dA = L(A^T, G), the exact pullback of expm, shapes (..., n, n)");
}

}  // namespace liegrad::py_bind
