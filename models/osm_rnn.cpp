// OSM-RNN forward pass, config and registry entry (see osm_rnn.hpp).
#include "models/osm_rnn.hpp"

#include "autograd/ops.hpp"
#include "core/small_gemm.hpp"
#include "autograd/tape.hpp"
#include "core/errors.hpp"
#include "core/lapack.hpp"
#include "groups/expm.hpp"
#include "groups/group_ops.hpp"
#include "groups/renormalize.hpp"
#include "groups/rotation_log.hpp"
#include "kernels/mixing.hpp"
#include "kernels/osm_scan.hpp"
#include "kernels/prototype_logits.hpp"
#include "models/continuous.hpp"
#include "models/param_search.hpp"

namespace liegrad::models {

template <class T>
OsmRnn<T>::OsmRnn(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes)
    : ModelBase<T>(config, vocab, classes) {
  ConfigReader c = this->model_reader(config);
  cfg_ = OsmCommonConfig::read(c, this->config_);
  const std::string drive = c.get_string("rnn_drive", "relative", {"relative", "token", "both", "element"});
  drive_ = drive == "relative" ? Drive::Relative
           : drive == "token"  ? Drive::Token
           : drive == "both"   ? Drive::Both
                               : Drive::Element;
  if (drive_ == Drive::Element && cfg_.param_mode != groups::GroupParamMode::Algebra)
    throw ConfigError("model.rnn_drive: element applies the token's algebra coordinates b_x; it needs "
                      "model.group_param 'algebra'");
  renormalize_every_ = c.get_int("renormalize_every", 16, 0);
  const std::string readout = c.get_string("readout", "prototypes", {"prototypes", "tied", "rotation"});
  tied_readout_ = readout == "tied";
  rotation_readout_ = readout == "rotation";
  c.finish();
  if (rotation_readout_) check_rotation_readout(drive);
  if (tied_readout_ && !state_independent())
    throw ConfigError("model.readout: tied uses the transitions N_x as prototypes; it needs model.rnn_drive "
                      "token or element (got " + drive + ")");
  if (tied_readout_ && this->C_ != vocab)
    throw ConfigError("model.readout: tied needs one class per input symbol (" + std::to_string(vocab) +
                      " input symbols, " + std::to_string(this->C_) + " classes), as in a word problem with "
                      "data.inputs 'all'");
  this->config_["renormalize_every"] = renormalize_every_;
  this->config_["type"] = "osm_rnn";
  this->config_["rnn_drive"] = drive;
  if (tied_readout_ || rotation_readout_) this->config_["readout"] = readout;  // only when set: older runs resolve as before
  dropout_ = UpdateDropout<T>(cfg_.dropout, seed);
  Rng rng(seed);
  embed_ = groups::GroupParam<T>("embed", cfg_.group, vocab, cfg_.param_mode, cfg_.init_scale, rng, this->params_);
  if (!rotation_readout_) readout_ = PrototypeReadout<T>(cfg_, this->C_, rng, this->params_, !tied_readout_);
  mix_ = TangentMixing<T>("mix", cfg_.mixing, cfg_.group->dim(), cfg_.rank, rng, this->params_);
}

template <class T>
ag::Var<T> OsmRnn<T>::forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) {
  const ag::Var<T> table = scan_table();  // once per step: the tied readout reads it too
  return outputs(encode(inputs, B, T_, state, table), table, B, T_);
}

template <class T>
ag::Var<T> OsmRnn<T>::outputs(const ag::Var<T>& H, const ag::Var<T>& table, int64_t B, int64_t T_) const {
  if (rotation_readout_) return rotation_of_states(H, B, T_);
  return ag::reshape(tied_readout_ ? readout_.logits(H, transition_table(table)) : readout_.logits(H),
                     Shape{B, T_, this->C_});
}

template <class T>
ag::Var<T> OsmRnn<T>::scan_table() const {
  return drive_ == Drive::Element ? groups::hat(*cfg_.group, embed_.stored()) : embed_.elements();
}

template <class T>
ag::Var<T> OsmRnn<T>::encode(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) {
  return encode(inputs, B, T_, state, scan_table());
}

