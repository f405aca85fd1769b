// sum / mean kernels. Full reductions accumulate in double so a float sum over a
// million elements keeps its precision; the gradient broadcasts back.
#include "autograd/reduce.hpp"

#include "autograd/tape.hpp"

namespace liegrad::ag {

namespace {

template <class T>
Var<T> reduce_all(const Var<T>& x, double factor) {
  double s = 0;
  const T* p = x.value().data();
  for (int64_t i = 0; i < x.size(); ++i) s += p[i];
  return record_op<T>(Array<T>::scalar(static_cast<T>(s * factor)), {&x}, [x, factor](const Array<T>& g) {
    Array<T>& dx = x.node()->grad_ref();
    const T gv = static_cast<T>(g[0] * factor);
    for (int64_t i = 0; i < dx.size(); ++i) dx[i] += gv;
  });
}

template <class T>
Var<T> reduce_axis(const char* op, const Var<T>& x, int axis, bool average) {
  const Shape& s = x.shape();
  const int a = axis < 0 ? axis + s.ndim : axis;
  if (a < 0 || a >= s.ndim)
    throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) + " out of range for shape " + s.str());
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < a; ++i) outer *= s[i];
  for (int i = a + 1; i < s.ndim; ++i) inner *= s[i];
  const int64_t len = s[a];
  const T factor = average ? T(1) / static_cast<T>(len) : T(1);
  std::vector<int64_t> dims = s.vec();
  dims.erase(dims.begin() + a);
  Array<T> out(Shape::of(dims));
  const T* px = x.value().data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < len; ++k)
      for (int64_t i = 0; i < inner; ++i) out[o * inner + i] += px[(o * len + k) * inner + i];
  for (int64_t i = 0; i < out.size(); ++i) out[i] *= factor;
  return record_op<T>(std::move(out), {&x}, [x, outer, inner, len, factor](const Array<T>& g) {
    T* dx = x.node()->grad_ref().data();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < len; ++k)
        for (int64_t i = 0; i < inner; ++i) dx[(o * len + k) * inner + i] += factor * g[o * inner + i];
  });
}

}  // namespace

template <class T>
Var<T> sum(const Var<T>& x) {
  return reduce_all(x, 1.0);
}
template <class T>
Var<T> mean(const Var<T>& x) {
  if (x.size() == 0) throw ShapeError("mean: empty input " + x.shape().str());
  return reduce_all(x, 1.0 / static_cast<double>(x.size()));
}
template <class T>
Var<T> sum(const Var<T>& x, int axis) {
  return reduce_axis("sum", x, axis, false);
}
template <class T>
Var<T> mean(const Var<T>& x, int axis) {
  return reduce_axis("mean", x, axis, true);
}

#define LIEGRAD_INSTANTIATE(T)                  \
  template Var<T> sum(const Var<T>&);           \
  template Var<T> mean(const Var<T>&);          \
  template Var<T> sum(const Var<T>&, int);      \
  template Var<T> mean(const Var<T>&, int);
LIEGRAD_INSTANTIATE(float)
LIEGRAD_INSTANTIATE(double)
#undef LIEGRAD_INSTANTIATE

}  // namespace liegrad::ag
