// Unfused references of the fused kernels: each one the spec's formula written with
// the plain tape ops (autograd/, groups/group_ops.hpp, groups::expm), one node per
// step, so it reads like the maths and its derivative comes from the ops' own
// pullbacks. They are slow and allocate freely; the models never run them. They exist
// so that a test can show fused == reference, forward and backward, in double
// (tests/test_kernel_reference.cpp, `liegrad gradcheck`), and so that a reader learns
// what each kernel computes before reading how it computes it.
//
//   relative_update_reference   H' = H exp(hat(Gamma vee(H* P)))                (docs/models.md §4, §5)
//   combined_update_reference   H' = H exp(hat(Gamma1 vee(H* P1) + Gamma2 vee(H* P2)))   (docs/models.md §5)
//   token_update_reference      H'_i = H_i exp(hat(Gamma b_{x_i}))                  (docs/models.md §5)
//   osm_scan_reference          for t: H <- H exp(hat(Gamma r_t)), r_t from H* M_t and/or M_t  (docs/models.md §4)
//   mean_head_attention_reference  out = (1/h) sum_k softmax_causal(beta_k s X X^T - ALiBi_k) X  (docs/models.md §5)
//   causal_self_attention_reference  per head softmax_causal(scale q k^T - ALiBi_k) v     (docs/models.md §6),
//                                    with attention dropout on the probabilities
//   lstm_scan_reference          a_t = xw_t + h_{t-1} W_hh; i,f,o = sigmoid; g = tanh;
//                                c_t = f c_{t-1} + i g; h_t = o tanh(c_t)          (Hochreiter & Schmidhuber 1997)
//   exprnn_scan_reference        z_t = h_{t-1} Q^T + x_t; h_t = modrelu(z_t, b)  (Lezcano-Casado &
//                                Martinez-Rubio 2019; the expRNN baseline, docs/models.md)
//   linear_reference             x W + b           (autograd/linear.hpp's fused dense layers:
//   linear_residual_reference    r + x W + b        the transformer's, docs/models.md §6)
//   linear_gelu_reference        gelu(x W + b)
//   prototype_logits_reference   exp(log_tau) inner_all(H, P) + bias  (the OSM readout, docs/models.md §3)
//
// Arguments and shapes are those of the fused op each mirrors (see its header).
#pragma once
#include <cstdint>
#include <vector>

#include "autograd/var.hpp"
#include "core/rng.hpp"
#include "groups/group.hpp"
#include "kernels/osm_scan.hpp"

namespace liegrad::kernels {

// H, P (N,n,n); Gamma (m,m) or undefined (identity mixing).
template <class T>
ag::Var<T> relative_update_reference(const groups::Group& g, const ag::Var<T>& H, const ag::Var<T>& P,
                                     const ag::Var<T>& Gamma);

// H, P1, P2 (N,n,n); Gamma1, Gamma2 (m,m) or undefined.
template <class T>
ag::Var<T> combined_update_reference(const groups::Group& g, const ag::Var<T>& H, const ag::Var<T>& P1,
                                     const ag::Var<T>& Gamma1, const ag::Var<T>& P2, const ag::Var<T>& Gamma2);

// H (N,n,n), b (V,m), Gamma (m,m) or undefined, ids (N).
template <class T>
ag::Var<T> token_update_reference(const groups::Group& g, const ag::Var<T>& H, const ag::Var<T>& b,
                                  const ag::Var<T>& Gamma, const std::vector<int32_t>& ids);

// H0 (B,n,n), table (V,n,n), ids (B*T) over (B,T); returns (B*T,n,n) like osm_scan.
template <class T>
ag::Var<T> osm_scan_reference(const groups::Group& g, const ag::Var<T>& H0, const ag::Var<T>& table,
                              const std::vector<int32_t>& ids, int64_t B, int64_t T_, const ag::Var<T>& Gamma,
                              ScanDrive drive, int64_t renormalize_every);

// X (B*T rows of D, any shape), log_beta (h); returns X's shape.
template <class T>
ag::Var<T> mean_head_attention_reference(const ag::Var<T>& X, const ag::Var<T>& log_beta, const std::vector<T>& slopes,
                                         T s, int64_t B, int64_t T_);

// qkv (B,T,3D) -> (B,T,D); dropout > 0 applies ag::dropout(P, dropout, *rng) to the probabilities.
template <class T>
ag::Var<T> causal_self_attention_reference(const ag::Var<T>& qkv, int heads, const std::vector<T>& slopes, T scale,
                                           double dropout = 0.0, Rng* rng = nullptr);

// xw (B,T,4h), w_hh (h,4h), h0, c0 (B,h) -> hidden states (B,T,h).
template <class T>
ag::Var<T> lstm_scan_reference(const ag::Var<T>& xw, const ag::Var<T>& w_hh, const ag::Var<T>& h0,
                               const ag::Var<T>& c0);

template <class T>
ag::Var<T> exprnn_scan_reference(const ag::Var<T>& x, const ag::Var<T>& Q, const ag::Var<T>& b, const ag::Var<T>& h0);

// x (..., K), W (K,N), b (N) or undefined, r (..., N) -> (..., N).
template <class T>
ag::Var<T> linear_reference(const ag::Var<T>& x, const ag::Var<T>& W, const ag::Var<T>& b);
template <class T>
ag::Var<T> linear_residual_reference(const ag::Var<T>& x, const ag::Var<T>& W, const ag::Var<T>& b,
                                     const ag::Var<T>& r);
template <class T>
ag::Var<T> linear_gelu_reference(const ag::Var<T>& x, const ag::Var<T>& W, const ag::Var<T>& b);

// H (N,n,n), P (C,n,n), log_tau (), bias (C) -> logits (N,C).
template <class T>
ag::Var<T> prototype_logits_reference(const groups::Group& g, const ag::Var<T>& H, const ag::Var<T>& P,
                                      const ag::Var<T>& log_tau, const ag::Var<T>& bias);

}  // namespace liegrad::kernels
