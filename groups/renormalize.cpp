// Newton-Schulz polar step with a straight-through pullback (see renormalize.hpp).
#include "groups/renormalize.hpp"

#include <algorithm>
#include <vector>

#include "autograd/tape.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"

namespace liegrad::groups {

template <class T>
void renormalize_one(const Group& g, T* H, T* tmp) {
  const int64_t n = g.n();
  g.restore_structure_kernel(H, n);
  // H <- H (3I - H^T H) / 2
  T* c = tmp;
  T* out = tmp + n * n;
  small_gemm<T>(true, false, n, n, n, T(-0.5), H, H, T(0), c);
  for (int64_t i = 0; i < n; ++i) c[i * n + i] += T(1.5);
  small_gemm<T>(false, false, n, n, n, T(1), H, c, T(0), out);
  std::copy(out, out + n * n, H);
}

template <class T>
void renormalize_kernel(const Group& g, int64_t N, T* H) {
  const int64_t n = g.n();
  parallel_for(N, grain_for_flops(4 * n * n * n), [&](int64_t b) {
    std::vector<T> tmp(static_cast<size_t>(2 * n * n));
    renormalize_one(g, H + b * n * n, tmp.data());
  });
}

template <class T>
ag::Var<T> renormalize(const Group& g, const ag::Var<T>& H) {
  const Shape& s = H.shape();
  if (s.rows() != g.n() || s.cols() != g.n() || s.ndim < 2)
    throw ShapeError("renormalize: states " + s.str() + " do not hold " + std::to_string(g.n()) + "x" +
                     std::to_string(g.n()) + " matrices of " + g.name());
  Array<T> out = H.value();
  renormalize_kernel(g, s.batch(), out.data());
  return ag::record_op<T>(std::move(out), {&H}, [H](const Array<T>& grad) {
    Array<T>& dH = H.node()->grad_ref();
    for (int64_t i = 0; i < grad.size(); ++i) dH[i] += grad[i];
  });
}

template ag::Var<float> renormalize(const Group&, const ag::Var<float>&);
template ag::Var<double> renormalize(const Group&, const ag::Var<double>&);
template void renormalize_kernel(const Group&, int64_t, float*);
template void renormalize_kernel(const Group&, int64_t, double*);
template void renormalize_one(const Group&, float*, float*);
template void renormalize_one(const Group&, double*, double*);

}  // namespace liegrad::groups