template <class T>
ag::Var<T> OsmRnn<T>::encode(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state,
                             ag::Var<T> table) {
  using namespace ag;
  if (static_cast<int64_t>(inputs.size()) != B * T_)
    throw ShapeError("osm_rnn: " + std::to_string(inputs.size()) + " inputs for a (" + std::to_string(B) + "," +
                     std::to_string(T_) + ") batch");
  // Update dropout (training): every step's u_t is linear in its table row, so each
  // step gets its own copy of the row scaled by 0 or 1/(1-p), a table of B*T rows indexed in order.
  if (dropout_.active()) return scan(dropout_.apply(embedding(table, inputs, {B * T_})), {}, B, T_, state);
  return scan(table, inputs, B, T_, state);
}

template <class T>
ag::Var<T> OsmRnn<T>::scan(const ag::Var<T>& table, const std::vector<int32_t>& ids_in, int64_t B, int64_t T_,
                           RecurrentState<T>* state) {
  using namespace ag;
  const groups::Group& g = *cfg_.group;
  const int64_t n = g.n();
  Array<T> H0;
  if (state && !state->empty()) {
    H0 = state->tensors.at(0);
    if (H0.shape() != Shape{B, n, n})
      throw ShapeError("osm_rnn: carried state " + H0.shape().str() + " does not fit batch " + std::to_string(B));
  } else {
    H0 = Array<T>(Shape{B, n, n});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < n; ++i) H0.at(b, i, i) = T(1);
  }
  // Empty ids: the table holds one row per step, in order.
  std::vector<int32_t> ids;
  if (ids_in.empty()) {
    ids.resize(static_cast<size_t>(B * T_));
    for (int64_t i = 0; i < B * T_; ++i) ids[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  }
  // The whole window in one fused op (kernels/osm_scan.hpp): lanes in parallel, steps in order.
  // The element drive is the scan's token drive on the table hat(b_v): vee(Pi(hat(b))) = b.
  const kernels::ScanDrive drive = drive_ == Drive::Relative ? kernels::ScanDrive::Relative
                                  : drive_ == Drive::Both   ? kernels::ScanDrive::Both
                                                            : kernels::ScanDrive::Token;
  Var<T> states = kernels::osm_scan(g, Var<T>::constant(std::move(H0)), table, ids.empty() ? ids_in : ids, B, T_,
                                   mix_.dense(), drive, renormalize_every_);  // (B*T,n,n)
  if (state) {
    Array<T> last(Shape{B, n, n});
    for (int64_t b = 0; b < B; ++b)
      std::copy(states.value().data() + (b * T_ + T_ - 1) * n * n, states.value().data() + (b * T_ + T_) * n * n,
                last.data() + b * n * n);
    state->tensors = {std::move(last)};
  }
  return states;
}

template <class T>
Array<T> OsmRnn<T>::decode_step(int32_t symbol, DecodingCache<T>& cache) {
  using namespace ag;
  NoGrad no_grad;
  const groups::Group& g = *cfg_.group;
  const int64_t n = g.n(), nn = n * n;
  if (symbol < 0 || symbol >= this->V_)
    throw ValueError("osm_rnn: symbol " + std::to_string(symbol) + " is outside the vocabulary of " +
                     std::to_string(this->V_));
  if (cache.positions == 0 || cache.constants.empty()) {  // a new stream: what every step reuses
    cache.clear();
    const Var<T> table = scan_table();
    const bool token = state_independent();
    cache.constants.push_back(Var<T>::constant(token ? transition_table(table).value() : table.value()));
    // The prototypes transposed once per stream: the readout's product reads them so
    // (kernels/prototype_logits.hpp), and forming them per symbol cost more than the step.
    cache.constants.push_back(rotation_readout_ ? Var<T>()
                              : Var<T>::constant(kernels::prototypes_transposed(
                                    tied_readout_ ? cache.constants[0].value() : readout_.prototypes().value())));
    // Gamma transposed once per stream: every step's mixing reads it (kernels/osm_scan.hpp, osm_step_one).
    const Var<T> gamma = mix_.dense();
    cache.constants.push_back(gamma.defined() ? Var<T>::constant(kernels::gamma_transposed(gamma)) : Var<T>());
    cache.layers.assign(1, std::vector<T>(static_cast<size_t>(nn), T(0)));
    for (int64_t i = 0; i < n; ++i) cache.layers[0][static_cast<size_t>(i * n + i)] = T(1);  // H_0 = I
  }
  std::vector<T>& state = cache.layers[0];
  Array<T> H(Shape{1, n, n});
  if (state_independent()) {  // H <- H N_x
    small_gemm_ld<T>(false, false, n, n, n, T(1), state.data(), n, cache.constants[0].value().data() + symbol * nn, n,
                     T(0), H.data(), n);
  } else {  // the scan's own step on the cached table, one lane, one step, off the tape
    const kernels::ScanDrive drive = drive_ == Drive::Relative ? kernels::ScanDrive::Relative : kernels::ScanDrive::Both;
    const Var<T>& gammaT = cache.constants[2];
    kernels::osm_step_one(g, state.data(), cache.constants[0].value().data() + symbol * nn,
                          gammaT.defined() ? gammaT.value().data() : nullptr, drive, H.data());
  }
  cache.positions += 1;
  if (renormalize_every_ > 0 && cache.positions % renormalize_every_ == 0) {  // as the scan does at step t + 1
    std::vector<T> tmp(static_cast<size_t>(2 * nn));
    groups::renormalize_one(g, H.data(), tmp.data());
  }
  std::copy(H.data(), H.data() + nn, state.begin());
  if (rotation_readout_)
    return rotation_of_states(Var<T>::constant(std::move(H)), 1, 1).value().reshaped(Shape{kRotationOutputs});
  return readout_.logits_pretransposed(H, cache.constants[1].value()).reshaped(Shape{this->C_});
}

