// The transformer's work per token of one training step, per op family
// (models/roofline.hpp for the conventions; the linear head in models/cost_terms.cpp).
// D the width with a 4 D MLP, L layers, h heads, T the window:
//   dense: 72 D^2 FLOPs per layer (QKV 3 D^2, projection D^2, MLP 8 D^2 multiply-adds);
//     a linear map of `in` to `out` floats moves in + out forward and out + 2 in
//     backward; QKV (9 D) + projection (5 D) + MLP (11 D + 14 D) + the GELU's
//     pre-activation saved and read (8 D), LayerNorm 2 and the residual adds fused into
//     neighbours: 47 D floats per layer, weights 12 D^2 + 9 D.
//   attention (kernels/causal_mha.hpp): 6 T D FLOPs; forward reads QKV, writes the
//     output (4 D), saves P (h T / 2); backward reads dO, QKV, P and writes dQKV (7 D +
//     h T / 2): 11 D + h T floats.
//   readout: the linear head of D features.
#include "models/cost_terms.hpp"
#include "models/transformer.hpp"

namespace liegrad::models {

StepCosts transformer_costs(const nlohmann::json& r, const CostInputs& in) {
  using namespace cost;
  using prof::Family;
  const double D = resolved_key(r, "D").get<double>(), L = resolved_key(r, "layers").get<double>();
  const double h = heads(r, in), T = static_cast<double>(in.seq_len);
  StepCosts c;
  c[Family::Dense] = derived(L * 72 * D * D, L * (47 * D + weight_floats(12 * D * D + 9 * D, in)),
                             "LayerNorm, GELU and residual adds counted as fused into the products");
  c[Family::Attention] = derived(L * 6 * T * D, L * (11 * D + h * T));
  add_linear_readout(c, D, in);
  not_derived_other(c, "the embedding, the first and final LayerNorm, dropout");
  return c;
}

}  // namespace liegrad::models
