// Transformer baseline forward pass and registry entry (see transformer.hpp).
// Initialisation follows GPT-2 (Radford et al. 2019): weights N(0, 0.02^2), residual
// output projections scaled by 1/sqrt(2L), biases 0, LayerNorm gains 1.
#include "models/transformer.hpp"

#include <cmath>

#include "autograd/ops.hpp"
#include "core/profile.hpp"
#include "kernels/attention_query.hpp"
#include "kernels/causal_mha.hpp"
#include "core/config.hpp"
#include "models/continuous.hpp"
#include "models/param_search.hpp"

namespace liegrad::models {

using ag::ParamRole;

template <class T>
Transformer<T>::Transformer(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes)
    : ModelBase<T>(config, vocab, classes), dropout_rng_(seed ^ 0x5eedULL) {
  ConfigReader c = this->model_reader(config);
  D_ = c.get_int("D", 64, 1);
  L_ = c.get_int("layers", 2, 1);
  heads_ = c.get_int("heads", 4, 1);
  dropout_ = c.get_double("dropout", 0.0, 0.0, 0.99);
  alibi_ = c.get_string("positional", "alibi", {"alibi", "none"}) == "alibi";
  const double std_ = c.get_double("init_std", 0.02, 0.0);
  // tied: logits = x embed^T with no bias (the paper's 104K layout, docs/models.md §6).
  // rotation: 6 outputs per position mapped onto SO(3) (models/continuous.hpp).
  const std::string head = c.get_string("head", "untied", {"untied", "tied", "rotation"});
  tied_head_ = head == "tied";
  rotation_head_ = head == "rotation";
  c.finish();
  if (rotation_head_) check_rotation_classes("head", this->C_);
  if (D_ % heads_ != 0)
    throw ConfigError("model.D: " + std::to_string(D_) + " is not divisible by model.heads = " + std::to_string(heads_));
  this->config_["type"] = "transformer";
  this->config_["D"] = D_;
  this->config_["layers"] = L_;
  this->config_["heads"] = heads_;
  this->config_["dropout"] = dropout_;
  this->config_["positional"] = alibi_ ? "alibi" : "none";
  this->config_["init_std"] = std_;
  if (tied_head_ || rotation_head_) this->config_["head"] = head;  // only when set: older runs resolve as before
  if (tied_head_ && this->C_ != vocab)
    throw ConfigError("model.head: tied needs as many classes as input symbols (" + std::to_string(this->C_) +
                      " classes, " + std::to_string(vocab) + " symbols)");

  Rng rng(seed);
  const int64_t V = vocab, C = rotation_head_ ? kRotationHeadWidth : this->C_, D = D_;
  const double resid_std = std_ / std::sqrt(2.0 * static_cast<double>(L_));
  auto weight = [&](const std::string& n, Shape s, double sd) {
    return this->add_param(n, rng.normal_array<T>(s, sd), ParamRole::Weight);
  };
  auto zeros = [&](const std::string& n, int64_t len, ParamRole role) {
    return this->add_param(n, Array<T>(Shape{len}), role);
  };
  auto ones = [&](const std::string& n, int64_t len) {
    return this->add_param(n, Array<T>(Shape{len}, T(1)), ParamRole::Norm);
  };
  embed_ = weight("embed", Shape{V, D}, std_);
  for (int64_t l = 0; l < L_; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    Block b;
    b.ln1_w = ones(p + "ln1.weight", D);
    b.ln1_b = zeros(p + "ln1.bias", D, ParamRole::Norm);
    b.qkv_w = weight(p + "attn.qkv.weight", Shape{D, 3 * D}, std_);
    b.qkv_b = zeros(p + "attn.qkv.bias", 3 * D, ParamRole::Bias);
    b.proj_w = weight(p + "attn.proj.weight", Shape{D, D}, resid_std);
    b.proj_b = zeros(p + "attn.proj.bias", D, ParamRole::Bias);
    b.ln2_w = ones(p + "ln2.weight", D);
    b.ln2_b = zeros(p + "ln2.bias", D, ParamRole::Norm);
    b.fc_w = weight(p + "mlp.fc.weight", Shape{D, 4 * D}, std_);
    b.fc_b = zeros(p + "mlp.fc.bias", 4 * D, ParamRole::Bias);
    b.fc2_w = weight(p + "mlp.proj.weight", Shape{4 * D, D}, resid_std);
    b.fc2_b = zeros(p + "mlp.proj.bias", D, ParamRole::Bias);
    blocks_.push_back(b);
  }
  lnf_w_ = ones("ln_f.weight", D);
  lnf_b_ = zeros("ln_f.bias", D, ParamRole::Norm);
  if (!tied_head_) {
    head_w_ = weight("head.weight", Shape{D, C}, std_);
    head_b_ = zeros("head.bias", C, ParamRole::Bias);
    if (rotation_head_) add_identity_to_rotation_bias(head_b_.value());
  }
}

template <class T>
ag::Var<T> Transformer<T>::attention(const Block& blk, const ag::Var<T>& h, const ag::Var<T>& residual) {
  using namespace ag;
  const int H = static_cast<int>(heads_);
  Var<T> qkv;
  {
    prof::Tag timed(prof::Family::Dense);
    qkv = linear(h, blk.qkv_w, blk.qkv_b);  // (B,T,3D)
  }
  prof::Tag timed(prof::Family::Attention);
  // All heads in one fused op (kernels/causal_mha.hpp), attention dropout included: it
  // draws the same mask from dropout_rng_ as dropout(softmax(S)) would.
  const double p = training_ ? dropout_ : 0.0;
  Var<T> o = kernels::causal_self_attention(qkv, H, slopes(), score_scale(), p, p > 0 ? &dropout_rng_ : nullptr);  // (B,T,D)
  prof::Tag dense(prof::Family::Dense);
  // The residual add in the projection (x + o W + b) unless dropout comes between them.
  return residual.defined() ? linear_residual(o, blk.proj_w, blk.proj_b, residual) : linear(o, blk.proj_w, blk.proj_b);
}

template <class T>
std::vector<T> Transformer<T>::slopes() const {
  std::vector<T> s;
  if (alibi_)
    for (double x : ag::alibi_slopes(static_cast<int>(heads_))) s.push_back(static_cast<T>(x));
  return s;
}

template <class T>
ag::Var<T> Transformer<T>::mlp_residual(const Block& blk, const ag::Var<T>& x) const {
  using namespace ag;
  prof::Tag timed(prof::Family::Dense);
  return linear_residual(linear_gelu(layer_norm(x, blk.ln2_w, blk.ln2_b), blk.fc_w, blk.fc_b), blk.fc2_w, blk.fc2_b, x);
}

template <class T>
ag::Var<T> Transformer<T>::readout(const ag::Var<T>& x_in, int64_t B, int64_t T_) const {
  using namespace ag;
  const Var<T> x = layer_norm(x_in, lnf_w_, lnf_b_);
  prof::Tag timed(prof::Family::Readout);
  if (tied_head_)  // (B*T,D) by embed^T (D,V)
    return reshape(matmul(reshape(x, Shape{B * T_, D_}), embed_, false, true), Shape{B, T_, this->C_});
  if (rotation_head_) return rotation_head(linear(x, head_w_, head_b_), B, T_);  // (B,T,9)
  return linear(x, head_w_, head_b_);  // (B,T,C)
}

template <class T>
ag::Var<T> Transformer<T>::forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>*) {
  return blocks_and_head(ag::embedding(embed_, inputs, {B, T_}), B, T_);  // (B,T,D) in
}

