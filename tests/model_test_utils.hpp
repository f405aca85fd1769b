// Helpers for model tests: a full-loss gradient check over every parameter in
// double, token streams, and a small Adam loop for memorisation tests.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "models/model.hpp"

namespace liegrad::test {

// Deterministic token stream of length n over V symbols.
inline std::vector<int32_t> tokens(int64_t n, int64_t V, uint64_t seed) {
  Rng r(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& x : t) x = static_cast<int32_t>(r.integer(V));
  return t;
}

// Gradient check of the mean cross-entropy with respect to every parameter tensor
// of a double model: for random directions v, compares the model's backward
// <grad, v> with the derivative of t -> loss(x + t v) at 0 by Ridders' extrapolation
// (ag::ridders_derivative). A fixed-step difference is not accurate enough here: a
// whole-model loss has directional derivatives as small as 1e-6 (where a 1e-6 step
// loses them to rounding) and, with GPT-style 0.02 initialisation feeding LayerNorm,
// third derivatives in the thousands (where a 1e-3 step loses them to truncation).
// Checks each parameter's worst relative error <= 1e-6 and returns the worst.
// before_forward, when given, runs before every forward pass (e.g. reseeding dropout
// with Model::begin_step, so every evaluation draws the same mask). model_gradcheck_of
// does the same for any scalar loss of the model, `loss` running its forward pass.
inline double model_gradcheck_of(models::Model<double>& model, const std::function<ag::Vard()>& loss, uint64_t seed,
                                 const std::function<void()>& before_forward = {}) {
  auto loss_value = [&]() {
    ag::NoGrad ng;
    if (before_forward) before_forward();
    return loss().value().item();
  };
  Rng rng(seed + 2);
  double worst = 0;
  for (auto& p : model.parameters()) {
    const Array<double> saved = p.var.value();
    double rel_worst = 0, abs_worst = 0;
    for (int trial = 0; trial < 2; ++trial) {
      const Array<double> v = rng.normal_array<double>(saved.shape());
      for (auto& q : model.parameters()) q.var.zero_grad();
      ag::Tape<double>::current().clear();
      if (before_forward) before_forward();
      ag::backward(loss());
      double analytic = 0;
      if (p.var.has_grad())
        for (int64_t i = 0; i < v.size(); ++i) analytic += p.var.grad()[i] * v[i];
      auto at = [&](double step) {
        for (int64_t i = 0; i < v.size(); ++i) p.var.value()[i] = saved[i] + step * v[i];
        return loss_value();
      };
      const double numeric = ag::ridders_derivative(at, 1e-3);
      p.var.value() = saved;
      const double err = std::abs(numeric - analytic);
      abs_worst = std::max(abs_worst, err);
      rel_worst = std::max(rel_worst, err / std::max({std::abs(numeric), std::abs(analytic), 1e-10}));
    }
    INFO("parameter " << p.name << " " << p.var.shape().str() << ": worst rel " << rel_worst << ", abs "
                      << abs_worst);
    CHECK(rel_worst <= 1e-6);
    worst = std::max(worst, rel_worst);
  }
  for (auto& q : model.parameters()) q.var.zero_grad();
  return worst;
}

inline double model_gradcheck(models::Model<double>& model, int64_t B, int64_t T_, uint64_t seed,
                              const std::function<void()>& before_forward = {}) {
  const int64_t V = model.vocab_size();
  const auto inputs = tokens(B * T_, V, seed), targets = tokens(B * T_, V, seed + 1);
  return model_gradcheck_of(
      model, [&] { return ag::cross_entropy(model.forward(inputs, B, T_), targets); }, seed, before_forward);
}

// Trains a float model with plain Adam (lr, betas 0.9/0.999) on one fixed sequence,
// predicting each next symbol; returns the loss (nats per symbol) after `steps`.
inline double memorise(models::Model<float>& model, const std::vector<int32_t>& seq, int steps, double lr) {
  const int64_t T_ = static_cast<int64_t>(seq.size()) - 1;
  std::vector<int32_t> in(seq.begin(), seq.end() - 1), tg(seq.begin() + 1, seq.end());
  auto& params = model.parameters();
  std::vector<Array<float>> m, v;
  for (auto& p : params) {
    m.emplace_back(p.var.shape());
    v.emplace_back(p.var.shape());
  }
  double last = 0;
  for (int step = 1; step <= steps; ++step) {
    for (auto& p : params) p.var.zero_grad();
    ag::Varf loss = ag::cross_entropy(model.forward(in, 1, T_), tg);
    last = loss.value().item();
    ag::backward(loss);
    const double b1 = 1 - std::pow(0.9, step), b2 = 1 - std::pow(0.999, step);
    for (size_t k = 0; k < params.size(); ++k) {
      auto& p = params[k];
      if (!p.var.has_grad()) continue;
      for (int64_t i = 0; i < p.var.size(); ++i) {
        const float g = p.var.grad()[i];
        m[k][i] = 0.9f * m[k][i] + 0.1f * g;
        v[k][i] = 0.999f * v[k][i] + 0.001f * g * g;
        p.var.value()[i] -= static_cast<float>(lr * (m[k][i] / b1) / (std::sqrt(v[k][i] / b2) + 1e-8));
      }
    }
  }
  return last;
}

// Causality of a (non-recurrent) model: for a window of T_ tokens over V symbols and every
// i, changing the tokens after position i (each moved by `shift` mod V) leaves the logits
// at positions 0..i the same bit for bit.
inline void check_causal(models::Model<float>& model, int64_t V, int64_t T_, int32_t shift) {
  ag::NoGrad ng;
  const auto a = tokens(T_, V, 1);
  const Array<float> la = model.forward(a, 1, T_).value();
  for (int64_t i = 0; i < T_ - 1; ++i) {
    auto b = a;
    for (int64_t j = i + 1; j < T_; ++j)
      b[static_cast<size_t>(j)] = static_cast<int32_t>((b[static_cast<size_t>(j)] + shift) % V);
    const Array<float> lb = model.forward(b, 1, T_).value();
    for (int64_t p = 0; p <= i; ++p)
      for (int64_t v = 0; v < V; ++v) REQUIRE(la.at(0, p, v) == lb.at(0, p, v));
  }
}

}  // namespace liegrad::test