template <class T>
Array<T> OsmRnn<T>::transitions() const {
  if (!state_independent())
    throw ValueError("osm_rnn: the " + std::string(drive_ == Drive::Relative ? "relative" : "both") +
                     " drive's step depends on the state; only token and element drives have transitions N_x");
  const ag::NoGrad no_tape;
  return transition_table(scan_table()).value();
}

template <class T>
void OsmRnn<T>::set_transitions(const std::vector<int32_t>& symbols, const Array<T>& N) {
  const groups::Group& g = *cfg_.group;
  if (drive_ != Drive::Element)
    throw ConfigError("osm_rnn: set_transitions needs rnn_drive \"element\" (N_v = exp(hat(Gamma b_v)), so b_v = "
                      "Gamma^-1 vee(log N_v)); the token and state-dependent drives cannot take a chosen transition");
  const int64_t n = g.n(), m = g.dim(), k = static_cast<int64_t>(symbols.size());
  if (N.size() != k * n * n)
    throw ShapeError("osm_rnn: set_transitions got " + std::to_string(N.size()) + " numbers for " + std::to_string(k) +
                     " transitions of " + std::to_string(n) + " x " + std::to_string(n));
  ag::Var<T> table = embed_.stored();  // a handle on the parameter itself
  Array<T>& b = table.value();          // (V,m)
  const int64_t V = b.shape()[0];
  // SO(n) takes rotation_log, which has an answer on the cut locus too (an element of a
  // learned representation may have eigenvalues -1 to rounding); other groups their log.
  const bool rotations = g.name().rfind("SO(", 0) == 0;
  std::vector<double> u(static_cast<size_t>(m * k));  // vee(log N_i) as column i (m x k)
  for (int64_t i = 0; i < k; ++i) {
    const int32_t v = symbols[static_cast<size_t>(i)];
    if (v < 0 || v >= V)
      throw ValueError("osm_rnn: set_transitions: symbol " + std::to_string(v) + " outside 0.." + std::to_string(V - 1));
    Array<double> X(Shape{n, n});
    for (int64_t j = 0; j < n * n; ++j) X[j] = static_cast<double>(N[i * n * n + j]);
    if (const double defect = g.defect(X); !(defect <= 1e-3))
      throw ValueError("osm_rnn: set_transitions: the transition of symbol " + std::to_string(v) + " is not in " +
                       g.name() + " (defect " + std::to_string(defect) + ", expected <= 1e-3)");
    Array<double> A(Shape{n, n});
    if (rotations) {
      groups::renormalize_kernel(g, 1, X.data());  // float input: onto SO(n) to double precision first
      groups::rotation_log(n, X.data(), A.data());
    } else {
      A = g.log(X);
    }
    const Array<double> coords = g.vee(A);
    for (int64_t j = 0; j < m; ++j) u[static_cast<size_t>(j * k + i)] = coords[j];
  }
  // b_v = Gamma^-1 u_v for all k at once (columns of u), or u_v itself without mixing.
  const ag::Var<T> gamma = mix_.dense();
  if (gamma.defined()) {
    std::vector<double> G(gamma.value().data(), gamma.value().data() + m * m);
    try {
      lapack::solve(m, k, G.data(), u.data());
    } catch (const NumericError&) {
      throw ValueError("osm_rnn: set_transitions: the mixing Gamma is singular, so Gamma b = vee(log N) has no "
                       "unique solution");
    }
  }
  for (int64_t i = 0; i < k; ++i) {
    T* row = b.data() + static_cast<int64_t>(symbols[static_cast<size_t>(i)]) * m;
    for (int64_t j = 0; j < m; ++j) row[j] = static_cast<T>(u[static_cast<size_t>(j * k + i)]);
  }
}

