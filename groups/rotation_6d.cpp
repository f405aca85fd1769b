// The 6D rotation map and its backward (see rotation_6d.hpp).
#include "groups/rotation_6d.hpp"

#include <cmath>

#include "autograd/tape.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"

namespace liegrad::groups {

namespace {

template <class T>
T dot3(const T* a, const T* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

template <class T>
void cross3(const T* a, const T* b, T* out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

// The norms |a1| and |u| of row x (6), and R (9); false when either is 0 or not finite.
template <class T>
bool forward_row(const T* x, T* R, T& n1, T& nu) {
  const T* a1 = x;
  const T* a2 = x + 3;
  n1 = std::sqrt(dot3(a1, a1));
  if (!(n1 > 0) || !std::isfinite(n1)) return false;
  T* b1 = R;
  T* b2 = R + 3;
  for (int i = 0; i < 3; ++i) b1[i] = a1[i] / n1;
  const T p = dot3(b1, a2);
  for (int i = 0; i < 3; ++i) b2[i] = a2[i] - p * b1[i];
  nu = std::sqrt(dot3(b2, b2));
  if (!(nu > 0) || !std::isfinite(nu)) return false;
  for (int i = 0; i < 3; ++i) b2[i] /= nu;
  cross3(b1, b2, R + 6);
  return true;
}

}  // namespace

template <class T>
ag::Var<T> rotation_from_6d(const ag::Var<T>& x) {
  const Shape& s = x.shape();
  if (s.ndim != 2 || s[1] != 6)
    throw ShapeError("rotation_from_6d: expected (N,6) inputs, got " + s.str());
  const int64_t N = s[0];
  Array<T> R(Shape{N, 3, 3});
  Array<T> norms(Shape{N, 2});  // |a1|, |u| per row, for the backward
  int64_t bad = -1;
  for (int64_t r = 0; r < N; ++r)
    if (!forward_row(x.value().data() + r * 6, R.data() + r * 9, norms.data()[2 * r], norms.data()[2 * r + 1])) {
      bad = r;
      break;
    }
  if (bad >= 0)
    throw NumericError("rotation_from_6d: row " + std::to_string(bad) +
                       " has a zero or non-finite first vector, or a second vector parallel to it (no rotation)");
  return ag::record_op<T>(Array<T>(R), {&x}, [x, R, norms, N](const Array<T>& G) {
    T* gx = x.node()->grad_ref().data();
    const T* xv = x.value().data();
    parallel_for(N, 256, [&](int64_t r) {
      const T* b1 = R.data() + r * 9;
      const T* b2 = b1 + 3;
      const T* a2 = xv + r * 6 + 3;
      const T* g = G.data() + r * 9;
      const T n1 = norms.data()[2 * r], nu = norms.data()[2 * r + 1];
      T gb1[3], gb2[3], t[3], gu[3];
      // b3 = b1 x b2.
      cross3(b2, g + 6, t);
      for (int i = 0; i < 3; ++i) gb1[i] = g[i] + t[i];
      cross3(g + 6, b1, t);
      for (int i = 0; i < 3; ++i) gb2[i] = g[3 + i] + t[i];
      // b2 = u / |u|.
      const T q = dot3(b2, gb2);
      for (int i = 0; i < 3; ++i) gu[i] = (gb2[i] - q * b2[i]) / nu;
      // u = a2 - <b1, a2> b1.
      const T p = dot3(b1, a2), c = dot3(b1, gu);
      T* ga1 = gx + r * 6;
      T* ga2 = ga1 + 3;
      for (int i = 0; i < 3; ++i) {
        ga2[i] += gu[i] - c * b1[i];
        gb1[i] -= p * gu[i] + c * a2[i];
      }
      // b1 = a1 / |a1|.
      const T e = dot3(b1, gb1);
      for (int i = 0; i < 3; ++i) ga1[i] += (gb1[i] - e * b1[i]) / n1;
    });
  });
}

template ag::Var<float> rotation_from_6d(const ag::Var<float>&);
template ag::Var<double> rotation_from_6d(const ag::Var<double>&);

std::vector<ag::OpCheck> rotation_op_checks() {
  const std::string name = "rotation_from_6d";
  return {{name, [name](Rng& rng) {
             // Gaussian rows are almost surely far from the singular set.
             return ag::check_vjp(name, [](const std::vector<ag::Vard>& x) { return rotation_from_6d(x[0]); },
                                  {rng.normal_array<double>(Shape{5, 6})}, rng);
           }}};
}

}  // namespace liegrad::groups
