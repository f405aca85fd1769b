// Kernels and wrappers of the fused dense layers (see linear.hpp).
#include "autograd/linear.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "autograd/tape.hpp"
#include "core/buffer.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"
#include "core/vmath.hpp"

namespace liegrad::ag {

namespace {

struct Dims {
  int64_t R, K, N;
};

template <class T>
Dims check(const char* op, const Var<T>& x, const Var<T>& W, const Var<T>& b) {
  const Shape& ws = W.shape();
  if (ws.ndim != 2 || x.shape().ndim < 1 || x.shape().cols() != ws[0])
    throw ShapeError(std::string(op) + ": x " + x.shape().str() + " and W " + ws.str() +
                     " do not chain (need x (..,K) and W (K,N))");
  if (b.defined() && b.size() != ws[1])
    throw ShapeError(std::string(op) + ": bias " + b.shape().str() + " must have N = " + std::to_string(ws[1]) +
                     " elements");
  return {x.size() / ws[0], ws[0], ws[1]};
}

template <class T>
Shape out_shape(const Shape& xs, int64_t N) {
  std::vector<int64_t> d = xs.vec();
  d.back() = N;
  return Shape::of(d);
}

// Rows per block of blocked_rows and of linear_gelu's forward: a block's output (rows x
// N), or linear_gelu's pre-activation in a per-thread scratch, stays in the thread's L2
// from its fill (bias or residual) to the product that adds to it (and to GELU and its
// derivative, taken from the scratch).
constexpr int64_t kBlockRows = 128;

// C (R,N) = fill + x W in blocks of kBlockRows rows over liegrad's threads, each
// block's product serial in its thread (single-threaded OpenBLAS or liegrad's kernel,
// core/linalg.hpp): per block, fill(lo, rows) writes the block's rows of C and the
// product adds x W (beta = 1). linear and linear_residual used to fill all of C in the
// serial part of the step first: a 4096 x 192 bias copy was 2-5% of a transformer step
// (per-thread `perf` samples, 2026-12-05). float only in parallel; double (gradient
// checks) runs the blocks in order. Each element of C sums over k in the same order as
// one product over all rows would, so the blocking changes no bit. (linear_gelu keeps
// its own loop, its product in a per-thread scratch that stays hot: GELU in place in
// the output instead measured 2-6% slower on the transformer in three of four
// alternating rounds, 2026-12-05.)
template <class T, class Fill>
void blocked_rows(const Dims& d, const T* x, const T* W, T* C, Fill&& fill) {
  const int64_t blocks = (d.R + kBlockRows - 1) / kBlockRows;
  const int64_t grain = std::is_same_v<T, float> ? grain_for_flops(2 * kBlockRows * d.K * d.N) : blocks;
#pragma omp parallel for schedule(static) if (blocks >= 2 * grain && !in_parallel_region())
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t lo = blk * kBlockRows, rows = std::min(kBlockRows, d.R - lo);
    fill(lo, rows);
    gemm<T>(false, false, rows, d.N, d.K, T(1), x + lo * d.K, d.K, W, d.N, T(1), C + lo * d.N, d.N);
  }
}

// blocked_rows' fill: rows [lo, lo + rows) of C (R,N) = r's rows + b, either absent
// when null (then 0 in its place).
template <class T>
void fill_rows(const Dims& d, const T* r, const T* b, T* C, int64_t lo, int64_t rows) {
  for (int64_t i = lo; i < lo + rows; ++i) {
    T* ci = C + i * d.N;
    const T* ri = r ? r + i * d.N : nullptr;
    if (ri && b) {
#pragma omp simd
      for (int64_t j = 0; j < d.N; ++j) ci[j] = ri[j] + b[j];
    } else if (ri || b) {
      std::copy(ri ? ri : b, (ri ? ri : b) + d.N, ci);
    } else {
      std::fill(ci, ci + d.N, T(0));
    }
  }
}

// Given dpre (R,N): dx += dpre W^T, dW += x^T dpre (= where fresh), db += colsum(dpre),
// all in one parallel region: the column sums (and `side`, e.g. the residual's gradient)
// run whole in one thread beside the products' blocks (gemm_group), where they ran
// serially before it: 1.5-3% of a transformer step (per-thread `perf` samples,
// 2026-12-05). Each sum runs over the rows in order, so no bit depends on the threads.
template <class T>
void backward(const Dims& d, const T* dpre, const T* x, const T* W, GradOut<T> dx, GradOut<T> dW, T* db,
              std::vector<std::function<void()>> side = {}) {
  std::vector<GemmCall<T>> calls;
  if (dx.p) calls.push_back({false, true, d.R, d.K, d.N, T(1), dpre, d.N, W, d.N, dx.fresh ? T(0) : T(1), dx.p, d.K});
  if (dW.p) calls.push_back({true, false, d.K, d.N, d.R, T(1), x, d.K, dpre, d.N, dW.fresh ? T(0) : T(1), dW.p, d.N});
  if (db)
    side.push_back([&d, dpre, db] {
      std::vector<double> acc(static_cast<size_t>(d.N), 0.0);
      for (int64_t r = 0; r < d.R; ++r) {
        const T* g = dpre + r * d.N;
#pragma omp simd
        for (int64_t j = 0; j < d.N; ++j) acc[static_cast<size_t>(j)] += static_cast<double>(g[j]);
      }
      for (int64_t j = 0; j < d.N; ++j) db[j] += static_cast<T>(acc[static_cast<size_t>(j)]);
    });
  gemm_group<T>(calls, side);
}

template <class T>
T* grad_of(const Var<T>& v) {
  return v.defined() && v.requires_grad() ? v.node()->grad_ref().data() : nullptr;
}

}  // namespace

