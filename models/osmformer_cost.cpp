// The OSMFormer's work per token of one training step, per op family (models/roofline.hpp
// for the conventions; the update, readout and exponential terms in models/cost_terms.cpp).
// Per layer:
//   attention (kernels/mean_attention.hpp): 6 T s FLOPs (Gram matrix and weighted sum,
//     causal half); forward reads X, writes out (2 s) and saves S, Abar and the h P^k
//     (causal half: (h + 2) T / 2), backward reads G, X and them and writes dX (3 s +
//     (h + 2) T / 2): 5 s + (h + 2) T floats.
//   updates by grounding: relative two one-target updates (attention, then grounding),
//     combined one two-target update, off one one-target update, token one one-target
//     update and the token step H' = H E_x: 6 n^3 FLOPs; forward reads H, E_x, writes H'
//     (3 s), backward reads G, H, E_x and writes dH, dE_x (5 s): 8 s floats. (Its table's
//     V exponentials and tangents per step are in X, P; the tangents are not counted.)
// Then the prototype readout and the exponentials, whose E the relative update keeps.
#include "models/cost_terms.hpp"
#include "models/osmformer.hpp"

namespace liegrad::models {

StepCosts osmformer_costs(const nlohmann::json& r, const CostInputs& in) {
  using namespace cost;
  using prof::Family;
  const OsmShape o = osm_shape(r);
  const double L = resolved_key(r, "layers").get<double>(), h = heads(r, in);
  const double T = static_cast<double>(in.seq_len);
  const Grounding grounding = parse_grounding(resolved_key(r, "grounding").get<std::string>());
  StepCosts c;
  for (int l = 0; l < static_cast<int>(L); ++l) {
    add(c[Family::Attention], 6 * T * o.s, 5 * o.s + (h + 2) * T);
    if (grounding == Grounding::Combined) {
      add_update(c, o, 2, in);
    } else {
      add_update(c, o, 1, in);
      if (grounding == Grounding::Relative) add_update(c, o, 1, in);
      if (grounding == Grounding::Token) add(c[Family::SmallProducts], 6 * o.n3, 8 * o.s);
    }
  }
  add_osm_common(c, o, in, ExpKeeps::Value);
  return c;
}

}  // namespace liegrad::models
