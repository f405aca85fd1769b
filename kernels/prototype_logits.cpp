// The fused prototype readout (see prototype_logits.hpp): forward, backward and the
// tape record.
#include "kernels/prototype_logits.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "autograd/tape.hpp"
#include "core/errors.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"
#include "core/profile.hpp"
#include "core/small_gemm.hpp"

namespace liegrad::kernels {

namespace {

// Rows per chunk of the backward's two reductions: the chunks, not the threads, fix the
// order of the sums, so the result does not depend on the thread count.
constexpr int64_t kRowsPerChunk = 256;

void check_shapes(const groups::Group& g, const Shape& h, const Shape& p, const Shape& log_tau, const Shape& bias) {
  const int64_t n = g.n();
  const std::string nn = std::to_string(n) + "," + std::to_string(n);
  auto matrices_ok = [&](const Shape& s) { return s.ndim == 3 && s.rows() == n && s.cols() == n; };
  if (!matrices_ok(h))
    throw ShapeError("prototype_logits (" + g.name() + "): states must be (N," + nn + "), got " + h.str());
  if (!matrices_ok(p))
    throw ShapeError("prototype_logits (" + g.name() + "): prototypes must be (C," + nn + "), got " + p.str());
  if (bias != Shape{p[0]})
    throw ShapeError("prototype_logits: the bias must be (" + std::to_string(p[0]) + "), one per prototype, got " +
                     bias.str());
  int64_t tau_size = 1;
  for (int k = 0; k < log_tau.ndim; ++k) tau_size *= log_tau[k];
  if (tau_size != 1) throw ShapeError("prototype_logits: log_tau must hold one value, got " + log_tau.str());
}

// out (N,C) = alpha vec(H) vec(P)^T + bias (every row). The product reads vec(P)^T (nn,C),
// formed once here: with op(B) = B^T every one of gemm's row blocks transposed P again
// in 64 x 64 pieces and summed over nn in 64-long slices, each slice reading and writing
// its block of out again. SO(23)'s readout (4096 x 65 x 529) went from 196-212 to
// 247-278 GFLOP/s on two threads (docs/performance-log.md, 2026-12-06, "the readout's transpose").
template <class T>
void forward_pretransposed(int64_t N, int64_t C, int64_t nn, T alpha, const T* H, const T* Pt, const T* bias, T* out) {
  gemm<T>(false, false, N, C, nn, alpha, H, nn, Pt, C, T(0), out, C);
  parallel_for(N, grain_for(C), [&](int64_t i) {
    T* row = out + i * C;
    for (int64_t c = 0; c < C; ++c) row[c] += bias[c];
  });
}

template <class T>
void forward(int64_t N, int64_t C, int64_t nn, T alpha, const T* H, const T* P, const T* bias, T* out) {
  std::vector<T> Pt(static_cast<size_t>(nn * C));  // (nn, C)
  transpose_ld(C, nn, P, nn, Pt.data(), C);
  forward_pretransposed(N, C, nn, alpha, H, Pt.data(), bias, out);
}

// dbias += column sums of G (N,C); *dlog_tau += sum G (out - bias).
template <class T>
void reduce(int64_t N, int64_t C, const T* G, const T* out, const T* bias, T* dbias, T* dlog_tau) {
  const int64_t chunks = (N + kRowsPerChunk - 1) / kRowsPerChunk;
  std::vector<double> col(static_cast<size_t>(chunks * C), 0.0), dot(static_cast<size_t>(chunks), 0.0);
  parallel_for(chunks, grain_for(kRowsPerChunk * C), [&](int64_t k) {
    double* cs = col.data() + k * C;
    double d = 0;
    for (int64_t i = k * kRowsPerChunk; i < std::min(N, (k + 1) * kRowsPerChunk); ++i) {
      const T* g = G + i * C;
      const T* o = out + i * C;
      for (int64_t c = 0; c < C; ++c) {
        cs[c] += static_cast<double>(g[c]);
        d += static_cast<double>(g[c]) * (static_cast<double>(o[c]) - static_cast<double>(bias[c]));
      }
    }
    dot[static_cast<size_t>(k)] = d;
  });
  if (dbias)
    for (int64_t c = 0; c < C; ++c) {
      double s = 0;
      for (int64_t k = 0; k < chunks; ++k) s += col[static_cast<size_t>(k * C + c)];
      dbias[c] += static_cast<T>(s);
    }
  if (dlog_tau) {
    double s = 0;
    for (int64_t k = 0; k < chunks; ++k) s += dot[static_cast<size_t>(k)];
    *dlog_tau += static_cast<T>(s);
  }
}

}  // namespace

template <class T>
Array<T> prototypes_transposed(const Array<T>& P) {
  if (P.ndim() != 3 || P.shape()[1] != P.shape()[2])
    throw ShapeError("prototypes_transposed: P must be (C,n,n), got " + P.shape().str());
  const int64_t C = P.shape()[0], nn = P.shape()[1] * P.shape()[2];
  Array<T> Pt = Array<T>::uninitialized(Shape{nn, C});
  transpose_ld(C, nn, P.data(), nn, Pt.data(), C);
  return Pt;
}

template <class T>
Array<T> prototype_logits_pretransposed(const groups::Group& g, const Array<T>& H, const Array<T>& Pt,
                                        const Array<T>& log_tau, const Array<T>& bias) {
  const int64_t nn = g.n() * g.n();
  if (Pt.ndim() != 2 || Pt.shape()[0] != nn)
    throw ShapeError("prototype_logits_pretransposed: Pt must be (" + std::to_string(nn) + ",C), got " + Pt.shape().str());
  const int64_t C = Pt.shape()[1];
  check_shapes(g, H.shape(), Shape{C, g.n(), g.n()}, log_tau.shape(), bias.shape());
  const int64_t N = H.shape()[0];
  prof::Scope timed(prof::Family::Readout);
  const double tau = std::exp(static_cast<double>(log_tau.data()[0]));
  Array<T> out = Array<T>::uninitialized(Shape{N, C});
  forward_pretransposed<T>(N, C, nn, static_cast<T>(g.real_scale() * tau), H.data(), Pt.data(), bias.data(), out.data());
  return out;
}

template <class T>
ag::Var<T> prototype_logits(const groups::Group& g, const ag::Var<T>& H, const ag::Var<T>& P,
                            const ag::Var<T>& log_tau, const ag::Var<T>& bias) {
  check_shapes(g, H.shape(), P.shape(), log_tau.shape(), bias.shape());
  const int64_t N = H.shape()[0], C = P.shape()[0], nn = g.n() * g.n();
  const double s = g.real_scale();
  prof::Scope timed(prof::Family::Readout);
  const double tau = std::exp(static_cast<double>(log_tau.value().data()[0]));
  Array<T> out = Array<T>::uninitialized(Shape{N, C});
  forward<T>(N, C, nn, static_cast<T>(s * tau), H.value().data(), P.value().data(), bias.value().data(), out.data());

  bool needs = false;
  if (ag::grad_enabled())
    needs = H.requires_grad() || P.requires_grad() || log_tau.requires_grad() || bias.requires_grad();
  ag::Var<T> result(std::move(out), needs);
  if (!needs) return result;
  // Recorded by hand (as ag::record_op does) because the backward reads the op's output.
  result.node()->is_leaf = false;
  std::shared_ptr<ag::Node<T>> node = result.node_ptr();
  ag::Tape<T>::current().record([node, H, P, log_tau, bias, N, C, nn, alpha = static_cast<T>(s * tau)]() {
    if (node->grad.empty()) return;
    prof::Scope timed_b(prof::Family::Readout);
    const T* G = node->grad.data();
    reduce<T>(N, C, G, node->value.data(), bias.value().data(),
              bias.requires_grad() ? bias.node()->grad_ref().data() : nullptr,
              log_tau.requires_grad() ? log_tau.node()->grad_ref().data() : nullptr);
    std::vector<GemmCall<T>> calls;
    if (H.requires_grad()) {
      bool fresh = false;
      T* dH = H.node()->grad_for_write(&fresh).data();
      calls.push_back({false, false, N, nn, C, alpha, G, C, P.value().data(), nn, fresh ? T(0) : T(1), dH, nn});
    }
    if (P.requires_grad())
      calls.push_back({true, false, C, nn, N, alpha, G, C, H.value().data(), nn, T(1), P.node()->grad_ref().data(), nn});
    if (H.node() == P.node()) {  // one gradient buffer for both: the products one after the other
      for (const GemmCall<T>& c : calls) gemm_group<T>({c});
    } else {
      gemm_group<T>(calls);
    }
    node->grad = Array<T>();
  });
  return result;
}

template ag::Var<float> prototype_logits(const groups::Group&, const ag::Var<float>&, const ag::Var<float>&,
                                         const ag::Var<float>&, const ag::Var<float>&);
template ag::Var<double> prototype_logits(const groups::Group&, const ag::Var<double>&, const ag::Var<double>&,
                                          const ag::Var<double>&, const ag::Var<double>&);
template Array<float> prototypes_transposed(const Array<float>&);
template Array<double> prototypes_transposed(const Array<double>&);
template Array<float> prototype_logits_pretransposed(const groups::Group&, const Array<float>&, const Array<float>&,
                                                     const Array<float>&, const Array<float>&);
template Array<double> prototype_logits_pretransposed(const groups::Group&, const Array<double>&, const Array<double>&,
                                                      const Array<double>&, const Array<double>&);

}  // namespace liegrad::kernels
