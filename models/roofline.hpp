// The work of one training step per token, per op family of core/profile.hpp: the
// matrix-product FLOPs and the bytes each family must move, from the model's shapes,
// one formula per model type, registered in its entry (a built-in type's is in its cost
// file beside its forward, models/<model>_cost.cpp; the conventions in
// models/roofline.cpp). The FLOPs are the count `liegrad bench` has always reported
// (measure/bench.hpp): a built-in type's registry entry computes its flops_per_token as
// these families' FLOPs summed (flops_from_costs), so the total and the split are one
// count. `liegrad bench` turns the costs into a roofline (measure/roofline_table.hpp).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/profile.hpp"

namespace liegrad::models {

// What the counts depend on besides the resolved model config.
struct CostInputs {
  int64_t vocab = 0, seq_len = 0;  // V, T
  int64_t batch = 1;               // B: weights and per-step work amortise over B*T tokens
  double exp_products_per_token = 0;   // P: the exponentials' forward products, measured
  double exponentials_per_token = 0;   // X: the exponentials run, measured
  int64_t parameters = 0;              // trained floats, for the optimizer's traffic
  int optimizer_states = 2;            // state tensors per parameter (Adam: m, v; SGD: 0 or 1)
  // Set by flops_from_costs: the keys only the bytes need (heads) are not read, so the
  // FLOP count asks no more of a config than it did before the bytes were counted.
  bool flops_only = false;
  double tokens() const { return static_cast<double>(batch * seq_len); }
};

// One family's work per token. derived = false: no count (note says why); a derived
// count's note names what it leaves out.
struct FamilyCost {
  double flops = 0, bytes = 0;
  bool derived = false;
  std::string note;
};

// Per family, in prof::Family order, then "other" (index prof::kFamilies). Every family
// starts derived with no work (a model without dense layers does no dense work); a
// formula sets what it counts and marks what it cannot count.
struct StepCosts {
  std::array<FamilyCost, prof::kFamilies + 1> family{};
  StepCosts() {
    for (FamilyCost& f : family) f.derived = true;
  }
  FamilyCost& operator[](prof::Family f) { return family[static_cast<size_t>(f)]; }
  const FamilyCost& operator[](prof::Family f) const { return family[static_cast<size_t>(f)]; }
  FamilyCost& other() { return family[prof::kFamilies]; }
  const FamilyCost& other() const { return family[prof::kFamilies]; }
  double flops() const;  // summed over every family
};

// A model type's costs from its resolved config (Model::config()).
using CostsPerToken = std::function<StepCosts(const nlohmann::json& resolved, const CostInputs& in)>;

// The optimizer family (zero_grad, clipping, the step) of any model: bytes only.
FamilyCost optimizer_cost(const CostInputs& in);

// A registry FlopsPerToken (models/registry.hpp) that sums `costs`' FLOPs.
std::function<double(const nlohmann::json&, int64_t, int64_t, double)> flops_from_costs(CostsPerToken costs);

// The costs of any registered type: its entry's costs_per_token plus optimizer_cost; a
// type without one (a plugin registered with factories only) gets every model family
// underived, with its entry's total FLOPs (if any) named in other's note.
StepCosts step_costs(const nlohmann::json& resolved, const CostInputs& in);

}  // namespace liegrad::models
