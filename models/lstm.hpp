// The LSTM baseline (docs/models.md §6; Hochreiter & Schmidhuber 1997, with forget gate):
// an embedding V x h, `layers` LSTM layers with gates ordered (i, f, g, o), one bias
// of 4h per layer (forget-gate part initialised to 1), and a linear head h -> C.
//
//   [i f g o] = x_t W_ih + h_{t-1} W_hh + b
//   c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g),  h_t = sigmoid(o) * tanh(c_t)
//
// Config keys: hidden (h), layers, head (linear | rotation: h -> 6 -> SO(3) by the 6D
// Gram-Schmidt map, models/continuous.hpp; C = 9). Count: V*h + layers*(8h^2 + 4h) + h*C + C
// (C = V for a language model; C classes otherwise; 6 in place of C with the rotation head).
// Real-valued inputs (ContinuousInput): features (B,T,F), F = V, times the embedding (F,h).
// State: (h, c) per layer, each (B,h). Weights are stored (in, out).
// Each layer's window is one fused tape op (kernels::lstm_scan): batch rows in parallel,
// the recurrence as one (rows x h) by (h x 4h) product per step and thread.
#pragma once
#include "models/capabilities.hpp"
#include "models/model_base.hpp"
#include "models/registry.hpp"

namespace liegrad::models {

template <class T>
class Lstm : public ModelBase<T>, public ContinuousInput<T> {
 public:
  // vocab V input symbols, classes C readout rows (<= 0: C = V, a language model).
  Lstm(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes = 0);
  std::string type() const override { return "lstm"; }
  bool recurrent() const override { return true; }
  ag::Var<T> forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) override;
  ag::Var<T> forward_features(const Array<T>& features, int64_t B, int64_t T_, RecurrentState<T>* state) override;
  bool outputs_rotations() const override { return rotation_head_; }
  ContinuousInput<T>* continuous_input() override { return this; }

 private:
  void check_state(const RecurrentState<T>* state) const;
  // The layers and the head on embedded inputs x (B,T,h): outputs (B,T,C).
  ag::Var<T> layers_and_head(ag::Var<T> x, int64_t B, int64_t T_, RecurrentState<T>* state);
  struct Layer {
    ag::Var<T> w_ih, w_hh, bias;
  };
  int64_t hidden_, layers_;
  bool rotation_head_ = false;
  ag::Var<T> embed_, head_w_, head_b_;
  std::vector<Layer> cells_;
};

// The work of one training step per token, per op family, from the resolved config
// (models/lstm_cost.cpp; models/roofline.hpp).
StepCosts lstm_costs(const nlohmann::json& resolved, const CostInputs& in);

// The registry entry of "lstm" (models/registry.hpp): factory, keys, --match knob, FLOPs.
ModelSpec lstm_spec();

}  // namespace liegrad::models
