// Shared pieces of the fused recurrent scans (lstm_scan.cpp, exprnn_scan.cpp, and the
// lane split and thread count of osm_scan.cpp): the
// batch rows ("lanes") split over the OpenMP threads, each thread advancing its lanes in
// lockstep through time; the previous-state matrix that lets a backward form its
// recurrent weight's gradient as one product over the whole window (sum over t of
// h_{t-1}^T d_t = H_prev^T D); and the tape record of a scan, whose backward reads the
// op's own output and writes its input's gradient in full.
#pragma once
#include <algorithm>
#include <cstdint>

#include <memory>

#include "autograd/tape.hpp"
#include "core/buffer.hpp"
#include "core/parallel.hpp"
#include "core/profile.hpp"

namespace liegrad::kernels {

// Lanes [lo, hi) of thread t of nt: near-equal contiguous shares of B.
inline void lanes_of(int64_t B, int t, int nt, int64_t& lo, int64_t& hi) {
  lo = B * t / nt;
  hi = B * (t + 1) / nt;
}

// Threads for a scan over B lanes doing `flops` in all: one below kMinParallelFlops, with
// one lane, or inside a parallel region; else at most one per lane.
inline int scan_threads(int64_t B, int64_t flops) {
  const bool worth = B > 1 && flops >= kMinParallelFlops && !in_parallel_region();
  return worth ? static_cast<int>(std::min<int64_t>(num_threads(), B)) : 1;
}

// hprev (B,T,h): row b T + t holds h_{t-1} of lane b, h0 (B,h) at t = 0; hs (B,T,h) the
// scan's states. Every row written.
template <class T>
void previous_states(int64_t B, int64_t T_, int64_t h, const T* h0, const T* hs, T* hprev) {
  parallel_for(B, grain_for(T_ * h), [&](int64_t b) {
    std::copy(h0 + b * h, h0 + (b + 1) * h, hprev + b * T_ * h);
    std::copy(hs + b * T_ * h, hs + ((b + 1) * T_ - 1) * h, hprev + (b * T_ + 1) * h);
  });
}

// The scan's output as a tape node, recorded by hand (as ag::record_op does, but the
// backward also reads the output `out`). backward(G, out, DX) gets the output's gradient
// G and must write the gradient of x (x.size() elements) into DX in full, and add the
// other inputs' gradients itself; DX is x's gradient buffer when that is fresh (nothing
// added to it yet), else a scratch buffer that is then added to it (also when x needs no
// gradient: the scans read DX for their weight gradients).
template <class T, class Backward>
ag::Var<T> record_scan(Array<T> out, bool needs, const ag::Var<T>& x, Backward backward) {
  ag::Var<T> result(std::move(out), needs);
  if (!needs) return result;
  result.node()->is_leaf = false;
  std::shared_ptr<ag::Node<T>> node = result.node_ptr();
  ag::Tape<T>::current().record([node, x, backward, tag = prof::current_tag()]() {
    if (node->grad.empty()) return;
    prof::Scope timed_b(tag);
    bool fresh = false;
    T* dx = x.requires_grad() ? x.node()->grad_for_write(&fresh).data() : nullptr;
    Buffer<T> own(dx && fresh ? 0 : x.size());  // x's shape when not written in place
    T* DX = dx && fresh ? dx : own.data();
    backward(node->grad.data(), node->value.data(), DX);
    if (dx && !fresh) parallel_for(own.size(), kMinParallelWork, [&](int64_t i) { dx[i] += own.data()[i]; });
    node->grad = Array<T>();
  });
  return result;
}

}  // namespace liegrad::kernels