template <class T>
ag::Var<T> Transformer<T>::blocks_and_head(ag::Var<T> x, int64_t B, int64_t T_) {
  using namespace ag;
  const bool drop = training_ && dropout_ > 0;
  if (drop) x = dropout(x, dropout_, dropout_rng_);
  for (const Block& blk : blocks_) {
    // x + attn(ln1(x)) and x + mlp(ln2(x)); without dropout each add is fused into the
    // branch's last product (ag::linear_residual).
    Var<T> a = attention(blk, layer_norm(x, blk.ln1_w, blk.ln1_b), drop ? Var<T>() : x);
    if (!drop) {
      x = mlp_residual(blk, a);
      continue;
    }
    prof::Tag timed(prof::Family::Dense);
    x = add(x, dropout(a, dropout_, dropout_rng_));
    Var<T> m = linear_gelu(layer_norm(x, blk.ln2_w, blk.ln2_b), blk.fc_w, blk.fc_b);
    x = add(x, dropout(linear(m, blk.fc2_w, blk.fc2_b), dropout_, dropout_rng_));
  }
  return readout(x, B, T_);
}

template <class T>
Array<T> Transformer<T>::decode_step(int32_t symbol, DecodingCache<T>& cache) {
  using namespace ag;
  NoGrad no_grad;
  const int64_t D = D_, P = cache.positions + 1;
  if (cache.positions == 0 || cache.layers.size() != static_cast<size_t>(2 * L_)) cache.layers.assign(static_cast<size_t>(2 * L_), {});
  const std::vector<T> sl = slopes();
  Var<T> x = embedding(embed_, {symbol}, {1, 1});  // (1,1,D); throws for a symbol outside the vocabulary
  for (size_t l = 0; l < blocks_.size(); ++l) {
    const Block& blk = blocks_[l];
    // The new position's q, k, v; k and v join the cache as row P - 1 of K and V.
    const Var<T> qkv = linear(layer_norm(x, blk.ln1_w, blk.ln1_b), blk.qkv_w, blk.qkv_b);  // (1,1,3D)
    const T* row = qkv.value().data();
    std::vector<T>& K = cache.layers[2 * l];
    std::vector<T>& V = cache.layers[2 * l + 1];
    K.insert(K.end(), row + D, row + 2 * D);
    V.insert(V.end(), row + 2 * D, row + 3 * D);
    Array<T> o(Shape{1, 1, D});
    kernels::multi_head_query(row, K.data(), V.data(), P, D, static_cast<int>(heads_), sl, score_scale(), o.data());
    x = mlp_residual(blk, linear_residual(Var<T>::constant(std::move(o)), blk.proj_w, blk.proj_b, x));
  }
  cache.positions = P;
  return readout(x, 1, 1).value().reshaped(Shape{this->C_});
}

template class Transformer<float>;
template class Transformer<double>;

ModelSpec transformer_spec() {
  // D over multiples of heads.
  SizeKnob knob{"D (a multiple of heads)", [](const nlohmann::json& config, const nlohmann::json& resolved,
                                              int64_t target, const ParameterCounter& count) {
                  const int64_t heads = resolved_key(resolved, "heads").get<int64_t>();
                  return integer_knob("D", heads, 4096, heads).match(config, resolved, target, count);
                }};
  // L (72 D^2 + 6 T D) + 6 D V FLOPs (measure/bench.hpp), split per family in
  // models/transformer_cost.cpp.
  return model_spec<Transformer>("transformer", {.knob = knob, .costs_per_token = transformer_costs});
}

}  // namespace liegrad::models
