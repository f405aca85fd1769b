// Kernels and tape wrappers for element-wise ops. Each op is a forward kernel, a
// backward kernel that accumulates (+=) into input gradients, and a short wrapper.
// Loops over elements run in parallel with OpenMP above kElementGrain elements.
#include "autograd/elementwise.hpp"

#include <cmath>

#include "autograd/tape.hpp"
#include "core/parallel.hpp"

namespace liegrad::ag {

namespace {

constexpr int64_t kElementGrain = kMinParallelWork;

enum class Bcast { Same, Scalar, Row };

Bcast broadcast_kind(const char* op, const Shape& a, const Shape& b) {
  if (a == b) return Bcast::Same;
  if (b.numel() == 1) return Bcast::Scalar;
  const bool row_shaped = b.ndim == 1 || (b.ndim == 2 && b[0] == 1);
  if (row_shaped && a.ndim >= 1 && b.numel() == a.cols()) return Bcast::Row;
  throw ShapeError(std::string(op) + ": cannot broadcast " + b.str() + " to " + a.str() +
                   " (the second operand must match, be a scalar, or be a row of " + std::to_string(a.cols()) +
                   ")");
}

// Runs body(i, j) for every element i of a (n elements, rows of `cols`) with j the
// element of b it meets: i itself, 0, or i's column. Row broadcasts loop over rows and
// columns, so no index is divided; the order is i = 0, 1, ... within each thread, and
// serially (parallel = false) the order of a plain loop over i.
template <class Body>
void for_each_pair(Bcast k, int64_t n, int64_t cols, bool parallel, Body&& body) {
  if (n == 0) return;  // (and a row broadcast over zero columns has no rows to divide)
  const int64_t grain = parallel ? kElementGrain : n + 1;
  switch (k) {
    case Bcast::Same: parallel_for(n, grain, [&](int64_t i) { body(i, i); }); break;
    case Bcast::Scalar: parallel_for(n, grain, [&](int64_t i) { body(i, int64_t(0)); }); break;
    case Bcast::Row:
      parallel_for(n / cols, parallel ? grain_for(cols) : n + 1, [&](int64_t r) {
        for (int64_t c = 0; c < cols; ++c) body(r * cols + c, c);
      });
      break;
  }
}

// out[i] = f(a[i], b[j(i)])
template <class T, class F>
Array<T> binary_forward(const char* op, const Array<T>& a, const Array<T>& b, F f) {
  const Bcast k = broadcast_kind(op, a.shape(), b.shape());
  Array<T> out = Array<T>::uninitialized(a.shape());  // every element written below
  const int64_t n = a.size(), cols = a.shape().cols();
  const T* pa = a.data();
  const T* pb = b.data();
  T* po = out.data();
  for_each_pair(k, n, cols, true, [&](int64_t i, int64_t j) { po[i] = f(pa[i], pb[j]); });
  return out;
}

// da[i] += ga(g, a, b); db[j(i)] += gb(g, a, b) (reduced serially over broadcast rows).
template <class T, class GA, class GB>
void binary_backward(const Array<T>& g, const Var<T>& a, const Var<T>& b, GA ga, GB gb) {
  const Bcast k = broadcast_kind("backward", a.shape(), b.shape());
  const int64_t n = g.size(), cols = a.shape().cols();
  const T* pa = a.value().data();
  const T* pb = b.value().data();
  const T* pg = g.data();
  if (a.requires_grad()) {
    // When b is a too, a's pass assigns a fresh gradient and b's pass then adds to it.
    bool fresh = false;
    T* da = a.node()->grad_for_write(&fresh).data();
    if (fresh)
      for_each_pair(k, n, cols, true, [&](int64_t i, int64_t j) { da[i] = ga(pg[i], pa[i], pb[j]); });
    else
      for_each_pair(k, n, cols, true, [&](int64_t i, int64_t j) { da[i] += ga(pg[i], pa[i], pb[j]); });
  }
  if (b.requires_grad()) {
    if (k == Bcast::Same) {
      bool fresh = false;
      T* db = b.node()->grad_for_write(&fresh).data();
      store_grad(db, fresh, n, [&](int64_t i) { return gb(pg[i], pa[i], pb[i]); });
    } else {
      T* db = b.node()->grad_ref().data();
      // Accumulate in double for a stable sum over many rows.
      const int64_t width = k == Bcast::Scalar ? 1 : cols;
      std::vector<double> acc(static_cast<size_t>(width), 0.0);
      for_each_pair(k, n, cols, false,
                    [&](int64_t i, int64_t j) { acc[static_cast<size_t>(j)] += gb(pg[i], pa[i], pb[j]); });
      for (int64_t j = 0; j < width; ++j) db[j] += static_cast<T>(acc[static_cast<size_t>(j)]);
    }
  }
}

template <class T, class F>
Array<T> unary_forward(const Array<T>& x, F f) {
  Array<T> out = Array<T>::uninitialized(x.shape());  // every element written below
  const T* px = x.data();
  T* po = out.data();
  parallel_for(x.size(), kElementGrain, [&](int64_t i) { po[i] = f(px[i]); });
  return out;
}

// dx[i] += d(g, x, y) where y = f(x) is the saved output.
template <class T, class D>
void unary_backward(const Array<T>& g, const Var<T>& x, const Array<T>& y, D d) {
  bool fresh = false;  // no gradient yet: assign
  T* dx = x.node()->grad_for_write(&fresh).data();
  const T* px = x.value().data();
  const T* py = y.data();
  const T* pg = g.data();
  store_grad(dx, fresh, g.size(), [&](int64_t i) { return d(pg[i], px[i], py[i]); });
}

// Records a unary op whose backward needs x, y = f(x) and g.
template <class T, class F, class D>
Var<T> unary_op(const Var<T>& x, F f, D d) {
  Array<T> y = unary_forward(x.value(), f);
  auto saved = std::make_shared<Array<T>>();
  if (x.requires_grad() && grad_enabled()) *saved = y;
  return record_op<T>(std::move(y), {&x}, [x, saved, d](const Array<T>& g) { unary_backward(g, x, *saved, d); });
}

}  // namespace

template <class T>
Var<T> add(const Var<T>& a, const Var<T>& b) {
  auto f = [](T x, T y) { return x + y; };
  return record_op<T>(binary_forward("add", a.value(), b.value(), f), {&a, &b}, [a, b](const Array<T>& g) {
    binary_backward(g, a, b, [](T gg, T, T) { return gg; }, [](T gg, T, T) { return gg; });
  });
}

template <class T>
Var<T> sub(const Var<T>& a, const Var<T>& b) {
  auto f = [](T x, T y) { return x - y; };
  return record_op<T>(binary_forward("sub", a.value(), b.value(), f), {&a, &b}, [a, b](const Array<T>& g) {
    binary_backward(g, a, b, [](T gg, T, T) { return gg; }, [](T gg, T, T) { return -gg; });
  });
}

template <class T>
Var<T> mul(const Var<T>& a, const Var<T>& b) {
  auto f = [](T x, T y) { return x * y; };
  return record_op<T>(binary_forward("mul", a.value(), b.value(), f), {&a, &b}, [a, b](const Array<T>& g) {
    binary_backward(g, a, b, [](T gg, T, T y) { return gg * y; }, [](T gg, T x, T) { return gg * x; });
  });
}

template <class T>
Var<T> div(const Var<T>& a, const Var<T>& b) {
  auto f = [](T x, T y) { return x / y; };
  return record_op<T>(binary_forward("div", a.value(), b.value(), f), {&a, &b}, [a, b](const Array<T>& g) {
    binary_backward(g, a, b, [](T gg, T, T y) { return gg / y; },
                    [](T gg, T x, T y) { return -gg * x / (y * y); });
  });
}

template <class T>
Var<T> neg(const Var<T>& x) {
  return scale(x, T(-1));
}

template <class T>
Var<T> scale(const Var<T>& x, T c) {
  return record_op<T>(unary_forward(x.value(), [c](T v) { return c * v; }), {&x}, [x, c](const Array<T>& g) {
    unary_backward(g, x, g, [c](T gg, T, T) { return c * gg; });
  });
}

template <class T>
Var<T> add_const(const Var<T>& x, T c) {
  return record_op<T>(unary_forward(x.value(), [c](T v) { return v + c; }), {&x}, [x](const Array<T>& g) {
    unary_backward(g, x, g, [](T gg, T, T) { return gg; });
  });
}

template <class T>
Var<T> exp(const Var<T>& x) {
  return unary_op(x, [](T v) { return std::exp(v); }, [](T g, T, T y) { return g * y; });
}

template <class T>
Var<T> log(const Var<T>& x) {
  return unary_op(x, [](T v) { return std::log(v); }, [](T g, T v, T) { return g / v; });
}

template <class T>
Var<T> tanh(const Var<T>& x) {
  return unary_op(x, [](T v) { return std::tanh(v); }, [](T g, T, T y) { return g * (T(1) - y * y); });
}

template <class T>
Var<T> sigmoid(const Var<T>& x) {
  return unary_op(
      x, [](T v) { return T(1) / (T(1) + std::exp(-v)); }, [](T g, T, T y) { return g * y * (T(1) - y); });
}

template <class T>
Var<T> relu(const Var<T>& x) {
  return unary_op(x, [](T v) { return v > T(0) ? v : T(0); }, [](T g, T v, T) { return v > T(0) ? g : T(0); });
}

template <class T>
Var<T> gelu(const Var<T>& x) {
  // gelu(x) = x * Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2; gelu'(x) = Phi(x) + x * phi(x).
  const T inv_sqrt2 = T(0.70710678118654752440);
  const T inv_sqrt_2pi = T(0.39894228040143267794);
  return unary_op(
      x, [=](T v) { return v * T(0.5) * (T(1) + std::erf(v * inv_sqrt2)); },
      [=](T g, T v, T) {
        const T cdf = T(0.5) * (T(1) + std::erf(v * inv_sqrt2));
        const T pdf = inv_sqrt_2pi * std::exp(T(-0.5) * v * v);
        return g * (cdf + v * pdf);
      });
}

template <class T>
Var<T> square(const Var<T>& x) {
  return unary_op(x, [](T v) { return v * v; }, [](T g, T v, T) { return T(2) * g * v; });
}

#define LIEGRAD_INSTANTIATE(T)                                \
  template Var<T> add(const Var<T>&, const Var<T>&);          \
  template Var<T> sub(const Var<T>&, const Var<T>&);          \
  template Var<T> mul(const Var<T>&, const Var<T>&);          \
  template Var<T> div(const Var<T>&, const Var<T>&);          \
  template Var<T> neg(const Var<T>&);                         \
  template Var<T> scale(const Var<T>&, T);                    \
  template Var<T> add_const(const Var<T>&, T);                \
  template Var<T> exp(const Var<T>&);                         \
  template Var<T> log(const Var<T>&);                         \
  template Var<T> tanh(const Var<T>&);                        \
  template Var<T> sigmoid(const Var<T>&);                     \
  template Var<T> relu(const Var<T>&);                        \
  template Var<T> gelu(const Var<T>&);                        \
  template Var<T> square(const Var<T>&);
LIEGRAD_INSTANTIATE(float)
LIEGRAD_INSTANTIATE(double)
#undef LIEGRAD_INSTANTIATE

}  // namespace liegrad::ag