template <class T>
Var<T> linear(const Var<T>& x, const Var<T>& W, const Var<T>& b) {
  const Dims d = check("linear", x, W, b);
  Array<T> out = Array<T>::uninitialized(out_shape<T>(x.shape(), d.N));  // every row filled below
  const T* pb = b.defined() ? b.value().data() : nullptr;
  T* po = out.data();
  blocked_rows(d, x.value().data(), W.value().data(), po,
               [&](int64_t lo, int64_t rows) { fill_rows<T>(d, nullptr, pb, po, lo, rows); });
  return record_op<T>(std::move(out), {&x, &W, &b}, [x, W, b, d](const Array<T>& g) {
    const auto [dx, dW] = grads_for_write(x, W);
    backward(d, g.data(), x.value().data(), W.value().data(), dx, dW, grad_of(b));
  });
}

template <class T>
Var<T> linear_residual(const Var<T>& x, const Var<T>& W, const Var<T>& b, const Var<T>& r) {
  const Dims d = check("linear_residual", x, W, b);
  const Shape os = out_shape<T>(x.shape(), d.N);
  if (r.shape() != os)
    throw ShapeError("linear_residual: residual " + r.shape().str() + " must have the output's shape " + os.str());
  // Per block: out = r + b, then the product adds x W (beta = 1).
  Array<T> out = Array<T>::uninitialized(os);  // every element written below
  const T* pr = r.value().data();
  const T* pb = b.defined() ? b.value().data() : nullptr;
  T* po = out.data();
  blocked_rows(d, x.value().data(), W.value().data(), po,
               [&](int64_t lo, int64_t rows) { fill_rows(d, pr, pb, po, lo, rows); });
  return record_op<T>(std::move(out), {&x, &W, &b, &r}, [x, W, b, r, d](const Array<T>& g) {
    const std::vector<GradOut<T>> gr = grads_for_write<T>({&x, &W, &r});
    // The residual's gradient is g: beside the products, unless r is x or W (one buffer,
    // which the products add to as well), then first.
    auto residual_grad = [&] { store_grad(gr[2].p, gr[2].fresh, g.size(), [&](int64_t i) { return g.data()[i]; }); };
    std::vector<std::function<void()>> side;
    if (gr[2].p && (gr[2].p == gr[0].p || gr[2].p == gr[1].p))
      residual_grad();
    else if (gr[2].p)
      side.push_back(residual_grad);
    backward(d, g.data(), x.value().data(), W.value().data(), gr[0], gr[1], grad_of(b), std::move(side));
  });
}

template <class T>
Var<T> linear_gelu(const Var<T>& x, const Var<T>& W, const Var<T>& b) {
  const Dims d = check("linear_gelu", x, W, b);
  // Forward per block of rows: pre = x W + b into scratch, then y = gelu(pre) and
  // dgelu = gelu'(pre) in one pass. The backward keeps dgelu, so it needs no erf.
  auto dgelu = std::make_shared<Buffer<T>>(d.R * d.N);  // every element written
  Array<T> out = Array<T>::uninitialized(out_shape<T>(x.shape(), d.N));  // every element written below
  const T* px = x.value().data();
  const T* pW = W.value().data();
  const T* pb = b.defined() ? b.value().data() : nullptr;
  const int64_t blocks = (d.R + kBlockRows - 1) / kBlockRows;
  // float only in parallel: each block's product then runs serially in its thread
  // (single-threaded OpenBLAS or liegrad's kernel, core/linalg.hpp).
  const int64_t grain = std::is_same_v<T, float> ? grain_for_flops(2 * kBlockRows * d.K * d.N) : blocks;
#pragma omp parallel if (blocks >= 2 * grain && !in_parallel_region())
  {
    std::vector<T> pre(static_cast<size_t>(std::min(kBlockRows, d.R) * d.N));
#pragma omp for schedule(static)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t lo = blk * kBlockRows, rows = std::min(kBlockRows, d.R - lo);
      fill_rows(d, static_cast<const T*>(nullptr), pb, pre.data(), 0, rows);  // pre = b, then += x W
      gemm<T>(false, false, rows, d.N, d.K, T(1), px + lo * d.K, d.K, pW, d.N, T(1), pre.data(), d.N);
      vm::gelu_with_grad_array(rows * d.N, pre.data(), out.data() + lo * d.N, dgelu->data() + lo * d.N);
    }
  }
  return record_op<T>(std::move(out), {&x, &W, &b}, [x, W, b, d, dgelu](const Array<T>& g) {
    Buffer<T> dpre(dgelu->size());  // every element written
    const int64_t n = dpre.size(), ch = 1 << 14;
    parallel_for((n + ch - 1) / ch, grain_for(ch), [&](int64_t c) {
      const int64_t lo = c * ch, hi = std::min(n, lo + ch);
      const T* gi = g.data();
      const T* di = dgelu->data();
      T* o = dpre.data();
#pragma omp simd
      for (int64_t i = lo; i < hi; ++i) o[i] = gi[i] * di[i];
    });
    const auto [dx, dW] = grads_for_write(x, W);
    backward(d, dpre.data(), x.value().data(), W.value().data(), dx, dW, grad_of(b));
  });
}

template Var<float> linear(const Var<float>&, const Var<float>&, const Var<float>&);
template Var<double> linear(const Var<double>&, const Var<double>&, const Var<double>&);
template Var<float> linear_residual(const Var<float>&, const Var<float>&, const Var<float>&, const Var<float>&);
template Var<double> linear_residual(const Var<double>&, const Var<double>&, const Var<double>&,
                                     const Var<double>&);
template Var<float> linear_gelu(const Var<float>&, const Var<float>&, const Var<float>&);
template Var<double> linear_gelu(const Var<double>&, const Var<double>&, const Var<double>&);

}  // namespace liegrad::ag
