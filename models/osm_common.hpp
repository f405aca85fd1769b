// Pieces shared by the OSM models (docs/models.md §3): the tangent mixing Gamma, the
// prototype readout, the exponential update, and the config keys both models read (and
// their default group, kDefaultOsmGroup). The cost terms both models' counts share are
// in models/cost_terms.hpp.
//
//   mixing  identity: u = vee(Pi(R));  linear: u = Gamma vee(Pi(R)), Gamma (m,m) = I at
//           init;  lowrank: Gamma = I + U V^T with U, V (m,r), U = 0 at init (so
//           Gamma = I), V ~ N(0, 1/m);  bounded (liegrad's addition, not in the
//           spec): Gamma = I - W / sqrt(1 + ||W||_F^2) with W (m,m) = 0 at init, so
//           ||I - Gamma||_2 < 1 and every eigenvalue of Gamma has real part in (0, 2):
//           a learned Gamma cannot reach the expansive range that makes the
//           OSM-RNN's gradients explode (docs/results.md).
//           On a batch of row vectors u (N,m): u Gamma^T.
//   readout logits_v(H) = tau Re tr(H* P_v) + b_v,  tau = exp(log_tau): one GEMM.
//   update  H <- H exp(hat(u)): the fused kernels of kernels/ (relative_update,
//           osm_scan), whose plain-op forms are in kernels/reference.hpp.
//   update dropout (model.dropout = p, training only; liegrad's regulariser, not in the
//           spec): every relative update of every token is dropped with probability p
//           and the kept ones are scaled by 1/(1-p),
//             H_i <- H_i exp(hat(z_i u_i / (1-p))),  z_i ~ Bernoulli(1-p),
//           so states stay in the group and E[z_i u_i / (1-p)] = u_i. Because
//           u = Gamma vee(Pi(H* P)) is linear in the update's target P, it is applied
//           as P_i <- z_i P_i / (1-p) in front of the fused update ops, unchanged.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "groups/group.hpp"
#include "groups/group_param.hpp"
#include "core/config.hpp"
#include "models/model_base.hpp"

namespace liegrad::models {

enum class MixingKind { Identity, Linear, LowRank, Bounded };

// model.group when the config names none, for both OSM models.
inline constexpr const char* kDefaultOsmGroup = "SO(16)";

// Config shared by osm_rnn and osmformer: group, mixing, rank, group_param, init_scale, dropout.
struct OsmCommonConfig {
  std::shared_ptr<const groups::Group> group;
  MixingKind mixing = MixingKind::Linear;
  int64_t rank = 8;
  groups::GroupParamMode param_mode = groups::GroupParamMode::Algebra;
  double init_scale = 1.0;
  double dropout = 0.0;  // update dropout probability p (model.dropout)
  // model.tau: the readout's temperature; 0 = learned (log_tau, init 0), else fixed at
  // this value with no log_tau parameter. A fixed tau keeps the loss of a state off its
  // prototype from vanishing by growing tau (docs/state_tracking.md: exact transitions).
  double fixed_tau = 0.0;
  // Reads the keys from `c` and writes the resolved values back into `resolved`.
  static OsmCommonConfig read(ConfigReader& c, nlohmann::json& resolved);
};

template <class T>
class TangentMixing {
 public:
  TangentMixing() = default;
  // Registers `name` (linear: Gamma (m,m); bounded: W (m,m)) or `name`.u / `name`.v
  // (lowrank) in `params`.
  // zero_init: Gamma = 0 at init instead of I (linear mixing only; the OSMFormer's
  // grounding_init: zero).
  TangentMixing(const std::string& name, MixingKind kind, int64_t m, int64_t rank, Rng& rng,
                std::vector<ag::Parameter<T>>& params, bool zero_init = false);
  // Gamma as a dense (m,m) Var on the tape (lowrank: I + U V^T; bounded: from W), or an undefined Var
  // for identity mixing: the form kernels::relative_update takes.
  ag::Var<T> dense() const;

 private:
  MixingKind kind_ = MixingKind::Identity;
  ag::Var<T> gamma_, lr_u_, lr_v_;
};

template <class T>
class PrototypeReadout {
 public:
  PrototypeReadout() = default;
  // Registers proto, bias and log_tau (log_tau only when cfg.fixed_tau is 0).
  // C prototypes, one per class (C = V for a language model). own_prototypes = false
  // registers bias and log_tau only: the model passes its prototypes to logits(H, P)
  // (the OSM-RNN's readout: tied, P_c = N_c).
  PrototypeReadout(const OsmCommonConfig& cfg, int64_t C, Rng& rng, std::vector<ag::Parameter<T>>& params,
                   bool own_prototypes = true);
  // H (N,n,n) -> logits (N,C), against the readout's own prototypes.
  ag::Var<T> logits(const ag::Var<T>& H) const { return logits(H, prototypes()); }
  // H (N,n,n), P (C,n,n) -> logits (N,C) = tau Re tr(H* P_c) + b_c.
  ag::Var<T> logits(const ag::Var<T>& H, const ag::Var<T>& P) const;
  // The prototypes P_c (C,n,n); undefined when the model passes its own.
  ag::Var<T> prototypes() const { return own_ ? proto_.elements() : ag::Var<T>(); }
  // For generation, off the tape: H (N,n,n) and Pt (n*n,C), prototypes transposed once per
  // stream (kernels::prototypes_transposed) -> logits (N,C), the rows logits(H, P) gives.
  Array<T> logits_pretransposed(const Array<T>& H, const Array<T>& Pt) const;

 private:
  std::shared_ptr<const groups::Group> group_;
  bool own_ = true;
  groups::GroupParam<T> proto_;
  ag::Var<T> bias_, log_tau_;
};

// Update dropout (see the head comment). Masks are drawn from a generator that the
// trainer reseeds before every step (Model::begin_step), so a resumed run draws the
// same ones; evaluation (training off) or p = 0 leaves every update in place.
template <class T>
class UpdateDropout {
 public:
  UpdateDropout() = default;
  UpdateDropout(double p, uint64_t seed) : p_(p), rng_(seed ^ 0x5eedULL) {}
  bool active() const { return training_ && p_ > 0; }
  void set_training(bool on) { training_ = on; }
  bool training() const { return training_; }
  void begin_step(uint64_t step_seed) { rng_ = Rng(step_seed ^ 0x5eedULL); }
  // P (N, ...) -> z_i P_i / (1-p) for each row i of the leading axis (a fresh z per row
  // and call); P itself when inactive.
  ag::Var<T> apply(const ag::Var<T>& P);

 private:
  double p_ = 0;
  bool training_ = true;
  Rng rng_{0};
};

}  // namespace liegrad::models
