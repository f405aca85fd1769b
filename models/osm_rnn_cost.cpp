// The OSM-RNN's work per token of one training step, per op family (models/roofline.hpp
// for the conventions; the readout and exponential terms in models/cost_terms.cpp).
//   scan step (kernels/osm_scan.hpp; H stays in registers along a lane): relative or
//     both drives 12 n^3 FLOPs, forward reads M_t, writes out_t (2 s), backward reads
//     G_t, out_t, M_t and writes dM_t (4 s; E_t is formed again in L1): 6 s floats;
//     token or element drive 6 n^3 FLOPs and 6 s floats (the backward reads no M_t, but
//     the table row's E_x). Renormalising every k steps adds 4 n^3 / k FLOPs (small
//     products) in registers.
//   tangent: 6 m^2 FLOPs with a mixing; r (and u with a mixing) written forward, read
//     backward, plus Gamma's 3 m^2 per step. The token drive mixes once per table row
//     the batch uses, at most V rows for B T tokens.
// Then the prototype readout and the exponentials, of which the scan keeps nothing.
#include <algorithm>

#include "models/cost_terms.hpp"
#include "models/osm_rnn.hpp"

namespace liegrad::models {

StepCosts osm_rnn_costs(const nlohmann::json& r, const CostInputs& in) {
  using namespace cost;
  using prof::Family;
  const OsmShape o = osm_shape(r);
  const std::string drive = resolved_key(r, "rnn_drive").get<std::string>();
  const bool token = drive == "token" || drive == "element";  // element: the token scan on hat(b)
  const double every = resolved_key(r, "renormalize_every").get<double>();
  // The token drive's exponentials are counted as they run (P, X).
  const double per_token = token ? std::min(1.0, static_cast<double>(in.vocab) / in.tokens()) : 1.0;
  StepCosts c;
  add(c[Family::SmallProducts], (token ? 6 : 12) * o.n3 + (every > 0 ? 4 * o.n3 / every : 0.0), 6 * o.s);
  add(c[Family::Tangent], o.mixing ? 6 * o.m * o.m * per_token : 0.0,
      2 * (1 + (o.mixing ? 1 : 0)) * o.m * per_token + (o.mixing ? weight_floats(o.m * o.m, in) : 0.0));
  add_osm_common(c, o, in, ExpKeeps::Nothing);
  return c;
}

}  // namespace liegrad::models
