// OSMFormer (docs/models.md §5; Nunley 2026): a Transformer whose tokens are group
// elements. Positions i = 1..T start at H_i = M_{x_i} = exp(hat(b_{x_i})); each of L
// layers attends,
//
//   s_ij^k = beta_k Re tr(H_i* H_j) - slope_k (i - j)      (j <= i, causal)
//   A_i    = (1/h) sum_k sum_j softmax_j(s_i.^k) H_j        (d x d, not in G)
//   u_att  = Gamma_att vee(Pi(H_i* A_i))
//
// and moves H_i by one of four groundings (model.grounding), the readings of the
// paper's "reflecting the token embedding" that docs/models.md §5 compares:
//
//   relative  H_i <- H_i exp(hat(u_att)); H_i <- H_i exp(hat(Gamma_gnd vee(Pi(H_i* M_{x_i}))))
//             (the first specification; alias `on`). With Gamma_gnd = I it undoes the
//             attention step to first order: H = M exp(delta) gives Pi(exp(-delta)) = -sinh(delta).
//   combined  H_i <- H_i exp(hat(u_att + Gamma_gnd vee(Pi(H_i* M_{x_i}))))   (both tangents at one H)
//   token     H_i <- H_i exp(hat(u_att)); H_i <- H_i exp(hat(Gamma_gnd b_{x_i}))   (re-apply the token)
//   off       H_i <- H_i exp(hat(u_att))
//
// and logits_i = tau Re tr(H_i* P_v) + b_v. beta_k = exp(log_beta_k), initialised to
// 1/sqrt(d) (d the complex matrix size of G); ALiBi slopes 2^(-8k/h) fixed.
// Re tr(H_i* H_j) for all pairs is a product of the flattened states (times 1/2 in
// complex real form), and so is A_i. No QKV maps, no MLP, no normalisation.
// Each layer runs as fused tape ops: the attention (kernels::mean_head_attention) and
// the updates (kernels::relative_update, combined_update, token_update).
// Config keys: group, layers, heads, mixing, rank, grounding (relative|combined|token|
// off; `on` = relative; by default the best reading for the mixing, default_grounding),
// grounding_init (identity|zero: Gamma_gnd at init, linear mixing only),
// grounding_mixing (separate|shared: one Gamma per layer for both tangents), positional
// (alibi|none), group_param, init_scale, dropout (update dropout on the attention and
// relative/combined grounding targets, training only; osm_common.hpp).
// Parameters: embed, proto, bias, log_tau, layers.l.log_beta (h), and with linear,
// lowrank or bounded mixing layers.l.mix_att and layers.l.mix_gnd (separate) or
// layers.l.mix (shared), each (m,m) (lowrank: .u, .v).
// Incremental decoding (models/decoding.hpp): the cache keeps each position's state H_j
// entering every layer, the layer's keys and values at once (scores Re tr(H_i* H_j),
// target A_i = mean softmax H_j); a position's later layers read only its own column.
#pragma once
#include "models/capabilities.hpp"
#include "models/decoding.hpp"
#include "models/osm_common.hpp"
#include "models/registry.hpp"

namespace liegrad::models {

enum class Grounding { Relative, Combined, Token, Off };

// "relative" | "on" | "combined" | "token" | "off" -> Grounding; the canonical name back.
Grounding parse_grounding(const std::string& s);
std::string grounding_name(Grounding g);

// model.grounding when the config names none: the best reading of the fidelity screen
// for the mixing (docs/models.md §5.1). Identity mixing: token (0.41 and 0.46 BPC below
// relative on Tiny Shakespeare and Penn Treebank), or combined when group_param is
// manifold (token needs the algebra coordinates). A learned Gamma (linear; lowrank and
// bounded alike, unscreened): relative with separate Gamma's (combined +0.06 and +0.08,
// token +0.12 and +0.18), combined with one shared Gamma per layer (0.09 and 0.10 below
// relative in the paper's 91K layout).
Grounding default_grounding(MixingKind mixing, bool shared_mixing, groups::GroupParamMode mode);

template <class T>
class OsmFormer : public ModelBase<T>, public LayerProbing<T>, public IncrementalDecoding<T> {
 public:
  // vocab V input symbols, classes C readout rows (<= 0: C = V, a language model).
  OsmFormer(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes = 0);
  std::string type() const override { return "osmformer"; }
  ag::Var<T> forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) override;
  // The final-layer states H_i^(L), (B*T,n,n); forward() is their readout.
  ag::Var<T> encode(const std::vector<int32_t>& inputs, int64_t B, int64_t T_);
  // Each layer's tangents and moves on one batch of inputs (B,T), without recording
  // (models/osmformer_probe.cpp; `liegrad probe`): the LayerProbing capability.
  std::vector<LayerProbe> probe(const std::vector<int32_t>& inputs, int64_t B, int64_t T_) override;
  std::string grounding_reading() const override { return grounding_name(grounding_); }
  LayerProbing<T>* layer_probing() override { return this; }
  const groups::Group& group() const { return *cfg_.group; }
  Grounding grounding() const { return grounding_; }
  void set_training(bool on) override { dropout_.set_training(on); }
  bool training() const override { return dropout_.training(); }
  void begin_step(uint64_t step_seed) override { dropout_.begin_step(step_seed); }
  IncrementalDecoding<T>* incremental_decoding() override { return this; }
  // Cache: layers[l] holds the states entering layer l, (positions, n*n); constants the
  // token elements (V,n,n), the prototypes and each layer's Gamma_att and Gamma_gnd.
  Array<T> decode_step(int32_t symbol, DecodingCache<T>& cache) override;

 private:
  struct Layer {
    ag::Var<T> log_beta;
    TangentMixing<T> mix_att, mix_gnd;  // mix_gnd unused when shared (mix_att serves both)
  };
  // H after one layer's update from its attention target A and the token elements M
  // (both dropped out in training), the grounding's reading; inputs for token grounding.
  ag::Var<T> update(const ag::Var<T>& H, const ag::Var<T>& A, const ag::Var<T>& M, const ag::Var<T>& gamma_att,
                    const ag::Var<T>& gamma_ground, const std::vector<int32_t>& inputs);
  // One layer's attention target A (B*T,n,n) for states H.
  ag::Var<T> attention(const Layer& layer, const ag::Var<T>& H, int64_t B, int64_t T_) const;
  // Gamma_gnd of a layer: gamma_att itself when shared (model.grounding_mixing), so a
  // lowrank or bounded Gamma is formed once per layer.
  ag::Var<T> gamma_gnd(const Layer& layer, const ag::Var<T>& gamma_att) const;
  // The token elements' algebra coordinates b (V,m) (token grounding).
  const ag::Var<T>& token_coords() const { return embed_.stored(); }

  OsmCommonConfig cfg_;
  int64_t layers_ = 3, heads_ = 4;
  Grounding grounding_ = Grounding::Relative;
  bool shared_mixing_ = false, alibi_ = true;
  std::vector<T> slopes_;
  groups::GroupParam<T> embed_;
  PrototypeReadout<T> readout_;
  std::vector<Layer> blocks_;
  UpdateDropout<T> dropout_;
};

// The work of one training step per token, per op family, from the resolved config
// (models/osmformer_cost.cpp; models/roofline.hpp).
StepCosts osmformer_costs(const nlohmann::json& resolved, const CostInputs& in);

// The registry entry of "osmformer" (models/registry.hpp): factory, keys, --match knob, FLOPs.
ModelSpec osmformer_spec();

}  // namespace liegrad::models
