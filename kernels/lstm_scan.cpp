// The fused LSTM layer (see lstm_scan.hpp).
#include "kernels/lstm_scan.hpp"

#include <omp.h>

#include <algorithm>
#include <memory>

#include "autograd/tape.hpp"
#include "core/buffer.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"
#include "core/profile.hpp"
#include "core/small_gemm.hpp"
#include "core/vmath.hpp"
#include "kernels/scan_common.hpp"

namespace liegrad::kernels {

using namespace ag;

namespace {

template <class T>
struct Saved {
  int64_t B = 0, T_ = 0, h = 0;
  Buffer<T> gates;  // (B,T,4h) activations i, f, g, o  (every element written)
  Buffer<T> c;      // (B,T,h) cell states
  Buffer<T> tc;     // (B,T,h) tanh(c)
  Array<T> h0, c0; // (B,h)
};

template <class T>
void forward(Saved<T>& sv, const T* xw, const T* w, T* hs) {
  const int64_t B = sv.B, T_ = sv.T_, h = sv.h, G = 4 * h;
  const int nt = scan_threads(B, 8 * B * T_ * h * h);
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    int64_t lo, hi;
    lanes_of(B, omp_get_thread_num(), omp_get_num_threads(), lo, hi);
    for (int64_t t = 0; t < T_; ++t) {
      if (hi <= lo) break;
      // a = xw_t + h_{t-1} W_hh for this thread's lanes (rows b*T + t, stride T*4h).
      T* a = sv.gates.data() + (lo * T_ + t) * G;
      for (int64_t b = lo; b < hi; ++b) std::copy(xw + (b * T_ + t) * G, xw + (b * T_ + t + 1) * G, a + (b - lo) * T_ * G);
      const T* hp = t == 0 ? sv.h0.data() + lo * h : hs + (lo * T_ + t - 1) * h;
      small_gemm_ld<T>(false, false, hi - lo, G, h, T(1), hp, t == 0 ? h : T_ * h, w, G, T(1), a, T_ * G);
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t bt = b * T_ + t;
        T* gb = sv.gates.data() + bt * G;
        vm::sigmoid_array(2 * h, gb, gb);         // i, f
        vm::tanh_array(h, gb + 2 * h, gb + 2 * h);  // g
        vm::sigmoid_array(h, gb + 3 * h, gb + 3 * h);  // o
        const T* cp = t == 0 ? sv.c0.data() + b * h : sv.c.data() + (bt - 1) * h;
        T* c = sv.c.data() + bt * h;
#pragma omp simd
        for (int64_t k = 0; k < h; ++k) c[k] = gb[h + k] * cp[k] + gb[k] * gb[2 * h + k];
        T* tc = sv.tc.data() + bt * h;
        vm::tanh_array(h, c, tc);
        T* ho = hs + bt * h;
#pragma omp simd
        for (int64_t k = 0; k < h; ++k) ho[k] = gb[3 * h + k] * tc[k];
      }
    }
  }
}

