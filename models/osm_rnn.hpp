// OSM-RNN (docs/models.md §4; Nunley 2026): a recurrent model whose state is a group element.
//
//   H_0 = I;  R_t = H_t* M_{x_t};  u_t = Gamma vee(Pi(R_t));
//   H_{t+1} = H_t exp(hat(u_t));   logits_t = tau Re tr(H_{t+1}* P_v) + b_v
//
// rnn_drive: relative (R_t = H_t* M_x, default), token (R_t = M_x), both
// (u_t = Gamma (vee(Pi(H_t* M_x)) + vee(Pi(M_x)))), or element (u_t = Gamma b_x with
// M_x = exp(hat(b_x)): with Gamma = I the step is H <- H M_x, the group automaton's own
// step; needs group_param algebra). token and element transitions N_x = exp(hat(u_x))
// depend on the symbol only (transitions(), tasks/word_diagnosis.hpp).
// readout: prototypes (default; learned P_c), rotation or tied (P_c = N_c, the transition of input
// symbol c: needs a token or element drive and as many classes as input symbols, as in
// a word problem with inputs drawn from all of G; liegrad's addition for state tracking,
// docs/state_tracking.md). With tied prototypes a representation rho of G
// (N_x = rho(x)) reads out exactly: the state after a word is N_y for its product y,
// the prototype of class y. rotation (liegrad's addition for rotation tracking,
// docs/rotation_tracking.md) outputs the state itself as a rotation (C = 9, row-major):
// in SO(3) H_t, in SO(d) with d > 3 the first two rows of its top-left 3x3 block
// orthonormalised by the 6D Gram-Schmidt map (models/continuous.hpp), the orientation of
// the first three coordinates when the learned map keeps the motion there; it needs the
// element drive and registers no proto, bias or log_tau.
// Real-valued inputs (ContinuousInput, models/capabilities.hpp; element drive only): the
// features x_t in R^F (F = V) give Phi_t = hat(x_t B) with B = embed (F,m) the learned
// linear map into the algebra (a one-hot x_t = e_v gives the token's b_v), and
// H <- H exp(Gamma Phi_t): a gyroscope's increments integrated on the group.
// Config keys: group ("SO(16)"), mixing (identity|linear|lowrank|bounded), rank,
// rnn_drive, group_param (algebra|manifold), init_scale, dropout (update dropout on
// every step, training only; osm_common.hpp), renormalize_every (16;
// 0 = never): every so many steps the state gets a straight-through Newton-Schulz
// step back onto the group (groups/renormalize.hpp), which keeps the float defect
// near 1e-6 over any length instead of growing with it.
// Parameters: embed, proto (not with readout: tied), bias, log_tau, mix (linear). Count
// (V + C)m + C + 1 (+ m^2), C = V for a language model; tied: V m + C + 1 (+ m^2);
// rotation: V m (+ m^2) (embed and mix only).
// State: H (B,n,n). The whole window is one fused tape op (kernels::osm_scan): the
// batch rows (lanes) run in parallel, each through its steps in order, with a
// hand-written backward through time.
#pragma once
#include "models/capabilities.hpp"
#include "models/decoding.hpp"
#include "models/osm_common.hpp"
#include "models/registry.hpp"

