// The fused expRNN recurrence (see exprnn_scan.hpp).
#include "kernels/exprnn_scan.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "autograd/tape.hpp"
#include "core/buffer.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"
#include "core/profile.hpp"
#include "core/small_gemm.hpp"
#include "kernels/scan_common.hpp"

namespace liegrad::kernels {

using namespace ag;

namespace {

template <class T>
struct Saved {
  int64_t B = 0, T_ = 0, h = 0;
  Buffer<T> z;   // (B,T,h) pre-activations (every element written)
  Array<T> h0;   // (B,h)
};

// modrelu of one row: out = sign(z) max(|z| + b, 0), sign(0) = +1 (as ag::modrelu).
template <class T>
void modrelu_row(int64_t h, const T* z, const T* b, T* out) {
#pragma omp simd
  for (int64_t k = 0; k < h; ++k) {
    const T m = std::abs(z[k]) + b[k];
    out[k] = m > T(0) ? (z[k] >= T(0) ? m : -m) : T(0);
  }
}

// Qt (h,h) = Q^T, so that z += h_{t-1} Q^T is a plain product.
template <class T>
void forward(Saved<T>& sv, const T* x, const T* Qt, const T* bias, T* hs) {
  const int64_t B = sv.B, T_ = sv.T_, h = sv.h;
  const int nt = scan_threads(B, 4 * B * T_ * h * h);
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    int64_t lo, hi;
    lanes_of(B, omp_get_thread_num(), omp_get_num_threads(), lo, hi);
    for (int64_t t = 0; t < T_ && hi > lo; ++t) {
      // z_t = x_t + h_{t-1} Q^T for this thread's lanes (rows b T + t, stride T h).
      T* z = sv.z.data() + (lo * T_ + t) * h;
      for (int64_t b = lo; b < hi; ++b)
        std::copy(x + (b * T_ + t) * h, x + (b * T_ + t + 1) * h, z + (b - lo) * T_ * h);
      const T* hp = t == 0 ? sv.h0.data() + lo * h : hs + (lo * T_ + t - 1) * h;
      small_gemm_ld<T>(false, false, hi - lo, h, h, T(1), hp, t == 0 ? h : T_ * h, Qt, h, T(1), z, T_ * h);
      for (int64_t b = lo; b < hi; ++b) modrelu_row(h, sv.z.data() + (b * T_ + t) * h, bias, hs + (b * T_ + t) * h);
    }
  }
}

// Gh (B,T,h) = dL/dhs. DZ (B,T,h) receives dz_t, the gradient of x, every element
// written; dQ (h,h), db (h), dh0 (B,h) accumulate; null skips.
template <class T>
void backward(const Saved<T>& sv, const T* Gh, const T* hs, const T* Q, const T* bias, T* DZ, T* dQ, T* db,
              T* dh0) {
  const int64_t B = sv.B, T_ = sv.T_, h = sv.h;
  const int nt = scan_threads(B, 4 * B * T_ * h * h);
  std::vector<double> db_t(static_cast<size_t>(nt * h), 0.0);  // per thread: its share of db
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    int64_t lo, hi;
    const int t_id = omp_get_thread_num();
    lanes_of(B, t_id, omp_get_num_threads(), lo, hi);
    const int64_t L = std::max<int64_t>(hi - lo, 1);
    std::vector<T> dh(static_cast<size_t>(L * h), T(0));
    double* dbt = db_t.data() + t_id * h;
    for (int64_t t = T_ - 1; t >= 0 && hi > lo; --t) {
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t bt = b * T_ + t;
        const T* z = sv.z.data() + bt * h;
        const T* g_out = Gh + bt * h;
        const T* dhb = dh.data() + (b - lo) * h;
        T* dz = DZ + bt * h;
#pragma omp simd
        for (int64_t k = 0; k < h; ++k) {
          const bool active = std::abs(z[k]) + bias[k] > T(0);
          dz[k] = active ? dhb[k] + g_out[k] : T(0);
        }
        for (int64_t k = 0; k < h; ++k) dbt[k] += static_cast<double>(z[k] >= T(0) ? dz[k] : -dz[k]);
      }
      // dh_{t-1} = dz_t Q for this thread's lanes (rows b T + t of DZ, stride T h).
      small_gemm_ld<T>(false, false, hi - lo, h, h, T(1), DZ + (lo * T_ + t) * h, T_ * h, Q, h, T(0), dh.data(), h);
    }
    if (dh0)
      for (int64_t b = lo; b < hi; ++b)
        for (int64_t k = 0; k < h; ++k) dh0[b * h + k] += dh[static_cast<size_t>((b - lo) * h + k)];
  }
  if (db)
    for (int64_t k = 0; k < h; ++k) {
      double acc = 0;
      for (int t = 0; t < nt; ++t) acc += db_t[static_cast<size_t>(t * h + k)];
      db[k] += static_cast<T>(acc);
    }
  if (dQ) {
    Buffer<T> hprev(B * T_ * h);  // H_prev, every row written
    previous_states(B, T_, h, sv.h0.data(), hs, hprev.data());
    gemm<T>(true, false, h, h, B * T_, T(1), DZ, h, hprev.data(), h, T(1), dQ, h);
  }
}

}  // namespace

