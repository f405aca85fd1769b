// OSMFormer (spec §5; Nunley 2026): a Transformer whose tokens are group elements.
// Positions i = 1..T start at H_i = M_{x_i}; each of L layers does
//
//   s_ij^k = beta_k Re tr(H_i* H_j) - slope_k (i - j)      (j <= i, causal)
//   A_i    = (1/h) sum_k sum_j softmax_j(s_i.^k) H_j        (d x d, not in G)
//   H_i   <- H_i exp(hat(Gamma_att vee(Pi(H_i* A_i))))      attention
//   H_i   <- H_i exp(hat(Gamma_gnd vee(Pi(H_i* M_{x_i}))))  grounding (optional)
//
// and logits_i = tau Re tr(H_i* P_v) + b_v. beta_k = exp(log_beta_k), initialised to
// 1/sqrt(d) (d the complex matrix size of G); ALiBi slopes 2^(-8k/h) fixed.
// Re tr(H_i* H_j) for all pairs is a product of the flattened states (times 1/2 in
// complex real form), and so is A_i. No QKV maps, no MLP, no normalisation.
// Each layer runs as three fused tape ops: the attention (kernels::mean_head_attention,
// causal half of both products, all heads) and the two updates
// (kernels::relative_update: H* P, vee, mixing, hat, exp and H E per token in one pass).
// Config keys: group, layers, heads, mixing, rank, grounding (on|off), positional
// (alibi|none), group_param, init_scale, dropout (update dropout on both updates of
// every layer, training only; osm_common.hpp).
// Parameters: embed, proto, bias, log_tau, layers.l.log_beta (h),
// layers.l.mix_att, layers.l.mix_gnd (m,m; linear and bounded mixing).
#pragma once
#include "models/osm_common.hpp"

namespace liegrad::models {

template <class T>
class OsmFormer : public ModelBase<T> {
 public:
  // vocab V input symbols, classes C readout rows (<= 0: C = V, a language model).
  OsmFormer(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes = 0);
  std::string type() const override { return "osmformer"; }
  ag::Var<T> forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) override;
  // The final-layer states H_i^(L), (B*T,n,n); forward() is their readout.
  ag::Var<T> encode(const std::vector<int32_t>& inputs, int64_t B, int64_t T_);
  const groups::Group& group() const { return *cfg_.group; }
  void set_training(bool on) override { dropout_.set_training(on); }
  bool training() const override { return dropout_.training(); }
  void begin_step(uint64_t step_seed) override { dropout_.begin_step(step_seed); }

 private:
  struct Layer {
    ag::Var<T> log_beta;
    TangentMixing<T> mix_att, mix_gnd;
  };
  OsmCommonConfig cfg_;
  int64_t layers_ = 3, heads_ = 4;
  bool grounding_ = true, alibi_ = true;
  groups::GroupParam<T> embed_;
  PrototypeReadout<T> readout_;
  std::vector<Layer> blocks_;
  UpdateDropout<T> dropout_;
};

}  // namespace liegrad::models
