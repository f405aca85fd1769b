// OSMFormer forward pass, config and registry entry (see osmformer.hpp).
#include "models/osmformer.hpp"

#include <cmath>

#include "autograd/ops.hpp"
#include "core/profile.hpp"
#include "groups/group_ops.hpp"
#include "kernels/attention_query.hpp"
#include "kernels/mean_attention.hpp"
#include "kernels/relative_update.hpp"
#include "kernels/token_update.hpp"
#include "models/param_search.hpp"

namespace liegrad::models {

Grounding parse_grounding(const std::string& s) {
  if (s == "relative" || s == "on") return Grounding::Relative;
  if (s == "combined") return Grounding::Combined;
  if (s == "token") return Grounding::Token;
  if (s == "off") return Grounding::Off;
  throw ConfigError("model.grounding: expected relative, combined, token or off (on = relative), got '" + s + "'");
}

std::string grounding_name(Grounding g) {
  switch (g) {
    case Grounding::Relative: return "relative";
    case Grounding::Combined: return "combined";
    case Grounding::Token: return "token";
    case Grounding::Off: return "off";
  }
  return "relative";
}

Grounding default_grounding(MixingKind mixing, bool shared_mixing, groups::GroupParamMode mode) {
  if (mixing == MixingKind::Identity)
    return mode == groups::GroupParamMode::Algebra ? Grounding::Token : Grounding::Combined;
  return shared_mixing ? Grounding::Combined : Grounding::Relative;
}

template <class T>
OsmFormer<T>::OsmFormer(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes)
    : ModelBase<T>(config, vocab, classes) {
  ConfigReader c = this->model_reader(config);
  cfg_ = OsmCommonConfig::read(c, this->config_);
  layers_ = c.get_int("layers", 3, 1);
  heads_ = c.get_int("heads", 4, 1);
  shared_mixing_ = c.get_string("grounding_mixing", "separate", {"separate", "shared"}) == "shared";
  const std::string fallback = grounding_name(default_grounding(cfg_.mixing, shared_mixing_, cfg_.param_mode));
  grounding_ = parse_grounding(c.get_string("grounding", fallback, {"relative", "on", "combined", "token", "off"}));
  const bool zero_init = c.get_string("grounding_init", "identity", {"identity", "zero"}) == "zero";
  alibi_ = c.get_string("positional", "alibi", {"alibi", "none"}) == "alibi";
  c.finish();
  const bool grounded = grounding_ != Grounding::Off;
  if (!grounded && (zero_init || shared_mixing_))
    throw ConfigError(std::string("model.") + (zero_init ? "grounding_init: zero" : "grounding_mixing: shared") +
                      " needs a grounding (model.grounding is off)");
  if (zero_init && shared_mixing_)
    throw ConfigError("model.grounding_init: zero with grounding_mixing: shared would start the attention at zero too");
  if (zero_init && cfg_.mixing != MixingKind::Linear)
    throw ConfigError("model.grounding_init: zero needs model.mixing 'linear' (Gamma_gnd = 0 at init)");
  if (grounding_ == Grounding::Token && cfg_.param_mode != groups::GroupParamMode::Algebra)
    throw ConfigError(
        "model.grounding: token re-applies the token's algebra coordinates b_x; it needs model.group_param 'algebra'");
  this->config_["type"] = "osmformer";
  this->config_["layers"] = layers_;
  this->config_["heads"] = heads_;
  this->config_["grounding"] = grounding_name(grounding_);
  // Written only when not the default, so earlier runs resolve as before.
  if (zero_init) this->config_["grounding_init"] = "zero";
  if (shared_mixing_) this->config_["grounding_mixing"] = "shared";
  this->config_["positional"] = alibi_ ? "alibi" : "none";
  if (alibi_)
    for (double s : ag::alibi_slopes(static_cast<int>(heads_))) slopes_.push_back(static_cast<T>(s));
  dropout_ = UpdateDropout<T>(cfg_.dropout, seed);
  Rng rng(seed);
  embed_ = groups::GroupParam<T>("embed", cfg_.group, vocab, cfg_.param_mode, cfg_.init_scale, rng, this->params_);
  readout_ = PrototypeReadout<T>(cfg_, this->C_, rng, this->params_);
  const int64_t m = cfg_.group->dim();
  const T beta0 = static_cast<T>(-0.5 * std::log(static_cast<double>(cfg_.group->complex_dim())));
  for (int64_t l = 0; l < layers_; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    Layer layer;
    layer.log_beta = this->add_param(p + "log_beta", Array<T>(Shape{heads_}, beta0), ag::ParamRole::Scalar);
    layer.mix_att = TangentMixing<T>(p + (shared_mixing_ ? "mix" : "mix_att"), cfg_.mixing, m, cfg_.rank, rng, this->params_);
    if (grounded && !shared_mixing_)
      layer.mix_gnd = TangentMixing<T>(p + "mix_gnd", cfg_.mixing, m, cfg_.rank, rng, this->params_, zero_init);
    blocks_.push_back(layer);
  }
}

template <class T>
ag::Var<T> OsmFormer<T>::forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>*) {
  return ag::reshape(readout_.logits(encode(inputs, B, T_)), Shape{B, T_, this->C_});
}

