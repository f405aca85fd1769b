// LSTM forward pass over a window, carrying (h, c) per layer (see lstm.hpp).
// Initialisation follows PyTorch's nn.LSTM / nn.Linear: U(-1/sqrt(h), 1/sqrt(h)),
// embedding N(0, 1), then the forget-gate bias set to 1 (Jozefowicz et al. 2015).
#include "models/lstm.hpp"

#include <cmath>

#include "autograd/ops.hpp"
#include "models/config.hpp"

namespace liegrad::models {

using groups::ParamRole;

template <class T>
Lstm<T>::Lstm(const nlohmann::json& config, int64_t vocab, uint64_t seed) : ModelBase<T>(config, vocab) {
  ConfigReader c(config, "model");
  c.allow({"type", "comment"});
  hidden_ = c.get_int("hidden", 104, 1);
  layers_ = c.get_int("layers", 1, 1);
  c.finish();
  this->config_["type"] = "lstm";
  this->config_["hidden"] = hidden_;
  this->config_["layers"] = layers_;
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
  head_w_ = this->add_param("head.weight", rng.uniform_array<T>(Shape{h, V}, -bound, bound), ParamRole::Weight);
  head_b_ = this->add_param("head.bias", rng.uniform_array<T>(Shape{V}, -bound, bound), ParamRole::Bias);
}

template <class T>
ag::Var<T> Lstm<T>::forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) {
  using namespace ag;
  const int64_t h = hidden_;
  const bool carry = state && !state->empty();
  if (carry && static_cast<int64_t>(state->tensors.size()) != 2 * layers_)
    throw ShapeError("lstm: carried state has " + std::to_string(state->tensors.size()) + " tensors, expected " +
                     std::to_string(2 * layers_));
  Var<T> x = embedding(embed_, inputs, {B, T_});  // (B,T,h)
  std::vector<Array<T>> final_state;
  for (int64_t l = 0; l < layers_; ++l) {
    const Layer& cell = cells_[static_cast<size_t>(l)];
    Var<T> xw = add(matmul(x, cell.w_ih), cell.bias);  // (B,T,4h), all steps in one product
    Var<T> hs = Var<T>::constant(carry ? state->tensors[static_cast<size_t>(2 * l)] : Array<T>(Shape{B, h}));
    Var<T> cs = Var<T>::constant(carry ? state->tensors[static_cast<size_t>(2 * l + 1)] : Array<T>(Shape{B, h}));
    if (hs.shape() != Shape{B, h}) throw ShapeError("lstm: carried state " + hs.shape().str() + " does not fit batch " + std::to_string(B));
    std::vector<Var<T>> outs;
    outs.reserve(static_cast<size_t>(T_));
    for (int64_t t = 0; t < T_; ++t) {
      Var<T> g = add(reshape(slice(xw, 1, t, t + 1), Shape{B, 4 * h}), matmul(hs, cell.w_hh));  // (B,4h)
      Var<T> i = sigmoid(slice(g, 1, 0, h));
      Var<T> f = sigmoid(slice(g, 1, h, 2 * h));
      Var<T> gg = tanh(slice(g, 1, 2 * h, 3 * h));
      Var<T> o = sigmoid(slice(g, 1, 3 * h, 4 * h));
      cs = add(mul(f, cs), mul(i, gg));
      hs = mul(o, tanh(cs));
      outs.push_back(reshape(hs, Shape{B, 1, h}));
    }
    final_state.push_back(hs.value());
    final_state.push_back(cs.value());
    x = concat(outs, 1);  // (B,T,h)
  }
  if (state) state->tensors = std::move(final_state);
  return add(matmul(x, head_w_), head_b_);  // (B,T,V)
}

template class Lstm<float>;
template class Lstm<double>;

}  // namespace liegrad::models