namespace liegrad::models {

template <class T>
class OsmRnn : public ModelBase<T>, public GroupStateReadout<T>, public ContinuousInput<T>,
               public IncrementalDecoding<T> {
 public:
  // vocab V input symbols, classes C readout rows (<= 0: C = V, a language model).
  OsmRnn(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes = 0);
  std::string type() const override { return "osm_rnn"; }
  bool recurrent() const override { return true; }
  ag::Var<T> forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) override;
  // The states H_1..H_T of every row, (B*T,n,n) row-major over (B,T); forward() is
  // the readout of these. With the three below, the GroupStateReadout capability.
  ag::Var<T> encode(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) override;
  const groups::Group& group() const { return *cfg_.group; }
  // True when the step H <- H N_x does not depend on H (token and element drives).
  bool state_independent() const override { return drive_ == Drive::Token || drive_ == Drive::Element; }
  // The transitions N_v (V,n,n) of every input symbol, without recording; ValueError
  // for the relative and both drives, whose step depends on the state.
  Array<T> transitions() const override;
  // The readout's prototypes P_c (C,n,n), without recording (the transitions when tied).
  Array<T> prototypes() const override;
  // Element drive only (N_v = exp(hat(Gamma b_v)), so b_v = Gamma^-1 vee(log N_v), one
  // LU solve for all of them; Gamma = I without mixing); ConfigError for another drive,
  // ValueError for an N_v that is not in the group or a singular Gamma. In SO(n) the logarithm is groups::rotation_log, which also takes N_v with
  // eigenvalues -1 (the cut locus, where the principal logarithm is not real).
  void set_transitions(const std::vector<int32_t>& symbols, const Array<T>& N) override;
  GroupStateReadout<T>* group_state_readout() override { return this; }
  // ContinuousInput: features (B,T,F) through the element drive's map (ConfigError for
  // another drive); outputs as forward().
  ag::Var<T> forward_features(const Array<T>& features, int64_t B, int64_t T_, RecurrentState<T>* state) override;
  bool outputs_rotations() const override { return rotation_readout_; }
  ContinuousInput<T>* continuous_input() override { return this; }
  bool tied_readout() const { return tied_readout_; }
  // Cached steps (models/decoding.hpp): constants hold what depends on the weights only,
  // formed once per cache (the scan table M_v, or for the token and element drives the
  // transitions N_v; the prototypes; Gamma), layers[0] the state H (n*n). A step is then
  // the step's own work (relative drive: one n x n product, the mixing, one exponential,
  // one product; token drives: one product) and the readout, renormalised at the same
  // positions as a forward over the whole stream.
  IncrementalDecoding<T>* incremental_decoding() override { return this; }
  Array<T> decode_step(int32_t symbol, DecodingCache<T>& cache) override;
  void set_training(bool on) override { dropout_.set_training(on); }
  bool training() const override { return dropout_.training(); }
  void begin_step(uint64_t step_seed) override { dropout_.begin_step(step_seed); }

 private:
  enum class Drive { Relative, Token, Both, Element };
  // The scan's table (V,n,n): hat(b_v) for the element drive, M_v = exp(hat(b_v)) otherwise.
  ag::Var<T> scan_table() const;
  // The states, scanning `table` (scan_table(); formed once per step and shared with the
  // tied readout's transitions).
  ag::Var<T> encode(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state,
                    ag::Var<T> table);
  // N_v = exp(hat(Gamma r_v)) (V,n,n) on the tape: r_v = vee(Pi(M_v)) (token) or b_v
  // (element), from the scan's table.
  ag::Var<T> transition_table(const ag::Var<T>& table) const;
  // The scan from the initial or carried state over `table` rows: ids (B*T) index them,
  // or empty ids read the table's B*T rows in order. States (B*T,n,n).
  ag::Var<T> scan(const ag::Var<T>& table, const std::vector<int32_t>& ids, int64_t B, int64_t T_,
                  RecurrentState<T>* state);
  // States H (B*T,n,n) -> outputs (B,T,C): prototype logits or rotations.
  ag::Var<T> outputs(const ag::Var<T>& H, const ag::Var<T>& table, int64_t B, int64_t T_) const;
  ag::Var<T> rotation_of_states(const ag::Var<T>& H, int64_t B, int64_t T_) const;
  void check_rotation_readout(const std::string& drive) const;
  OsmCommonConfig cfg_;
  Drive drive_ = Drive::Relative;
  bool tied_readout_ = false;
  bool rotation_readout_ = false;
  int64_t renormalize_every_ = 16;
  groups::GroupParam<T> embed_;
  PrototypeReadout<T> readout_;
  TangentMixing<T> mix_;
  UpdateDropout<T> dropout_;
};

// The work of one training step per token, per op family, from the resolved config
// (models/osm_rnn_cost.cpp; models/roofline.hpp).
StepCosts osm_rnn_costs(const nlohmann::json& resolved, const CostInputs& in);

// The registry entry of "osm_rnn" (models/registry.hpp): factory, keys, --match knob, FLOPs.
ModelSpec osm_rnn_spec();

}  // namespace liegrad::models
