// The orthogonal-operator RNN baseline (docs/models.md §6; expRNN, Lezcano-Casado &
// Martinez-Rubio 2019): only the transition is constrained to the group,
//
//   h_{t+1} = modrelu(exp(A) h_t + U e_{x_t}; b),   A skew-symmetric (h x h),
//   logits_t = h_{t+1} W + c,
//
// with modrelu(z; b) = sign(z) relu(|z| + b) per unit (Arjovsky et al. 2016) and
// A = hat(a) from coordinates a of so(h) (m = h(h-1)/2). This is the contrast the
// OSM models are argued against: the state is a vector, not a group element.
// Config keys: hidden. Parameters: transition ((1,m) coords), input (V,h) = U's columns,
// modrelu_bias (h), head.weight (h,C), head.bias (C).
// Count: h(h-1)/2 + V*h + h + h*C + C (C = V for a language model). State: h (B,h).
#pragma once
#include "models/decoding.hpp"
#include "models/model_base.hpp"
#include "models/registry.hpp"

namespace liegrad::models {

template <class T>
class ExpRnn : public ModelBase<T>, public IncrementalDecoding<T> {
 public:
  // vocab V input symbols, classes C readout rows (<= 0: C = V, a language model).
  ExpRnn(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes = 0);
  std::string type() const override { return "exprnn"; }
  bool recurrent() const override { return true; }
  ag::Var<T> forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) override;
  // Cached steps (models/decoding.hpp): constants[0] holds Q = exp(A) (h,h), formed once
  // per cache instead of once per call (an h x h exponential, ~h^3 work, against the
  // step's h^2), layers[0] the hidden state h (h).
  IncrementalDecoding<T>* incremental_decoding() override { return this; }
  Array<T> decode_step(int32_t symbol, DecodingCache<T>& cache) override;

 private:
  int64_t hidden_;
  std::shared_ptr<const groups::Group> group_;  // SO(hidden)
  ag::Var<T> transition_, input_, bias_, head_w_, head_b_;
};

// The work of one training step per token, per op family, from the resolved config
// (models/exprnn_cost.cpp; models/roofline.hpp).
StepCosts exprnn_costs(const nlohmann::json& resolved, const CostInputs& in);

// The registry entry of "exprnn" (models/registry.hpp): factory, keys, --match knob, FLOPs.
ModelSpec exprnn_spec();

}  // namespace liegrad::models
