// The OSM models' prototype readout (models/osm_common.hpp, PrototypeReadout) as one
// fused tape op:
//
//   logits[i, c] = exp(log_tau) * s * Re tr(H_i* P_c) + bias[c]
//
// with s = g.real_scale(), so s Re tr(H* P) is the real dot product of the stored
// matrices that groups::inner_all computes (groups/group_ops.hpp). With tau = exp(log_tau)
// and G = dL/dlogits (N, C), the backward is
//
//   dbias[c]  += sum_i G[i, c]
//   dlog_tau  += sum_{i,c} G[i, c] (logits[i, c] - bias[c])     (= G . tau S)
//   dH        += s tau G vec(P),   dP += s tau G^T vec(H)        (one gemm_group)
//
// reading the op's own output for dlog_tau. It replaces inner_all -> mul(exp(log_tau))
// -> add(bias): three (N, C) arrays and four passes over them fewer, and H's gradient
// is written in place instead of zero-filled and added to when nothing has flowed into
// it yet (the OSM-RNN's states feed only the readout). The unfused composition stays as
// the reference (kernels/kernel_checks.cpp compares the two in double).
#pragma once
#include "autograd/var.hpp"
#include "groups/group.hpp"

namespace liegrad::kernels {

// H (N,n,n), P (C,n,n), log_tau () (a parameter, or a constant for a fixed tau),
// bias (C) -> logits (N,C).
template <class T>
ag::Var<T> prototype_logits(const groups::Group& g, const ag::Var<T>& H, const ag::Var<T>& P,
                            const ag::Var<T>& log_tau, const ag::Var<T>& bias);

// For generation, off the tape: the forward's product reads the prototypes transposed,
// which it forms anew on every call; a decoding cache forms them once per stream
// (prototypes_transposed) and reads N rows of logits with the forward's own arithmetic,
// so they equal prototype_logits' rows bit for bit.
// P (C,n,n) -> vec(P)^T (n*n, C).
template <class T>
Array<T> prototypes_transposed(const Array<T>& P);
// H (N,n,n), Pt (n*n, C) from prototypes_transposed, log_tau (), bias (C) -> logits (N,C).
template <class T>
Array<T> prototype_logits_pretransposed(const groups::Group& g, const Array<T>& H, const Array<T>& Pt,
                                        const Array<T>& log_tau, const Array<T>& bias);

}  // namespace liegrad::kernels