// G_h (B,T,h) = dL/dhs. DA (B,T,4h) receives da_t, the gradient of xw, every element
// written; dW (h,4h), dh0, dc0 (B,h) accumulate; null skips. Per step only the
// recurrence dh_{t-1} = da_t W_hh^T runs; dW_hh = sum_t h_{t-1}^T da_t is one product
// over all B T rows afterwards (H_prev^T DA), not B T / lanes small updates of the
// whole (h,4h) matrix.
template <class T>
void backward(const Saved<T>& sv, const T* Gh, const T* hs, const T* w, T* DA, T* dW, T* dh0, T* dc0) {
  const int64_t B = sv.B, T_ = sv.T_, h = sv.h, G = 4 * h;
  const int nt = scan_threads(B, 8 * B * T_ * h * h);
  Array<T> wT(Shape{G, h});  // W_hh^T, so dh_{t-1} = da W^T is a plain product
  for (int64_t i = 0; i < h; ++i)
    for (int64_t j = 0; j < G; ++j) wT[j * h + i] = w[i * G + j];
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    int64_t lo, hi;
    lanes_of(B, omp_get_thread_num(), omp_get_num_threads(), lo, hi);
    const int64_t L = std::max<int64_t>(hi - lo, 1);
    std::vector<T> dh(static_cast<size_t>(L * h), T(0)), dc(static_cast<size_t>(L * h), T(0));
    for (int64_t t = T_ - 1; t >= 0 && hi > lo; --t) {
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t bt = b * T_ + t;
        const T* gb = sv.gates.data() + bt * G;
        const T* tc = sv.tc.data() + bt * h;
        const T* cp = t == 0 ? sv.c0.data() + b * h : sv.c.data() + (bt - 1) * h;
        T* dhb = dh.data() + (b - lo) * h;
        T* dcb = dc.data() + (b - lo) * h;
        T* dab = DA + bt * G;
        const T* g_out = Gh + bt * h;
#pragma omp simd
        for (int64_t k = 0; k < h; ++k) {
          const T i = gb[k], f = gb[h + k], g = gb[2 * h + k], o = gb[3 * h + k];
          const T dhk = dhb[k] + g_out[k];
          const T dck = dcb[k] + dhk * o * (T(1) - tc[k] * tc[k]);
          dab[k] = dck * g * i * (T(1) - i);
          dab[h + k] = dck * cp[k] * f * (T(1) - f);
          dab[2 * h + k] = dck * i * (T(1) - g * g);
          dab[3 * h + k] = dhk * tc[k] * o * (T(1) - o);
          dcb[k] = dck * f;
        }
      }
      // dh_{t-1} = da_t W^T for this thread's lanes (rows b T + t of DA, stride T 4h).
      small_gemm_ld<T>(false, false, hi - lo, h, G, T(1), DA + (lo * T_ + t) * G, T_ * G, wT.data(), h, T(0), dh.data(),
                       h);
    }
    for (int64_t b = lo; b < hi; ++b)
      for (int64_t k = 0; k < h; ++k) {
        if (dh0) dh0[b * h + k] += dh[static_cast<size_t>((b - lo) * h + k)];
        if (dc0) dc0[b * h + k] += dc[static_cast<size_t>((b - lo) * h + k)];
      }
  }
  if (dW) {
    Buffer<T> hprev(B * T_ * h);  // H_prev, every row written
    previous_states(B, T_, h, sv.h0.data(), hs, hprev.data());
    gemm<T>(true, false, h, G, B * T_, T(1), hprev.data(), h, DA, G, T(1), dW, G);
  }
}

}  // namespace

template <class T>
Var<T> lstm_scan(const Var<T>& xw, const Var<T>& w_hh, const Var<T>& h0, const Var<T>& c0, Array<T>* c_last) {
  const Shape& s = xw.shape();
  const int64_t h = w_hh.shape().rows();
  if (w_hh.shape() != Shape{h, 4 * h})
    throw ShapeError("lstm_scan: w_hh must be (h,4h), got " + w_hh.shape().str());
  if (s.ndim != 3 || s[2] != 4 * h)
    throw ShapeError("lstm_scan: xw must be (B,T," + std::to_string(4 * h) + "), got " + s.str());
  const int64_t B = s[0], T_ = s[1];
  if (h0.shape() != Shape{B, h} || c0.shape() != Shape{B, h})
    throw ShapeError("lstm_scan: initial states must be (" + std::to_string(B) + "," + std::to_string(h) + "), got " +
                     h0.shape().str() + " and " + c0.shape().str());
  prof::Scope timed(prof::Family::Dense);
  auto sv = std::make_shared<Saved<T>>();
  sv->B = B;
  sv->T_ = T_;
  sv->h = h;
  sv->gates = Buffer<T>(B * T_ * 4 * h);
  sv->c = Buffer<T>(B * T_ * h);
  sv->tc = Buffer<T>(B * T_ * h);
  sv->h0 = h0.value();
  sv->c0 = c0.value();
  Array<T> hs(Shape{B, T_, h});
  forward(*sv, xw.value().data(), w_hh.value().data(), hs.data());
  if (c_last) {
    *c_last = Array<T>(Shape{B, h});
    for (int64_t b = 0; b < B; ++b)
      std::copy(sv->c.data() + (b * T_ + T_ - 1) * h, sv->c.data() + (b * T_ + T_) * h, c_last->data() + b * h);
  }
  bool needs = false;
  if (grad_enabled()) needs = xw.requires_grad() || w_hh.requires_grad() || h0.requires_grad() || c0.requires_grad();
  // da_t is xw's gradient (DA); the backward reads the h_t (out).
  return record_scan<T>(std::move(hs), needs, xw, [w_hh, h0, c0, sv](const T* G, const T* out, T* DA) {
    backward(*sv, G, out, w_hh.value().data(), DA, w_hh.requires_grad() ? w_hh.node()->grad_ref().data() : nullptr,
             h0.requires_grad() ? h0.node()->grad_ref().data() : nullptr,
             c0.requires_grad() ? c0.node()->grad_ref().data() : nullptr);
  });
}

template Var<float> lstm_scan(const Var<float>&, const Var<float>&, const Var<float>&, const Var<float>&,
                              Array<float>*);
template Var<double> lstm_scan(const Var<double>&, const Var<double>&, const Var<double>&, const Var<double>&,
                               Array<double>*);

}  // namespace liegrad::kernels