template <class T>
Var<T> exprnn_scan(const Var<T>& x, const Var<T>& Q, const Var<T>& b, const Var<T>& h0) {
  const Shape& s = x.shape();
  const int64_t h = Q.shape().rows();
  if (Q.shape() != Shape{h, h}) throw ShapeError("exprnn_scan: Q must be square (h,h), got " + Q.shape().str());
  if (s.ndim != 3 || s[2] != h)
    throw ShapeError("exprnn_scan: x must be (B,T," + std::to_string(h) + "), got " + s.str());
  if (b.shape() != Shape{h})
    throw ShapeError("exprnn_scan: the modReLU bias must be (" + std::to_string(h) + "), got " + b.shape().str());
  const int64_t B = s[0], T_ = s[1];
  if (h0.shape() != Shape{B, h})
    throw ShapeError("exprnn_scan: the initial state must be (" + std::to_string(B) + "," + std::to_string(h) +
                     "), got " + h0.shape().str());
  auto sv = std::make_shared<Saved<T>>();
  sv->B = B;
  sv->T_ = T_;
  sv->h = h;
  sv->z = Buffer<T>(B * T_ * h);
  sv->h0 = h0.value();
  Array<T> Qt = Array<T>::uninitialized(Shape{h, h});  // every element written
  const T* q = Q.value().data();
  for (int64_t i = 0; i < h; ++i)
    for (int64_t j = 0; j < h; ++j) Qt[j * h + i] = q[i * h + j];
  Array<T> hs = Array<T>::uninitialized(Shape{B, T_, h});  // every element written by forward
  forward(*sv, x.value().data(), Qt.data(), b.value().data(), hs.data());
  bool needs = false;
  if (grad_enabled()) needs = x.requires_grad() || Q.requires_grad() || b.requires_grad() || h0.requires_grad();
  // dz_t is x's gradient (DZ); the backward reads the h_t (out).
  return record_scan<T>(std::move(hs), needs, x, [x, Q, b, h0, sv](const T* G, const T* out, T* DZ) {
    backward(*sv, G, out, Q.value().data(), b.value().data(), DZ, Q.requires_grad() ? Q.node()->grad_ref().data() : nullptr,
             b.requires_grad() ? b.node()->grad_ref().data() : nullptr,
             h0.requires_grad() ? h0.node()->grad_ref().data() : nullptr);
  });
}

template Var<float> exprnn_scan(const Var<float>&, const Var<float>&, const Var<float>&, const Var<float>&);
template Var<double> exprnn_scan(const Var<double>&, const Var<double>&, const Var<double>&, const Var<double>&);

}  // namespace liegrad::kernels
