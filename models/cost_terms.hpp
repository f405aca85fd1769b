// The terms the models' cost formulas share (models/roofline.hpp for the conventions):
// a family's count from FLOPs and floats, weights amortised over the step's tokens, the
// exponentials, a linear readout, and the OSM models' update and prototype readout.
// Each model's own formula is in its cost file (models/<model>_cost.cpp), registered in
// its registry entry.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "models/roofline.hpp"

namespace liegrad::models::cost {

inline constexpr double kFloat = 4;  // bytes per float: the bench runs float models

// Weights of `size` floats: read forward and backward, gradient written, once per step.
double weight_floats(double size, const CostInputs& in);
// A derived family of `flops` FLOPs that moves `floats` floats.
FamilyCost derived(double flops, double floats, std::string note = "");
// Adds FLOPs and floats to a family.
void add(FamilyCost& c, double flops, double floats);
// Marks "other" as not derived, naming what it holds.
void not_derived_other(StepCosts& c, std::string what);

// What the forward of an exponential writes for its pullback: E and the forward
// products (the expm tape op), E alone (the relative update, which recomputes the
// products), or neither (the OSM-RNN scan, which recomputes both).
enum class ExpKeeps { ValueAndProducts, Value, Nothing };
// The exponential families for n x n exponentials (counts measured per token).
void add_exponentials(StepCosts& c, double n, const CostInputs& in, ExpKeeps keeps);
// A linear head of `width` inputs to V logits, the cross-entropy fused in.
void add_linear_readout(StepCosts& c, double width, const CostInputs& in);
// The resolved "heads": only the bytes read them (see CostInputs::flops_only).
double heads(const nlohmann::json& resolved, const CostInputs& in);

// The shapes of an OSM model's group: n, s = n^2, n^3, m, and whether Gamma is learned.
struct OsmShape {
  double n = 0, s = 0, n3 = 0, m = 0;
  bool mixing = false;
};
OsmShape osm_shape(const nlohmann::json& resolved);
// One OSM update with k targets (relative: 1, combined: 2): small products and tangent.
void add_update(StepCosts& c, const OsmShape& o, int k, const CostInputs& in);
// The prototype readout and the exponentials, both OSM models.
void add_osm_common(StepCosts& c, const OsmShape& o, const CostInputs& in, ExpKeeps keeps);

}  // namespace liegrad::models::cost
