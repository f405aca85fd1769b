// The unfused references (see reference.hpp): plain tape ops, one line per formula.
#include "kernels/reference.hpp"

#include "autograd/ops.hpp"
#include "core/errors.hpp"
#include "groups/expm.hpp"
#include "groups/group_ops.hpp"
#include "groups/renormalize.hpp"

namespace liegrad::kernels {

using ag::Var;
using groups::Group;

namespace {

// u (N,m) -> u Gamma^T: the rows of Gamma r; identity mixing when Gamma is undefined.
template <class T>
Var<T> mix(const Var<T>& r, const Var<T>& Gamma) {
  return Gamma.defined() ? ag::matmul(r, Gamma, false, true) : r;
}

// H exp(hat(u)): the OSM update, rplus in manif's vocabulary.
template <class T>
Var<T> rplus(const Group& g, const Var<T>& H, const Var<T>& u) {
  return groups::compose(g, H, groups::expm(groups::hat(g, u)));
}

}  // namespace

template <class T>
Var<T> relative_update_reference(const Group& g, const Var<T>& H, const Var<T>& P, const Var<T>& Gamma) {
  const Var<T> r = groups::vee(g, groups::compose(g, H, P, /*conj_h=*/true));  // vee(H* P)
  return rplus(g, H, mix(r, Gamma));
}

template <class T>
Var<T> combined_update_reference(const Group& g, const Var<T>& H, const Var<T>& P1, const Var<T>& Gamma1,
                                 const Var<T>& P2, const Var<T>& Gamma2) {
  const Var<T> r1 = groups::vee(g, groups::compose(g, H, P1, /*conj_h=*/true));  // vee(H* P1)
  const Var<T> r2 = groups::vee(g, groups::compose(g, H, P2, /*conj_h=*/true));  // vee(H* P2)
  return rplus(g, H, ag::add(mix(r1, Gamma1), mix(r2, Gamma2)));
}

template <class T>
Var<T> token_update_reference(const Group& g, const Var<T>& H, const Var<T>& b, const Var<T>& Gamma,
                              const std::vector<int32_t>& ids) {
  const int64_t N = H.shape()[0], m = g.dim();
  const Var<T> rows = ag::embedding(b, ids, {N});  // b_{x_i} (N,m)
  return rplus(g, H, mix(ag::reshape(rows, Shape{N, m}), Gamma));
}

template <class T>
Var<T> osm_scan_reference(const Group& g, const Var<T>& H0, const Var<T>& table, const std::vector<int32_t>& ids,
                          int64_t B, int64_t T_, const Var<T>& Gamma, ScanDrive drive, int64_t renormalize_every) {
  const int64_t n = g.n(), V = table.shape()[0];
  if (static_cast<int64_t>(ids.size()) != B * T_) throw ShapeError("osm_scan_reference: ids must hold B*T entries");
  const Var<T> rows = ag::reshape(table, Shape{V, n * n});
  Var<T> H = H0;
  std::vector<Var<T>> states;
  for (int64_t t = 0; t < T_; ++t) {
    std::vector<int32_t> step(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) step[static_cast<size_t>(b)] = ids[static_cast<size_t>(b * T_ + t)];
    const Var<T> M = ag::reshape(ag::embedding(rows, step, {B}), Shape{B, n, n});  // M_t (B,n,n)
    Var<T> r;
    if (drive != ScanDrive::Token) r = groups::vee(g, groups::compose(g, H, M, /*conj_h=*/true));
    if (drive == ScanDrive::Token) r = groups::vee(g, M);
    if (drive == ScanDrive::Both) r = ag::add(r, groups::vee(g, M));
    H = rplus(g, H, mix(r, Gamma));
    if (renormalize_every > 0 && (t + 1) % renormalize_every == 0) H = groups::renormalize(g, H);
    states.push_back(ag::reshape(H, Shape{B, 1, n * n}));
  }
  return ag::reshape(ag::concat(states, 1), Shape{B * T_, n, n});
}

template <class T>
Var<T> mean_head_attention_reference(const Var<T>& X, const Var<T>& log_beta, const std::vector<T>& slopes, T s,
                                     int64_t B, int64_t T_) {
  const int heads = static_cast<int>(log_beta.shape()[0]);
  const int64_t D = X.shape().numel() / (B * T_);
  const Var<T> Xb = ag::reshape(X, Shape{B, T_, D});
  const Var<T> S = ag::scale(ag::matmul(Xb, Xb, false, true), s);  // S_ij = s <X_i, X_j> = Re tr(H_i* H_j)
  const Var<T> P = ag::softmax(ag::causal_attention_scores(S, ag::exp(log_beta), slopes, heads, false));  // (B*h,T,T)
  const Var<T> Abar = ag::reshape(ag::mean(ag::reshape(P, Shape{B, heads, T_ * T_}), 1), Shape{B, T_, T_});
  return ag::reshape(ag::matmul(Abar, Xb), X.shape());
}

template <class T>
Var<T> causal_self_attention_reference(const Var<T>& qkv, int heads, const std::vector<T>& slopes, T scale,
                                       double dropout, Rng* rng) {
  const int64_t D = qkv.shape()[2] / 3;
  const Var<T> q = ag::split_heads(ag::slice(qkv, 2, 0, D), heads);  // (B*h,T,e)
  const Var<T> k = ag::split_heads(ag::slice(qkv, 2, D, 2 * D), heads);
  const Var<T> v = ag::split_heads(ag::slice(qkv, 2, 2 * D, 3 * D), heads);
  const Var<T> scales = Var<T>::constant(Array<T>(Shape{heads}, scale));
  Var<T> P = ag::softmax(ag::causal_attention_scores(ag::matmul(q, k, false, true), scales, slopes, heads, true));
  if (dropout > 0) P = ag::dropout(P, dropout, *rng);
  return ag::merge_heads(ag::matmul(P, v), heads);
}

template <class T>
Var<T> lstm_scan_reference(const Var<T>& xw, const Var<T>& w_hh, const Var<T>& h0, const Var<T>& c0) {
  const int64_t B = xw.shape()[0], T_ = xw.shape()[1], h = w_hh.shape()[0];
  Var<T> hid = h0, cell = c0;
  std::vector<Var<T>> outs;
  for (int64_t t = 0; t < T_; ++t) {
    const Var<T> a = ag::add(ag::reshape(ag::slice(xw, 1, t, t + 1), Shape{B, 4 * h}), ag::matmul(hid, w_hh));
    const Var<T> i = ag::sigmoid(ag::slice(a, 1, 0, h)), f = ag::sigmoid(ag::slice(a, 1, h, 2 * h));
    const Var<T> gg = ag::tanh(ag::slice(a, 1, 2 * h, 3 * h)), o = ag::sigmoid(ag::slice(a, 1, 3 * h, 4 * h));
    cell = ag::add(ag::mul(f, cell), ag::mul(i, gg));
    hid = ag::mul(o, ag::tanh(cell));
    outs.push_back(ag::reshape(hid, Shape{B, 1, h}));
  }
  return ag::concat(outs, 1);
}

template <class T>
Var<T> exprnn_scan_reference(const Var<T>& x, const Var<T>& Q, const Var<T>& b, const Var<T>& h0) {
  const int64_t B = x.shape()[0], T_ = x.shape()[1], h = Q.shape()[0];
  Var<T> hid = h0;
  std::vector<Var<T>> outs;
  for (int64_t t = 0; t < T_; ++t) {
    const Var<T> z = ag::add(ag::matmul(hid, Q, false, true), ag::reshape(ag::slice(x, 1, t, t + 1), Shape{B, h}));
    hid = ag::modrelu(z, b);
    outs.push_back(ag::reshape(hid, Shape{B, 1, h}));
  }
  return ag::concat(outs, 1);
}

template <class T>
Var<T> linear_reference(const Var<T>& x, const Var<T>& W, const Var<T>& b) {
  const int64_t K = W.shape()[0];
  std::vector<int64_t> out = x.shape().vec();
  out.back() = W.shape()[1];
  const Var<T> y = ag::reshape(ag::matmul(ag::reshape(x, Shape{x.size() / K, K}), W), Shape::of(out));
  return b.defined() ? ag::add(y, b) : y;
}

template <class T>
Var<T> linear_residual_reference(const Var<T>& x, const Var<T>& W, const Var<T>& b, const Var<T>& r) {
  return ag::add(r, linear_reference(x, W, b));
}

template <class T>
Var<T> linear_gelu_reference(const Var<T>& x, const Var<T>& W, const Var<T>& b) {
  return ag::gelu(linear_reference(x, W, b));
}

template <class T>
Var<T> prototype_logits_reference(const Group& g, const Var<T>& H, const Var<T>& P, const Var<T>& log_tau,
                                  const Var<T>& bias) {
  return ag::add(ag::mul(groups::inner_all(g, H, P), ag::exp(log_tau)), bias);
}

#define LIEGRAD_INSTANTIATE(T)                                                                                      \
  template Var<T> relative_update_reference(const Group&, const Var<T>&, const Var<T>&, const Var<T>&);            \
  template Var<T> combined_update_reference(const Group&, const Var<T>&, const Var<T>&, const Var<T>&,           \
                                            const Var<T>&, const Var<T>&);                                         \
  template Var<T> token_update_reference(const Group&, const Var<T>&, const Var<T>&, const Var<T>&,              \
                                         const std::vector<int32_t>&);                                              \
  template Var<T> osm_scan_reference(const Group&, const Var<T>&, const Var<T>&, const std::vector<int32_t>&,     \
                                     int64_t, int64_t, const Var<T>&, ScanDrive, int64_t);                        \
  template Var<T> mean_head_attention_reference(const Var<T>&, const Var<T>&, const std::vector<T>&, T, int64_t,   \
                                                int64_t);                                                          \
  template Var<T> causal_self_attention_reference(const Var<T>&, int, const std::vector<T>&, T, double, Rng*);     \
  template Var<T> lstm_scan_reference(const Var<T>&, const Var<T>&, const Var<T>&, const Var<T>&);              \
  template Var<T> exprnn_scan_reference(const Var<T>&, const Var<T>&, const Var<T>&, const Var<T>&);            \
  template Var<T> linear_reference(const Var<T>&, const Var<T>&, const Var<T>&);                                   \
  template Var<T> linear_residual_reference(const Var<T>&, const Var<T>&, const Var<T>&, const Var<T>&);           \
  template Var<T> linear_gelu_reference(const Var<T>&, const Var<T>&, const Var<T>&);                            \
  template Var<T> prototype_logits_reference(const Group&, const Var<T>&, const Var<T>&, const Var<T>&, const Var<T>&);
LIEGRAD_INSTANTIATE(float)
LIEGRAD_INSTANTIATE(double)
#undef LIEGRAD_INSTANTIATE

}  // namespace liegrad::kernels
