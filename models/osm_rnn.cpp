// OSM-RNN forward pass (see osm_rnn.hpp).
#include "models/osm_rnn.hpp"

#include "autograd/ops.hpp"
#include "groups/group_ops.hpp"
#include "groups/renormalize.hpp"

namespace liegrad::models {

template <class T>
OsmRnn<T>::OsmRnn(const nlohmann::json& config, int64_t vocab, uint64_t seed) : ModelBase<T>(config, vocab) {
  ConfigReader c(config, "model");
  c.allow({"type", "comment"});
  cfg_ = OsmCommonConfig::read(c, this->config_, "SO(16)");
  const std::string drive = c.get_string("rnn_drive", "relative", {"relative", "token", "both"});
  drive_ = drive == "relative" ? Drive::Relative : drive == "token" ? Drive::Token : Drive::Both;
  renormalize_every_ = c.get_int("renormalize_every", 16, 0);
  c.finish();
  this->config_["renormalize_every"] = renormalize_every_;
  this->config_["type"] = "osm_rnn";
  this->config_["rnn_drive"] = drive;
  Rng rng(seed);
  embed_ = groups::GroupParam<T>("embed", cfg_.group, vocab, cfg_.param_mode, cfg_.init_scale, rng, this->params_);
  readout_ = PrototypeReadout<T>(cfg_, vocab, rng, this->params_);
  mix_ = TangentMixing<T>("mix", cfg_.mixing, cfg_.group->dim(), cfg_.rank, rng, this->params_);
}

template <class T>
ag::Var<T> OsmRnn<T>::forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) {
  return ag::reshape(readout_.logits(encode(inputs, B, T_, state)), Shape{B, T_, this->V_});
}

template <class T>
ag::Var<T> OsmRnn<T>::encode(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) {
  using namespace ag;
  const groups::Group& g = *cfg_.group;
  const int64_t n = g.n(), V = this->V_;
  if (static_cast<int64_t>(inputs.size()) != B * T_)
    throw ShapeError("osm_rnn: " + std::to_string(inputs.size()) + " inputs for a (" + std::to_string(B) + "," +
                     std::to_string(T_) + ") batch");
  Array<T> H0;
  if (state && !state->empty()) {
    H0 = state->tensors.at(0);
    if (H0.shape() != Shape{B, n, n})
      throw ShapeError("osm_rnn: carried state " + H0.shape().str() + " does not fit batch " + std::to_string(B));
  } else {
    H0 = Array<T>(Shape{B, n, n});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < n; ++i) H0.at(b, i, i) = T(1);
  }
  Var<T> H = Var<T>::constant(std::move(H0));
  Var<T> table = reshape(embed_.elements(), Shape{V, n * n});  // token elements, flattened
  std::vector<Var<T>> states;
  states.reserve(static_cast<size_t>(T_));
  std::vector<int32_t> ids(static_cast<size_t>(B));
  for (int64_t t = 0; t < T_; ++t) {
    for (int64_t b = 0; b < B; ++b) ids[static_cast<size_t>(b)] = inputs[static_cast<size_t>(b * T_ + t)];
    Var<T> M = reshape(embedding(table, ids, {B}), Shape{B, n, n});
    Var<T> u;
    if (drive_ == Drive::Token)
      u = groups::vee(g, M);
    else
      u = groups::vee(g, groups::compose(g, H, M, true, false));  // coords of Pi(H* M)
    if (drive_ == Drive::Both) u = add(u, groups::vee(g, M));
    H = exp_update(g, H, mix_.apply(u));
    if (renormalize_every_ > 0 && (t + 1) % renormalize_every_ == 0) H = groups::renormalize(g, H);
    states.push_back(reshape(H, Shape{B, 1, n * n}));
  }
  if (state) state->tensors = {H.value()};
  return reshape(concat(states, 1), Shape{B * T_, n, n});  // (B*T,n,n)
}

template class OsmRnn<float>;
template class OsmRnn<double>;

}  // namespace liegrad::models
