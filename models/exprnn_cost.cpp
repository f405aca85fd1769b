// The expRNN's work per token of one training step, per op family (models/roofline.hpp
// for the conventions; the exponential and linear head terms in models/cost_terms.cpp).
// Hidden h: the recurrence's product h Q^T (6 h^2 FLOPs) and modReLU are timed as
// "other": forward reads h_{t-1}, x_t, writes z, h_t (5 h with modReLU's read of z),
// backward about twice that less one (11 h floats); one h x h exponential per step
// (X = 1 / (B T)), through the expm tape op, which keeps E and its products.
#include "models/cost_terms.hpp"
#include "models/exprnn.hpp"

namespace liegrad::models {

StepCosts exprnn_costs(const nlohmann::json& r, const CostInputs& in) {
  using namespace cost;
  const double h = resolved_key(r, "hidden").get<double>();
  StepCosts c;
  add_exponentials(c, h, in, ExpKeeps::ValueAndProducts);
  add_linear_readout(c, h, in);
  c.other() = derived(6 * h * h, 11 * h + weight_floats(h * h, in),
                      "the recurrence only (h Q^T and modReLU); the embedding and the per-step slices are not counted");
  return c;
}

}  // namespace liegrad::models
