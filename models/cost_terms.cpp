// The shared cost terms (see cost_terms.hpp), under the conventions of models/roofline.cpp
// (which also derives the exponentials' counts). Per token, s = n^2, m the algebra
// dimension, V the vocabulary:
//
//   OSM update H' = H exp(hat(Gamma vee(H* P_1 [+ H* P_2]))), k = 1 or 2 targets:
//     small products  (6 + 6k) n^3 FLOPs (H* P_j, H E forward; G E^T, H^T G, P_j dR^T,
//                     H dR backward); forward reads H and the targets, writes H'
//                     ((k + 2) s), backward reads G, H, the targets, E and writes dH and
//                     the targets' gradients ((2k + 4) s): (3k + 6) s floats.
//     tangent         6 m^2 per mixing matrix (u = Gamma r, 2 m^2 forward, dGamma and
//                     dr backward); r_j (and u with a mixing) written forward, read
//                     backward: 2 (k + [mixing]) m floats, plus Gamma's 3 m^2 per step.
//   Prototype readout: 6 s V FLOPs; forward reads H, writes the logits (s + V), the
//     backward reads the logits and H and writes dH (2 s + V): 3 s + 2 V floats, plus
//     the prototypes (V s) as weights. The cross-entropy is fused in (it reads the
//     logits the readout wrote).
//   Linear head of `width` features: 6 width V FLOPs, 3 width + 2 V floats, weights
//     width V + V.
#include "models/cost_terms.hpp"

#include <utility>

#include "groups/group.hpp"
#include "models/registry.hpp"

namespace liegrad::models::cost {

using prof::Family;

double weight_floats(double size, const CostInputs& in) { return 3 * size / in.tokens(); }

FamilyCost derived(double flops, double floats, std::string note) {
  return {flops, kFloat * floats, true, std::move(note)};
}

void add(FamilyCost& c, double flops, double floats) {
  c.flops += flops;
  c.bytes += kFloat * floats;
  c.derived = true;
}

void not_derived_other(StepCosts& c, std::string what) { c.other() = {0, 0, false, "not derived: " + std::move(what)}; }

void add_exponentials(StepCosts& c, double n, const CostInputs& in, ExpKeeps keeps) {
  const double s = n * n, P = in.exp_products_per_token, X = in.exponentials_per_token;
  const double values = keeps == ExpKeeps::Nothing ? 0.0 : X, products = keeps == ExpKeeps::ValueAndProducts ? P : 0.0;
  c[Family::ExpForward] = derived(2 * n * s * P, (values + products) * s);
  c[Family::ExpPullback] = derived(4 * n * s * P, products * s);
}

void add_linear_readout(StepCosts& c, double width, const CostInputs& in) {
  const double V = static_cast<double>(in.vocab);
  c[Family::Readout] = derived(6 * width * V, 3 * width + 2 * V + weight_floats(width * V + V, in));
}

double heads(const nlohmann::json& r, const CostInputs& in) {
  return in.flops_only ? 0.0 : resolved_key(r, "heads").get<double>();
}

OsmShape osm_shape(const nlohmann::json& r) {
  const auto g = groups::make_group(resolved_key(r, "group").get<std::string>());
  OsmShape o;
  o.n = static_cast<double>(g->n());
  o.s = o.n * o.n;
  o.n3 = o.s * o.n;
  o.m = static_cast<double>(g->dim());
  o.mixing = resolved_key(r, "mixing").get<std::string>() != "identity";
  return o;
}

void add_update(StepCosts& c, const OsmShape& o, int k, const CostInputs& in) {
  add(c[Family::SmallProducts], (6 + 6 * k) * o.n3, (3 * k + 6) * o.s);
  const double mixings = o.mixing ? k : 0;
  add(c[Family::Tangent], mixings * 6 * o.m * o.m,
      2 * (k + (o.mixing ? 1 : 0)) * o.m + mixings * weight_floats(o.m * o.m, in));
}

void add_osm_common(StepCosts& c, const OsmShape& o, const CostInputs& in, ExpKeeps keeps) {
  const double V = static_cast<double>(in.vocab);
  c[Family::Readout] = derived(6 * o.s * V, 3 * o.s + 2 * V + weight_floats(V * o.s + V, in));
  add_exponentials(c, o.n, in, keeps);
  not_derived_other(c, "the embedding's gather and update dropout");
}

}  // namespace liegrad::models::cost
