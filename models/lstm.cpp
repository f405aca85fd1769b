// LSTM forward pass over a window, carrying (h, c) per layer, and its registry entry
// (see lstm.hpp).
// Initialisation follows PyTorch's nn.LSTM / nn.Linear: U(-1/sqrt(h), 1/sqrt(h)),
// embedding N(0, 1), then the forget-gate bias set to 1 (Jozefowicz et al. 2015).
#include "models/lstm.hpp"

#include <cmath>
#include <tuple>

#include "autograd/ops.hpp"
#include "core/profile.hpp"
#include "kernels/lstm_scan.hpp"
#include "core/config.hpp"
#include "models/continuous.hpp"
#include "models/param_search.hpp"

namespace liegrad::models {

using ag::ParamRole;

template <class T>
Lstm<T>::Lstm(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes)
    : ModelBase<T>(config, vocab, classes) {
  ConfigReader c = this->model_reader(config);
  hidden_ = c.get_int("hidden", 104, 1);
  layers_ = c.get_int("layers", 1, 1);
  rotation_head_ = c.get_string("head", "linear", {"linear", "rotation"}) == "rotation";
  c.finish();
  if (rotation_head_) check_rotation_classes("head", this->C_);
  this->config_["type"] = "lstm";
  this->config_["hidden"] = hidden_;
  this->config_["layers"] = layers_;
  if (rotation_head_) this->config_["head"] = "rotation";  // only when set: older runs resolve as before
  Rng rng(seed);
  const int64_t h = hidden_, V = vocab;
  const double bound = 1.0 / std::sqrt(static_cast<double>(h));
  embed_ = this->add_param("embed", rng.normal_array<T>(Shape{V, h}), ParamRole::Weight);
  for (int64_t l = 0; l < layers_; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    Layer layer;
    layer.w_ih = this->add_param(p + "w_ih", rng.uniform_array<T>(Shape{h, 4 * h}, -bound, bound), ParamRole::Weight);
    layer.w_hh = this->add_param(p + "w_hh", rng.uniform_array<T>(Shape{h, 4 * h}, -bound, bound), ParamRole::Weight);
    Array<T> b = rng.uniform_array<T>(Shape{4 * h}, -bound, bound);
    for (int64_t j = h; j < 2 * h; ++j) b[j] = T(1);  // forget gate
    layer.bias = this->add_param(p + "bias", std::move(b), ParamRole::Bias);
    cells_.push_back(layer);
  }
  std::tie(head_w_, head_b_) = this->add_linear_head(rng, h, rotation_head_ ? kRotationHeadWidth : 0);
  if (rotation_head_) add_identity_to_rotation_bias(head_b_.value());
}

template <class T>
ag::Var<T> Lstm<T>::forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) {
  check_state(state);
  return layers_and_head(ag::embedding(embed_, inputs, {B, T_}), B, T_, state);  // (B,T,h) in
}

template <class T>
ag::Var<T> Lstm<T>::forward_features(const Array<T>& features, int64_t B, int64_t T_, RecurrentState<T>* state) {
  check_state(state);
  return layers_and_head(embed_features(embed_, features, B, T_, "lstm"), B, T_, state);
}

template <class T>
void Lstm<T>::check_state(const RecurrentState<T>* state) const {
  if (state && !state->empty() && static_cast<int64_t>(state->tensors.size()) != 2 * layers_)
    throw ShapeError("lstm: carried state has " + std::to_string(state->tensors.size()) + " tensors, expected " +
                     std::to_string(2 * layers_));
}

template <class T>
ag::Var<T> Lstm<T>::layers_and_head(ag::Var<T> x, int64_t B, int64_t T_, RecurrentState<T>* state) {
  using namespace ag;
  const int64_t h = hidden_;
  const bool carry = state && !state->empty();
  std::vector<Array<T>> final_state;
  prof::Tag dense(prof::Family::Dense);
  for (int64_t l = 0; l < layers_; ++l) {
    const Layer& cell = cells_[static_cast<size_t>(l)];
    Var<T> xw = linear(x, cell.w_ih, cell.bias);  // (B,T,4h), all steps in one product
    Var<T> h0 = Var<T>::constant(carry ? state->tensors[static_cast<size_t>(2 * l)] : Array<T>(Shape{B, h}));
    Var<T> c0 = Var<T>::constant(carry ? state->tensors[static_cast<size_t>(2 * l + 1)] : Array<T>(Shape{B, h}));
    if (h0.shape() != Shape{B, h}) throw ShapeError("lstm: carried state " + h0.shape().str() + " does not fit batch " + std::to_string(B));
    // The whole window of this layer in one fused op (kernels/lstm_scan.hpp).
    Array<T> c_last;
    x = kernels::lstm_scan(xw, cell.w_hh, h0, c0, &c_last);  // (B,T,h)
    Array<T> h_last(Shape{B, h});
    for (int64_t b = 0; b < B; ++b)
      std::copy(x.value().data() + (b * T_ + T_ - 1) * h, x.value().data() + (b * T_ + T_) * h, h_last.data() + b * h);
    final_state.push_back(std::move(h_last));
    final_state.push_back(std::move(c_last));
  }
  if (state) state->tensors = std::move(final_state);
  prof::Tag readout(prof::Family::Readout);
  if (rotation_head_) return rotation_head(linear(x, head_w_, head_b_), B, T_);  // (B,T,9)
  return linear(x, head_w_, head_b_);  // (B,T,C)
}

template class Lstm<float>;
template class Lstm<double>;

ModelSpec lstm_spec() {
  // 48 L h^2 + 6 h V FLOPs (measure/bench.hpp), split per family in models/lstm_cost.cpp.
  return model_spec<Lstm>("lstm", {.knob = integer_knob("hidden", 2, 4096), .costs_per_token = lstm_costs});
}

}  // namespace liegrad::models
