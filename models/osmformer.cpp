// OSMFormer forward pass, config and registry entry (see osmformer.hpp).
#include "models/osmformer.hpp"

#include <cmath>

#include "autograd/ops.hpp"
#include "core/profile.hpp"
#include "groups/group_ops.hpp"
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
ag::Var<T> OsmFormer<T>::encode(const std::vector<int32_t>& inputs, int64_t B, int64_t T_) {
  using namespace ag;
  const groups::Group& g = *cfg_.group;
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
    // Update dropout in training scales each token's A_i or M_i (u is linear in them) by
    // 0 or 1/(1-p); the token grounding's target is the token itself and is not dropped.
    switch (grounding_) {
      case Grounding::Relative:
        H = kernels::relative_update(g, H, dropout_.apply(A), gamma_att);
        H = kernels::relative_update(g, H, dropout_.apply(M), gamma_ground);
        break;
      case Grounding::Combined:
        H = kernels::combined_update(g, H, dropout_.apply(A), gamma_att, dropout_.apply(M), gamma_ground);
        break;
      case Grounding::Token:
        H = kernels::relative_update(g, H, dropout_.apply(A), gamma_att);
        H = kernels::token_update(g, H, token_coords(), gamma_ground, inputs);
        break;
      case Grounding::Off:
        H = kernels::relative_update(g, H, dropout_.apply(A), gamma_att);
        break;
    }
  }
  return H;
}

template class OsmFormer<float>;
template class OsmFormer<double>;

ModelSpec osmformer_spec() {
  return model_spec<OsmFormer>("osmformer", {.knob = group_size_knob(true), .costs_per_token = osmformer_costs});
}

}  // namespace liegrad::models
