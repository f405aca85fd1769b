// Newton-Schulz polar step with a straight-through pullback (see renormalize.hpp).
#include "groups/renormalize.hpp"

#include <vector>

#include "autograd/tape.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"

namespace liegrad::groups {

template <class T>
void renormalize_kernel(int64_t N, int64_t n, T* H) {
  parallel_for(N, grain_for_flops(4 * n * n * n), [&](int64_t b) {
    T* h = H + b * n * n;
    std::vector<T> c(static_cast<size_t>(n * n)), out(static_cast<size_t>(n * n));
    // c = (3I - H^T H) / 2
    small_gemm<T>(true, false, n, n, n, T(-0.5), h, h, T(0), c.data());
    for (int64_t i = 0; i < n; ++i) c[static_cast<size_t>(i * n + i)] += T(1.5);
    small_gemm<T>(false, false, n, n, n, T(1), h, c.data(), T(0), out.data());
    std::copy(out.begin(), out.end(), h);
  });
}

template <class T>
ag::Var<T> renormalize(const Group& g, const ag::Var<T>& H) {
  const Shape& s = H.shape();
  if (s.rows() != g.n() || s.cols() != g.n() || s.ndim < 2)
    throw ShapeError("renormalize: states " + s.str() + " do not hold " + std::to_string(g.n()) + "x" +
                     std::to_string(g.n()) + " matrices of " + g.name());
  Array<T> out = H.value();
  renormalize_kernel(s.batch(), g.n(), out.data());
  return ag::record_op<T>(std::move(out), {&H}, [H](const Array<T>& grad) {
    Array<T>& dH = H.node()->grad_ref();
    for (int64_t i = 0; i < grad.size(); ++i) dH[i] += grad[i];
  });
}

template ag::Var<float> renormalize(const Group&, const ag::Var<float>&);
template ag::Var<double> renormalize(const Group&, const ag::Var<double>&);
template void renormalize_kernel(int64_t, int64_t, float*);
template void renormalize_kernel(int64_t, int64_t, double*);

}  // namespace liegrad::groups
