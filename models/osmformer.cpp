// OSMFormer forward pass (see osmformer.hpp).
#include "models/osmformer.hpp"

#include <cmath>

#include "autograd/ops.hpp"
#include "core/profile.hpp"
#include "groups/group_ops.hpp"
#include "kernels/mean_attention.hpp"
#include "kernels/relative_update.hpp"

namespace liegrad::models {

template <class T>
OsmFormer<T>::OsmFormer(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes)
    : ModelBase<T>(config, vocab, classes) {
  ConfigReader c(config, "model");
  c.allow({"type", "comment"});
  cfg_ = OsmCommonConfig::read(c, this->config_, "SO(16)");
  layers_ = c.get_int("layers", 3, 1);
  heads_ = c.get_int("heads", 4, 1);
  grounding_ = c.get_string("grounding", "on", {"on", "off"}) == "on";
  alibi_ = c.get_string("positional", "alibi", {"alibi", "none"}) == "alibi";
  c.finish();
  this->config_["type"] = "osmformer";
  this->config_["layers"] = layers_;
  this->config_["heads"] = heads_;
  this->config_["grounding"] = grounding_ ? "on" : "off";
  this->config_["positional"] = alibi_ ? "alibi" : "none";
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
    layer.mix_att = TangentMixing<T>(p + "mix_att", cfg_.mixing, m, cfg_.rank, rng, this->params_);
    if (grounding_) layer.mix_gnd = TangentMixing<T>(p + "mix_gnd", cfg_.mixing, m, cfg_.rank, rng, this->params_);
    blocks_.push_back(layer);
  }
}

template <class T>
ag::Var<T> OsmFormer<T>::forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>*) {
  return ag::reshape(readout_.logits(encode(inputs, B, T_)), Shape{B, T_, this->C_});
}

template <class T>
ag::Var<T> OsmFormer<T>::encode(const std::vector<int32_t>& inputs, int64_t B, int64_t T_) {
  using namespace ag;
  const groups::Group& g = *cfg_.group;
  const int64_t N = B * T_;
  const int h = static_cast<int>(heads_);
  if (static_cast<int64_t>(inputs.size()) != N)
    throw ShapeError("osmformer: " + std::to_string(inputs.size()) + " inputs for a (" + std::to_string(B) + "," +
                     std::to_string(T_) + ") batch");
  std::vector<T> slopes;
  if (alibi_)
    for (double s : alibi_slopes(h)) slopes.push_back(static_cast<T>(s));
  Var<T> M = embedding(embed_.elements(), inputs, {N});  // token elements (B*T,n,n)
  Var<T> H = M;
  const T s_real = static_cast<T>(g.real_scale());
  for (const Layer& layer : blocks_) {
    // A_i = (1/h) sum_k sum_j a^k_ij H_j, one fused op (kernels/mean_attention.hpp).
    const Var<T> A = kernels::mean_head_attention(H, layer.log_beta, slopes, s_real, B, T_);
    // H <- H exp(hat(Gamma vee(H* A))), then the same towards the token elements M; update
    // dropout in training scales each token's A_i or M_i (u is linear in them) by 0 or 1/(1-p).
    H = kernels::relative_update(g, H, dropout_.apply(A), layer.mix_att.dense());
    if (grounding_) H = kernels::relative_update(g, H, dropout_.apply(M), layer.mix_gnd.dense());
  }
  return H;
}

template class OsmFormer<float>;
template class OsmFormer<double>;

}  // namespace liegrad::models
