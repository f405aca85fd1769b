// Neural-network ops on the tape: row softmax and log-softmax, fused softmax
// cross-entropy with integer targets, LayerNorm, and embedding gather.
// "Rows" are the last axis: an (B,T,V) array has B*T rows of V.
#pragma once
#include <cstdint>
#include <vector>

#include "autograd/var.hpp"
#include "core/rng.hpp"

namespace liegrad::ag {

template <class T> Var<T> softmax(const Var<T>& x);
template <class T> Var<T> log_softmax(const Var<T>& x);

// Mean over rows of -log softmax(logits)[row, target[row]].
// logits (R,V) or (B,T,V) with R = B*T rows; targets: R ids in [0, V).
template <class T>
Var<T> cross_entropy(const Var<T>& logits, const std::vector<int32_t>& targets);

// Per-row negative log-likelihoods in double (no tape; for evaluation).
// logits (..,V) with R rows; returns R values.
template <class T>
std::vector<double> row_nll(const Array<T>& logits, const std::vector<int32_t>& targets);

// LayerNorm over the last axis (size D): (x - mean) / sqrt(var + eps) * gamma + beta,
// with the biased variance (Ba, Kiros, Hinton 2016). gamma, beta: (D).
template <class T>
Var<T> layer_norm(const Var<T>& x, const Var<T>& gamma, const Var<T>& beta, T eps = T(1e-5));

// Rows of table (V,...) picked by ids: out has shape out_lead + the table's trailing
// axes (a (V,D) table gives out_lead + (D); a (V,n,n) table of group elements gives
// out_lead + (n,n)), where out_lead is the leading shape of the ids (e.g. (B,T)); ids
// in [0, V).
template <class T>
Var<T> embedding(const Var<T>& table, const std::vector<int32_t>& ids, const std::vector<int64_t>& out_lead);

// modReLU (Arjovsky, Shah, Bengio 2016), real case: sign(z) * relu(|z| + b),
// with a bias b per feature (the last axis of z).
template <class T>
Var<T> modrelu(const Var<T>& z, const Var<T>& b);

// Inverted dropout: zeroes each element with probability p (drawn from rng) and
// scales the rest by 1/(1-p). p = 0 returns x unchanged (no node recorded).
template <class T>
Var<T> dropout(const Var<T>& x, double p, Rng& rng);

}  // namespace liegrad::ag