template <class T>
ag::Var<T> OsmFormer<T>::attention(const Layer& layer, const ag::Var<T>& H, int64_t B, int64_t T_) const {
  // A_i = (1/h) sum_k sum_j a^k_ij H_j, one fused op (kernels/mean_attention.hpp).
  return kernels::mean_head_attention(H, layer.log_beta, slopes_, static_cast<T>(cfg_.group->real_scale()), B, T_);
}

template <class T>
ag::Var<T> OsmFormer<T>::gamma_gnd(const Layer& layer, const ag::Var<T>& gamma_att) const {
  return shared_mixing_ ? gamma_att : layer.mix_gnd.dense();
}

template <class T>
ag::Var<T> OsmFormer<T>::update(const ag::Var<T>& H, const ag::Var<T>& A, const ag::Var<T>& M,
                                const ag::Var<T>& gamma_att, const ag::Var<T>& gamma_ground,
                                const std::vector<int32_t>& inputs) {
  const groups::Group& g = *cfg_.group;
  // Update dropout in training scales each token's A_i or M_i (u is linear in them) by
  // 0 or 1/(1-p); the token grounding's target is the token itself and is not dropped.
  switch (grounding_) {
    case Grounding::Relative: {
      const ag::Var<T> moved = kernels::relative_update(g, H, dropout_.apply(A), gamma_att);
      return kernels::relative_update(g, moved, dropout_.apply(M), gamma_ground);
    }
    case Grounding::Combined:
      return kernels::combined_update(g, H, dropout_.apply(A), gamma_att, dropout_.apply(M), gamma_ground);
    case Grounding::Token:
      return kernels::token_update(g, kernels::relative_update(g, H, dropout_.apply(A), gamma_att), token_coords(),
                                   gamma_ground, inputs);
    case Grounding::Off: break;
  }
  return kernels::relative_update(g, H, dropout_.apply(A), gamma_att);
}

template <class T>
Array<T> OsmFormer<T>::decode_step(int32_t symbol, DecodingCache<T>& cache) {
  using namespace ag;
  NoGrad no_grad;
  const groups::Group& g = *cfg_.group;
  const int64_t n = g.n(), D = n * n, P = cache.positions + 1;
  if (cache.positions == 0 || cache.constants.empty()) {  // a new window: what every step reuses
    cache.clear();
    cache.constants.push_back(Var<T>::constant(embed_.elements().value()));
    cache.constants.push_back(Var<T>::constant(readout_.prototypes().value()));
    for (const Layer& layer : blocks_) {
      const Var<T> gamma_att = layer.mix_att.dense();
      cache.constants.push_back(gamma_att);
      cache.constants.push_back(gamma_gnd(layer, gamma_att));
    }
    cache.layers.assign(blocks_.size(), {});
  }
  std::vector<T> beta;
  const std::vector<int32_t> inputs{symbol};
  const Var<T> M = embedding(cache.constants[0], inputs, {1});  // (1,n,n); throws for a symbol outside the vocabulary
  Var<T> H = M;
  for (size_t l = 0; l < blocks_.size(); ++l) {
    const Layer& layer = blocks_[l];
    std::vector<T>& X = cache.layers[l];
    X.insert(X.end(), H.value().data(), H.value().data() + D);
    beta.clear();
    for (int64_t k = 0; k < heads_; ++k) beta.push_back(std::exp(layer.log_beta.value()[k]));
    Array<T> A(Shape{1, n, n});
    kernels::mean_head_query(X.data(), P, D, beta, slopes_, static_cast<T>(g.real_scale()), A.data());
    H = update(H, Var<T>::constant(std::move(A)), M, cache.constants[2 + 2 * l], cache.constants[3 + 2 * l], inputs);
  }
  cache.positions = P;
  return readout_.logits(H, cache.constants[1]).value().reshaped(Shape{this->C_});
}

template <class T>
ag::Var<T> OsmFormer<T>::encode(const std::vector<int32_t>& inputs, int64_t B, int64_t T_) {
  using namespace ag;
  const int64_t N = B * T_;
  if (static_cast<int64_t>(inputs.size()) != N)
    throw ShapeError("osmformer: " + std::to_string(inputs.size()) + " inputs for a (" + std::to_string(B) + "," +
                     std::to_string(T_) + ") batch");
  Var<T> M = embedding(embed_.elements(), inputs, {N});  // token elements (B*T,n,n)
  Var<T> H = M;
  for (const Layer& layer : blocks_) {
    const Var<T> A = attention(layer, H, B, T_);
    const Var<T> gamma_att = layer.mix_att.dense();
    const Var<T> gamma_ground = gamma_gnd(layer, gamma_att);  // formed once (lowrank, bounded)
    H = update(H, A, M, gamma_att, gamma_ground, inputs);
  }
  return H;
}

template class OsmFormer<float>;
template class OsmFormer<double>;

ModelSpec osmformer_spec() {
  return model_spec<OsmFormer>("osmformer", {.knob = group_size_knob(true), .costs_per_token = osmformer_costs});
}

}  // namespace liegrad::models