template <class T>
ag::Var<T> OsmRnn<T>::transition_table(const ag::Var<T>& table) const {
  const groups::Group& g = *cfg_.group;
  // r_v = vee(Pi(M_v)) (token) or b_v (element), u_v = Gamma r_v, N_v = exp(hat(u_v)).
  ag::Var<T> r = drive_ == Drive::Element ? embed_.stored() : groups::vee(g, table);
  const ag::Var<T> gamma = mix_.dense();
  if (gamma.defined()) r = ag::matmul(r, gamma, false, true);
  return groups::expm(groups::hat(g, r));
}

template <class T>
Array<T> OsmRnn<T>::prototypes() const {
  if (tied_readout_) return transitions();
  if (rotation_readout_) throw ValueError("osm_rnn: the rotation readout has no prototypes (it reads the state itself)");
  const ag::NoGrad no_tape;
  return readout_.prototypes().value();
}

template <class T>
void OsmRnn<T>::check_rotation_readout(const std::string& drive) const {
  const groups::Group& g = *cfg_.group;
  if (drive_ != Drive::Element)
    throw ConfigError("model.readout: rotation reads the state as an orientation; it needs model.rnn_drive "
                      "'element' (the increments' linear map into the algebra), got '" + drive + "'");
  if (g.is_complex() || g.n() < 3)
    throw ConfigError("model.readout: rotation needs a real group of 3x3 matrices or larger (SO(3), SO(d) with "
                      "d >= 3), got " + g.name());
  check_rotation_classes("readout", this->C_);
}

template <class T>
ag::Var<T> OsmRnn<T>::forward_features(const Array<T>& features, int64_t B, int64_t T_, RecurrentState<T>* state) {
  if (drive_ != Drive::Element)
    throw ConfigError("model.rnn_drive: real-valued inputs go through the element drive's linear map into the "
                      "algebra; set model.rnn_drive 'element' (model.group_param 'algebra')");
  const groups::Group& g = *cfg_.group;
  // Phi_t = x_t B, B = embed (F,m): a one-hot x_t = e_v gives the token's b_v.
  const ag::Var<T> phi = ag::reshape(embed_features(embed_.stored(), features, B, T_, "osm_rnn"), Shape{B * T_, g.dim()});
  const ag::Var<T> table = scan_table();
  return outputs(scan(dropout_.apply(groups::hat(g, phi)), {}, B, T_, state), table, B, T_);
}

template <class T>
ag::Var<T> OsmRnn<T>::rotation_of_states(const ag::Var<T>& H, int64_t B, int64_t T_) const {
  const int64_t n = cfg_.group->n();
  if (n == 3) return ag::reshape(H, Shape{B, T_, kRotationOutputs});  // SO(3): the state itself
  // The first two rows of the top-left 3x3 block, orthonormalised (groups/rotation_6d.hpp).
  const ag::Var<T> rows = ag::slice(ag::slice(H, 1, 0, 2), 2, 0, 3);  // (B*T,2,3)
  return rotation_head(rows, B, T_);
}

template class OsmRnn<float>;
template class OsmRnn<double>;

ModelSpec osm_rnn_spec() {
  return model_spec<OsmRnn>("osm_rnn", {.knob = group_size_knob(false), .costs_per_token = osm_rnn_costs});
}

}  // namespace liegrad::models
