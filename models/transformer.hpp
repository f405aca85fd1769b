// The Transformer baseline (docs/models.md §6): a GPT-style decoder with pre-LayerNorm
// blocks of causal multi-head self-attention with ALiBi (Press et al. 2022) and a
// GELU MLP D -> 4D -> D, a final LayerNorm and an untied linear head.
//
// Config keys: D (width), layers (L), heads, dropout (0), positional (alibi|none),
// init_std (0.02), head (untied | tied: logits x embed^T with no bias, the paper's
// 104K layout | rotation: D -> 6 -> SO(3) by the 6D Gram-Schmidt map, C = 9,
// models/continuous.hpp). Real-valued inputs (ContinuousInput,
// models/transformer_continuous.cpp): features (B,T,F), F = V, times the embedding (F,D). Parameter count: V*D + L*(12D^2 + 13D) + 2D + D*C + C (C = V for a
// language model; C classes otherwise), without the last two terms when tied.
// Linear weights are stored (in, out), so y = x W + b. Dense layers run as fused
// ops (ag::linear, ag::linear_gelu, and ag::linear_residual for a branch's last
// layer with the residual add, when no dropout comes between) and the attention of all heads as one
// (kernels::causal_self_attention), attention dropout included.
// Incremental decoding (models/decoding.hpp): the cache keeps each position's keys and
// values per layer; with ALiBi (or no positions) they do not depend on later positions.
#pragma once
#include "core/rng.hpp"
#include "models/capabilities.hpp"
#include "models/decoding.hpp"
#include "models/model_base.hpp"
#include "models/registry.hpp"

namespace liegrad::models {

template <class T>
class Transformer : public ModelBase<T>, public ContinuousInput<T>, public IncrementalDecoding<T> {
 public:
  // vocab V input symbols, classes C readout rows (<= 0: C = V, a language model).
  Transformer(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes = 0);
  std::string type() const override { return "transformer"; }
  ag::Var<T> forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) override;
  void set_training(bool on) override { training_ = on; }
  bool training() const override { return training_; }
  void begin_step(uint64_t step_seed) override { dropout_rng_ = Rng(step_seed ^ 0x5eedULL); }
  ag::Var<T> forward_features(const Array<T>& features, int64_t B, int64_t T_, RecurrentState<T>* state) override;
  bool outputs_rotations() const override { return rotation_head_; }
  ContinuousInput<T>* continuous_input() override { return this; }
  IncrementalDecoding<T>* incremental_decoding() override { return this; }
  // Cache: layers[2l] and layers[2l+1] hold layer l's keys and values, (positions, D) each.
  Array<T> decode_step(int32_t symbol, DecodingCache<T>& cache) override;

 private:
  struct Block {
    ag::Var<T> ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fc2_w, fc2_b;
  };
  // The attention branch of h = ln1(x): o W_proj + b_proj, plus residual when it is defined.
  ag::Var<T> attention(const Block& blk, const ag::Var<T>& h, const ag::Var<T>& residual);
  // The blocks, final LayerNorm and head on embedded inputs x (B,T,D): outputs (B,T,C).
  ag::Var<T> blocks_and_head(ag::Var<T> x, int64_t B, int64_t T_);
  // x + mlp(ln2(x)) without dropout, the residual add fused into the last product.
  ag::Var<T> mlp_residual(const Block& blk, const ag::Var<T>& x) const;
  // The final LayerNorm and the head: x (B,T,D) -> logits (B,T,C).
  ag::Var<T> readout(const ag::Var<T>& x, int64_t B, int64_t T_) const;
  // The ALiBi slopes (empty without positions) and 1/sqrt(head width).
  std::vector<T> slopes() const;
  T score_scale() const { return static_cast<T>(1.0 / std::sqrt(static_cast<double>(D_ / heads_))); }
  int64_t D_, L_, heads_;
  double dropout_;
  bool alibi_;
  bool training_ = true;
  ag::Var<T> embed_, lnf_w_, lnf_b_, head_w_, head_b_;  // head_* undefined with a tied head
  bool tied_head_ = false;
  bool rotation_head_ = false;
  std::vector<Block> blocks_;
  Rng dropout_rng_;
};

// The work of one training step per token, per op family, from the resolved config
// (models/transformer_cost.cpp; models/roofline.hpp).
StepCosts transformer_costs(const nlohmann::json& resolved, const CostInputs& in);

// The registry entry of "transformer" (models/registry.hpp): factory, keys, --match knob, FLOPs.
ModelSpec transformer_spec();

}  // namespace liegrad::models
