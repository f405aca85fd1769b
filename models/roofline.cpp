// Per-family FLOPs and bytes of one training step per token (see roofline.hpp): every
// formula in one place, derived here from the shapes.
//
// FLOPs (the conventions `liegrad bench` has always used, docs/performance.md): matrix
// products only, a multiply-add = 2 FLOPs, the backward pass twice the forward (so a
// product of a (., k) by a (k, j) operand is 6 k j per row and step), causal attention
// the half it computes; element-wise work is 0. The exponentials' products are counted,
// not assumed: P = the forward products (degree + squarings) the step's exponentials ran,
// per token; each is one n x n product forward (2 n^3) and two in the pullback (4 n^3).
//
// Bytes: the traffic a family *must* move, i.e. each family run as one pass at its
// boundary: it reads its input tensors and writes its outputs once, forward; the
// backward reads the output gradient and the saved tensors and writes the input
// gradients; tensors saved for the backward are written once and read once. Floats
// (4 bytes: the bench runs float models). Weights are read forward and backward and
// their gradient written once per step, 3 x size / (B T) per token. Not counted, so the
// bytes are a lower bound and the bound an optimistic one: re-reads when a working set
// outgrows the caches, scratch, and temporaries a fused kernel keeps in registers or L1
// (a token's r, u, A, dA inside an OSM update; the LSTM's per-step gates). Saved tensors
// are the ones the kernels keep today (each kernel's header lists them).
//
// Per family, per token (s = n^2 the floats of a stored n x n state, m the algebra
// dimension, T the window, V the vocabulary, L layers, h heads, X the exponentials and P
// their forward products per token, both measured):
//   exp forward   2 n^3 P FLOPs. The expm tape op (exprnn, group parameters) writes E
//                 and the forward products it caches for the pullback: (X + P) s floats
//                 (it also reads A and writes dA, X 2 s more, not counted). The fused
//                 OSM kernels form A = hat(u) in L1 and keep no products
//                 (groups/expm_kernel.hpp): the relative update writes E, X s floats;
//                 the OSM-RNN scan keeps E in L1 too, 0 floats.
//   exp pullback  4 n^3 P FLOPs; the tape op reads its cached products, P s floats; the
//                 fused OSM kernels recompute them from A (and the scan E; the recomputed
//                 products are not counted as FLOPs) and move nothing past L1: 0 floats.
//   OSM update H' = H exp(hat(Gamma vee(H* P_1 [+ H* P_2]))), k = 1 or 2 targets:
//     small products  (6 + 6k) n^3 FLOPs (H* P_j, H E forward; G E^T, H^T G, P_j dR^T,
//                     H dR backward); forward reads H and the targets, writes H'
//                     ((k + 2) s), backward reads G, H, the targets, E and writes dH and
//                     the targets' gradients ((2k + 4) s): (3k + 6) s floats.
//     tangent         6 m^2 per mixing matrix (u = Gamma r, 2 m^2 forward, dGamma and
//                     dr backward); r_j (and u with a mixing) written forward, read
//                     backward: 2 (k + [mixing]) m floats, plus Gamma's 3 m^2 per step.
//   OSM token update H' = H E_x (grounding "token"): 6 n^3 FLOPs; forward reads H, E_x,
//     writes H' (3 s), backward reads G, H, E_x and writes dH, dE_x (5 s): 8 s floats.
//     (Its table's V exponentials and tangents per step are in X, P; the tangents are not counted.)
//   OSM-RNN scan step (H stays in registers along a lane): relative or both drives
//     12 n^3 FLOPs, forward reads M_t, writes out_t (2 s), backward reads G_t, out_t,
//     M_t and writes dM_t (4 s; E_t is formed again in L1): 6 s floats; token or
//     element drive 6 n^3 FLOPs and 6 s floats (the backward reads no M_t, but the
//     table row's E_x). Renormalising every k steps adds
//     4 n^3 / k FLOPs (small products) in registers.
//   OSMFormer attention (one layer, kernels/mean_attention.hpp): 6 T s FLOPs (Gram
//     matrix and weighted sum, causal half); forward reads X, writes out (2 s) and
//     saves S, Abar and the h P^k (causal half: (h + 2) T / 2), backward reads G, X and
//     them and writes dX (3 s + (h + 2) T / 2): 5 s + (h + 2) T floats.
//   Prototype readout: 6 s V FLOPs; forward reads H, writes the logits (s + V), the
//     backward reads the logits and H and writes dH (2 s + V): 3 s + 2 V floats, plus
//     the prototypes (V s) as weights. The cross-entropy is fused in (it reads the
//     logits the readout wrote).
//   Transformer (D, 4 D MLP): dense 72 D^2 FLOPs per layer (QKV 3 D^2, projection D^2,
//     MLP 8 D^2 multiply-adds); a linear map of `in` to `out` floats moves in + out
//     forward and out + 2 in backward; QKV (9 D) + projection (5 D) + MLP (11 D + 14 D)
//     + the GELU's pre-activation saved and read (8 D), LayerNorm 2 and the residual
//     adds fused into neighbours: 47 D floats per layer, weights 12 D^2 + 9 D.
//     Attention (kernels/causal_mha.hpp) 6 T D FLOPs; forward reads QKV, writes the
//     output (4 D), saves P (h T / 2); backward reads dO, QKV, P and writes dQKV (7 D +
//     h T / 2): 11 D + h T floats. Linear head 6 D V FLOPs, 3 D + 2 V floats, weights D V + V.
//   LSTM (hidden h, per layer): dense 48 h^2 FLOPs (input and recurrent products, 4 h
//     gates each); input product 11 h floats (a linear map of h to 4 h), the scan reads
//     xw, writes out and saves c and the gates (10 h forward), reads dout, the saved
//     c, gates and out and writes dxw (11 h backward): 32 h floats, weights 8 h^2 + 4 h.
//     Linear head as the transformer's.
//   exprnn (hidden h): the recurrence's product h Q^T (6 h^2 FLOPs) and modReLU are
//     timed as "other": forward reads h_{t-1}, x_t, writes z, h_t (5 h with modReLU's
//     read of z), backward about twice that less one (11 h floats); one h x h
//     exponential per step (X = 1 / (B T)).
//   Optimizer: no FLOPs; per parameter and step, zero_grad writes the gradient, the
//     clipping norm reads it, the step reads p and g and writes p (3) and reads and
//     writes each state tensor: 5 + 2 states floats (Adam: 9). A manifold parameter's
//     retraction is not counted.
//   Other: what no family times (embedding gathers, dropout, reshapes, the transformer's
//     first LayerNorm and final one, the tape's bookkeeping): not derived.
#include "models/roofline.hpp"

