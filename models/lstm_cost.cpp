// The LSTM's work per token of one training step, per op family (models/roofline.hpp for
// the conventions; the linear head in models/cost_terms.cpp). Hidden h, per layer:
//   dense: 48 h^2 FLOPs (input and recurrent products, 4 h gates each); the input
//     product 11 h floats (a linear map of h to 4 h), the scan reads xw, writes out and
//     saves c and the gates (10 h forward), reads dout, the saved c, gates and out and
//     writes dxw (11 h backward): 32 h floats, weights 8 h^2 + 4 h.
//   readout: the linear head of h features.
#include "models/cost_terms.hpp"
#include "models/lstm.hpp"

namespace liegrad::models {

StepCosts lstm_costs(const nlohmann::json& r, const CostInputs& in) {
  using namespace cost;
  using prof::Family;
  const double h = resolved_key(r, "hidden").get<double>(), L = resolved_key(r, "layers").get<double>();
  StepCosts c;
  c[Family::Dense] = derived(L * 48 * h * h, L * (32 * h + weight_floats(8 * h * h + 4 * h, in)));
  add_linear_readout(c, h, in);
  not_derived_other(c, "the embedding's gather");
  return c;
}

}  // namespace liegrad::models
