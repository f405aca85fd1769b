// Per-family FLOPs and bytes of one training step per token (see roofline.hpp): the
// conventions every model's formula follows, the exponentials' and the optimizer's
// counts, and the lookup of a type's formula in its registry entry. Each model's own
// formula is derived in its cost file beside its forward (models/<model>_cost.cpp), the
// terms they share in models/cost_terms.cpp.
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
// Per token (s = n^2 the floats of a stored n x n state, X the exponentials and P their
// forward products per token, both measured):
//   exp forward   2 n^3 P FLOPs. The expm tape op (exprnn, group parameters) writes E
//                 and the forward products it caches for the pullback: (X + P) s floats
//                 (it also reads A and writes dA, X 2 s more, not counted). The fused
//                 OSM kernels form A = hat(u) in L1 and keep no products
//                 (groups/expm_kernel.hpp): the relative update writes E, X s floats;
//                 the OSM-RNN scan keeps E in L1 too, 0 floats.
//   exp pullback  4 n^3 P FLOPs; the tape op reads its cached products, P s floats; the
//                 fused OSM kernels recompute them from A (and the scan E; the recomputed
//                 products are not counted as FLOPs) and move nothing past L1: 0 floats.
//   Optimizer: no FLOPs; per parameter and step, zero_grad writes the gradient, the
//     clipping norm reads it, the step reads p and g and writes p (3) and reads and
//     writes each state tensor: 5 + 2 states floats (Adam: 9). A manifold parameter's
//     retraction is not counted.
//   Other: what no family times (embedding gathers, dropout, reshapes, the transformer's
//     first LayerNorm and final one, the tape's bookkeeping): not derived.
#include "models/roofline.hpp"

#include <utility>

#include "core/errors.hpp"
#include "models/cost_terms.hpp"
#include "models/registry.hpp"

namespace liegrad::models {

double StepCosts::flops() const {
  double f = 0;
  for (const FamilyCost& c : family) f += c.flops;
  return f;
}

FamilyCost optimizer_cost(const CostInputs& in) {
  if (in.optimizer_states < 0) throw ValueError("optimizer_cost: negative state count");
  return cost::derived(0, (5 + 2.0 * in.optimizer_states) * static_cast<double>(in.parameters) / in.tokens(),
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
  c[prof::Family::Optimizer] = optimizer_cost(in);
  return c;
}

}  // namespace liegrad::models