#include <algorithm>
#include <utility>

#include "core/errors.hpp"
#include "groups/group.hpp"
#include "models/registry.hpp"

namespace liegrad::models {

namespace {

using prof::Family;
constexpr double kFloat = 4;  // bytes per float: the bench runs float models

// Weights of `size` floats: read forward and backward, gradient written, once per step.
double weight_floats(double size, const CostInputs& in) { return 3 * size / in.tokens(); }

FamilyCost derived(double flops, double floats, std::string note = "") {
  return {flops, kFloat * floats, true, std::move(note)};
}

void add(FamilyCost& c, double flops, double floats) {
  c.flops += flops;
  c.bytes += kFloat * floats;
  c.derived = true;
}

void not_derived_other(StepCosts& c, std::string what) {
  c.other() = {0, 0, false, "not derived: " + std::move(what)};
}

// What the forward of an exponential writes for its pullback: E and the forward
// products (the expm tape op), E alone (the relative update, which recomputes the
// products), or neither (the OSM-RNN scan, which recomputes both).
enum class ExpKeeps { ValueAndProducts, Value, Nothing };

// The exponential families for n x n exponentials (counts measured per token).
void add_exponentials(StepCosts& c, double n, const CostInputs& in, ExpKeeps keeps) {
  const double s = n * n, P = in.exp_products_per_token, X = in.exponentials_per_token;
  const double values = keeps == ExpKeeps::Nothing ? 0.0 : X, products = keeps == ExpKeeps::ValueAndProducts ? P : 0.0;
  c[Family::ExpForward] = derived(2 * n * s * P, (values + products) * s);
  c[Family::ExpPullback] = derived(4 * n * s * P, products * s);
}

// A linear head of `width` inputs to V logits, the cross-entropy fused in.
void add_linear_readout(StepCosts& c, double width, const CostInputs& in) {
  const double V = static_cast<double>(in.vocab);
  c[Family::Readout] = derived(6 * width * V, 3 * width + 2 * V + weight_floats(width * V + V, in));
}

// The attention heads: only the bytes read them (see CostInputs::flops_only).
double heads(const nlohmann::json& r, const CostInputs& in) {
  return in.flops_only ? 0.0 : resolved_key(r, "heads").get<double>();
}

struct OsmShape {
  double n = 0, s = 0, n3 = 0, m = 0;
  bool mixing = false;
};

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

// One OSM update with k targets (relative: 1, combined: 2): small products and tangent.
void add_update(StepCosts& c, const OsmShape& o, int k, const CostInputs& in) {
  add(c[Family::SmallProducts], (6 + 6 * k) * o.n3, (3 * k + 6) * o.s);
  const double mixings = o.mixing ? k : 0;
  add(c[Family::Tangent], mixings * 6 * o.m * o.m,
      2 * (k + (o.mixing ? 1 : 0)) * o.m + mixings * weight_floats(o.m * o.m, in));
}

// The prototype readout and the exponentials, both OSM models.
void add_osm_common(StepCosts& c, const OsmShape& o, const CostInputs& in, ExpKeeps keeps) {
  const double V = static_cast<double>(in.vocab);
  c[Family::Readout] = derived(6 * o.s * V, 3 * o.s + 2 * V + weight_floats(V * o.s + V, in));
  add_exponentials(c, o.n, in, keeps);
  not_derived_other(c, "the embedding's gather and update dropout");
}

}  // namespace

double StepCosts::flops() const {
  double f = 0;
  for (const FamilyCost& c : family) f += c.flops;
  return f;
}

StepCosts transformer_costs(const nlohmann::json& r, const CostInputs& in) {
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

StepCosts lstm_costs(const nlohmann::json& r, const CostInputs& in) {
  const double h = resolved_key(r, "hidden").get<double>(), L = resolved_key(r, "layers").get<double>();
  StepCosts c;
  c[Family::Dense] = derived(L * 48 * h * h, L * (32 * h + weight_floats(8 * h * h + 4 * h, in)));
  add_linear_readout(c, h, in);
  not_derived_other(c, "the embedding's gather");
  return c;
}

StepCosts exprnn_costs(const nlohmann::json& r, const CostInputs& in) {
  const double h = resolved_key(r, "hidden").get<double>();
  StepCosts c;
  add_exponentials(c, h, in, ExpKeeps::ValueAndProducts);
  add_linear_readout(c, h, in);
  c.other() = derived(6 * h * h, 11 * h + weight_floats(h * h, in),
                      "the recurrence only (h Q^T and modReLU); the embedding and the per-step slices are not counted");
  return c;
}

StepCosts osmformer_costs(const nlohmann::json& r, const CostInputs& in) {
  const OsmShape o = osm_shape(r);
  const double L = resolved_key(r, "layers").get<double>(), h = heads(r, in);
  const double T = static_cast<double>(in.seq_len);
  const std::string grounding = resolved_key(r, "grounding").get<std::string>();
  StepCosts c;
  for (int l = 0; l < static_cast<int>(L); ++l) {
    add(c[Family::Attention], 6 * T * o.s, 5 * o.s + (h + 2) * T);
    if (grounding == "combined") {
      add_update(c, o, 2, in);
    } else {
      add_update(c, o, 1, in);
      if (grounding == "relative" || grounding == "on") add_update(c, o, 1, in);
      if (grounding == "token") add(c[Family::SmallProducts], 6 * o.n3, 8 * o.s);
    }
  }
  add_osm_common(c, o, in, ExpKeeps::Value);
  return c;
}

StepCosts osm_rnn_costs(const nlohmann::json& r, const CostInputs& in) {
  const OsmShape o = osm_shape(r);
  const std::string drive = resolved_key(r, "rnn_drive").get<std::string>();
  const bool token = drive == "token" || drive == "element";  // element: the token scan on hat(b)
  const double every = resolved_key(r, "renormalize_every").get<double>();
  // The token drive mixes once per table row the batch uses (kernels/osm_scan.hpp), at
  // most V rows for B*T tokens; its exponentials are counted as they run (P, X).
  const double per_token = token ? std::min(1.0, static_cast<double>(in.vocab) / in.tokens()) : 1.0;
  StepCosts c;
  add(c[Family::SmallProducts], (token ? 6 : 12) * o.n3 + (every > 0 ? 4 * o.n3 / every : 0.0), 6 * o.s);
  add(c[Family::Tangent], o.mixing ? 6 * o.m * o.m * per_token : 0.0,
      2 * (1 + (o.mixing ? 1 : 0)) * o.m * per_token + (o.mixing ? weight_floats(o.m * o.m, in) : 0.0));
  add_osm_common(c, o, in, ExpKeeps::Nothing);
  return c;
}

FamilyCost optimizer_cost(const CostInputs& in) {
  if (in.optimizer_states < 0) throw ValueError("optimizer_cost: negative state count");
  return derived(0, (5 + 2.0 * in.optimizer_states) * static_cast<double>(in.parameters) / in.tokens(),
                 "element-wise; a manifold parameter's retraction is not counted");
}

std::function<double(const nlohmann::json&, int64_t, int64_t, double)> flops_from_costs(CostsPerToken costs) {
  return [costs = std::move(costs)](const nlohmann::json& r, int64_t V, int64_t T, double P) {
    CostInputs in;
    in.vocab = V;
    in.seq_len = T;
    in.exp_products_per_token = P;
    in.flops_only = true;
    return costs(r, in).flops();
  };
}

StepCosts step_costs(const nlohmann::json& resolved, const CostInputs& in) {
  if (in.batch < 1 || in.seq_len < 1) throw ValueError("step_costs: batch and seq_len must be >= 1");
  const ModelSpec& spec = model_spec_of(resolved);
  StepCosts c;
  if (spec.info.costs_per_token) {
    c = spec.info.costs_per_token(resolved, in);
  } else {
    std::string why = "the registry entry of " + spec.name + " declares no per-family costs";
    if (spec.info.flops_per_token)
      why += " (its total: " +
             std::to_string(spec.info.flops_per_token(resolved, in.vocab, in.seq_len, in.exp_products_per_token)) +
             " FLOP per token)";
    for (FamilyCost& f : c.family) f = {0, 0, false, "not derived: " + why};
  }
  c[Family::Optimizer] = optimizer_cost(in);
  return c;
}

}  // namespace liegrad::models
