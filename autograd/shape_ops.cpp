// reshape, slice and concat. A 3-D view (outer, axis, inner) of any shape around
// one axis lets slice and concat share a single strided copy kernel.
#include "autograd/shape_ops.hpp"

#include <algorithm>

#include "autograd/tape.hpp"

namespace liegrad::ag {

namespace {

int normalize_axis(const char* op, int axis, const Shape& s) {
  const int a = axis < 0 ? axis + s.ndim : axis;
  if (a < 0 || a >= s.ndim)
    throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) + " out of range for shape " + s.str());
  return a;
}

// Sizes before and after `axis`.
void outer_inner(const Shape& s, int axis, int64_t& outer, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (int i = axis + 1; i < s.ndim; ++i) inner *= s[i];
}

// dst[o, dst_off + k, :] (+)= src[o, src_off + k, :] for k < count.
template <class T>
void copy_block(T* dst, int64_t dst_len, int64_t dst_off, const T* src, int64_t src_len, int64_t src_off,
                int64_t count, int64_t outer, int64_t inner, bool accumulate) {
  for (int64_t o = 0; o < outer; ++o) {
    T* d = dst + (o * dst_len + dst_off) * inner;
    const T* s = src + (o * src_len + src_off) * inner;
    const int64_t n = count * inner;
    if (accumulate)
      for (int64_t i = 0; i < n; ++i) d[i] += s[i];
    else
      std::copy(s, s + n, d);
  }
}

}  // namespace

template <class T>
Var<T> reshape(const Var<T>& x, const Shape& shape) {
  Array<T> out = x.value().reshaped(shape);
  return record_op<T>(std::move(out), {&x}, [x](const Array<T>& g) {
    bool fresh = false;  // the first gradient is copied, not added to zeros
    T* dx = x.node()->grad_for_write(&fresh).data();
    const T* pg = g.data();
    store_grad(dx, fresh, g.size(), [pg](int64_t i) { return pg[i]; });
  });
}

template <class T>
Var<T> slice(const Var<T>& x, int axis, int64_t start, int64_t end) {
  const Shape& s = x.shape();
  const int a = normalize_axis("slice", axis, s);
  if (start < 0 || end > s[a] || start > end)
    throw ShapeError("slice: range [" + std::to_string(start) + ", " + std::to_string(end) + ") out of bounds for axis " +
                     std::to_string(axis) + " of shape " + s.str());
  int64_t outer, inner;
  outer_inner(s, a, outer, inner);
  std::vector<int64_t> dims = s.vec();
  dims[static_cast<size_t>(a)] = end - start;
  Array<T> out(Shape::of(dims));
  copy_block(out.data(), end - start, 0, x.value().data(), s[a], start, end - start, outer, inner, false);
  return record_op<T>(std::move(out), {&x}, [x, a, start, end, outer, inner](const Array<T>& g) {
    copy_block(x.node()->grad_ref().data(), x.shape()[a], start, g.data(), end - start, 0, end - start, outer, inner,
               true);
  });
}

template <class T>
Var<T> concat(const std::vector<Var<T>>& xs, int axis) {
  if (xs.empty()) throw ShapeError("concat: needs at least one input");
  const Shape& s0 = xs[0].shape();
  const int a = normalize_axis("concat", axis, s0);
  int64_t total = 0;
  for (const auto& x : xs) {
    const Shape& s = x.shape();
    bool ok = s.ndim == s0.ndim;
    for (int i = 0; ok && i < s0.ndim; ++i) ok = i == a || s[i] == s0[i];
    if (!ok) throw ShapeError("concat: shape " + s.str() + " does not fit " + s0.str() + " along axis " + std::to_string(axis));
    total += s[a];
  }
  int64_t outer, inner;
  outer_inner(s0, a, outer, inner);
  std::vector<int64_t> dims = s0.vec();
  dims[static_cast<size_t>(a)] = total;
  Array<T> out(Shape::of(dims));
  int64_t off = 0;
  for (const auto& x : xs) {
    copy_block(out.data(), total, off, x.value().data(), x.shape()[a], 0, x.shape()[a], outer, inner, false);
    off += x.shape()[a];
  }
  bool needs = false;
  if (grad_enabled())
    for (const auto& x : xs) needs = needs || x.requires_grad();
  Var<T> result(std::move(out), needs);
  if (needs) {
    result.node()->is_leaf = false;
    auto node = result.node_ptr();
    Tape<T>::current().record([node, xs, a, total, outer, inner]() {
      if (node->grad.empty()) return;
      int64_t o = 0;
      for (const auto& x : xs) {
        const int64_t len = x.shape()[a];
        if (x.requires_grad())
          copy_block(x.node()->grad_ref().data(), len, 0, node->grad.data(), total, o, len, outer, inner, true);
        o += len;
      }
      node->grad = Array<T>();
    });
  }
  return result;
}

#define LIEGRAD_INSTANTIATE(T)                                   \
  template Var<T> reshape(const Var<T>&, const Shape&);          \
  template Var<T> slice(const Var<T>&, int, int64_t, int64_t);   \
  template Var<T> concat(const std::vector<Var<T>>&, int);
LIEGRAD_INSTANTIATE(float)
LIEGRAD_INSTANTIATE(double)
#undef LIEGRAD_INSTANTIATE

}  // namespace liegrad::ag
