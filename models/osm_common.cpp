// Tangent mixing, prototype readout and the exponential update (see osm_common.hpp).
#include "models/osm_common.hpp"

#include <algorithm>
#include <cmath>

#include "autograd/ops.hpp"
#include "core/profile.hpp"
#include "groups/expm.hpp"
#include "groups/group_ops.hpp"
#include "kernels/prototype_logits.hpp"
#include "models/registry.hpp"

namespace liegrad::models {

using ag::ParamRole;

OsmCommonConfig OsmCommonConfig::read(ConfigReader& c, nlohmann::json& resolved) {
  OsmCommonConfig o;
  const std::string group = c.get_string("group", kDefaultOsmGroup);
  try {
    o.group = groups::make_group(group);
  } catch (const ValueError& e) {
    throw ConfigError(std::string("model.group: ") + e.what());
  }
  if (o.group->dim() < 1)
    throw ConfigError("model.group: " + group + " has a zero-dimensional algebra (nothing to learn); use d >= 2");
  const std::string mixing = c.get_string("mixing", "linear", {"identity", "linear", "lowrank", "bounded"});
  o.mixing = mixing == "identity" ? MixingKind::Identity
             : mixing == "linear" ? MixingKind::Linear
             : mixing == "lowrank" ? MixingKind::LowRank
                                   : MixingKind::Bounded;
  o.rank = c.get_int("rank", 8, 1);
  const std::string mode = c.get_string("group_param", "algebra", {"algebra", "manifold"});
  o.param_mode = groups::parse_group_param_mode(mode);
  o.init_scale = c.get_double("init_scale", 1.0, 0.0);
  o.dropout = c.get_double("dropout", 0.0, 0.0, 0.99);
  if (c.has("tau") && c.json().at("tau").is_string())
    c.get_string("tau", "learned", {"learned"});
  else
    o.fixed_tau = c.get_double("tau", 0.0, 1e-6, 1e6);
  resolved["group"] = o.group->name();
  resolved["mixing"] = mixing;
  if (o.mixing == MixingKind::LowRank) resolved["rank"] = o.rank;
  resolved["group_param"] = mode;
  resolved["init_scale"] = o.init_scale;
  if (o.dropout > 0) resolved["dropout"] = o.dropout;  // only when set: older runs resolve as before
  if (o.fixed_tau > 0) resolved["tau"] = o.fixed_tau;   // likewise: absent means learned
  return o;
}

template <class T>
TangentMixing<T>::TangentMixing(const std::string& name, MixingKind kind, int64_t m, int64_t rank, Rng& rng,
                                std::vector<ag::Parameter<T>>& params, bool zero_init)
    : kind_(kind) {
  auto add = [&](const std::string& n, Array<T> init) { return ag::add_param(params, n, std::move(init), ParamRole::Mixing); };
  if (zero_init && kind != MixingKind::Linear)
    throw ConfigError(name + ": a zero initial mixing needs model.mixing 'linear'");
  if (kind == MixingKind::Linear) {
    gamma_ = add(name, zero_init ? Array<T>(Shape{m, m}) : Array<T>::eye(m));
  } else if (kind == MixingKind::Bounded) {
    gamma_ = add(name, Array<T>(Shape{m, m}));  // W = 0: Gamma = I
  } else if (kind == MixingKind::LowRank) {
    lr_u_ = add(name + ".u", Array<T>(Shape{m, rank}));
    lr_v_ = add(name + ".v", rng.normal_array<T>(Shape{m, rank}, 1.0 / std::sqrt(static_cast<double>(m))));
  }
}

template <class T>
ag::Var<T> TangentMixing<T>::dense() const {
  switch (kind_) {
    case MixingKind::Identity: return ag::Var<T>();
    case MixingKind::Linear: return gamma_;
    case MixingKind::LowRank: {
      prof::Tag timed(prof::Family::Tangent);
      const int64_t m = lr_u_.shape()[0];
      return ag::add(ag::Var<T>::constant(Array<T>::eye(m)), ag::matmul(lr_u_, lr_v_, false, true));
    }
    case MixingKind::Bounded: {  // Gamma = I - W / sqrt(1 + ||W||_F^2)
      prof::Tag timed(prof::Family::Tangent);
      const int64_t m = gamma_.shape()[0];
      const ag::Var<T> root = ag::exp(ag::scale(ag::log(ag::add_const(ag::sum(ag::square(gamma_)), T(1))), T(0.5)));
      return ag::sub(ag::Var<T>::constant(Array<T>::eye(m)), ag::div(gamma_, root));
    }
  }
  return ag::Var<T>();
}

template <class T>
PrototypeReadout<T>::PrototypeReadout(const OsmCommonConfig& cfg, int64_t C, Rng& rng,
                                      std::vector<ag::Parameter<T>>& params, bool own_prototypes)
    : group_(cfg.group), own_(own_prototypes) {
  if (own_prototypes) proto_ = groups::GroupParam<T>("proto", cfg.group, C, cfg.param_mode, cfg.init_scale, rng, params);
  bias_ = ag::add_param(params, "bias", Array<T>(Shape{C}), ParamRole::Bias);
  log_tau_ = cfg.fixed_tau > 0
                 ? ag::Var<T>::constant(Array<T>::scalar(static_cast<T>(std::log(cfg.fixed_tau))))
                 : ag::add_param(params, "log_tau", Array<T>::scalar(T(0)), ParamRole::Scalar);
}

template <class T>
ag::Var<T> PrototypeReadout<T>::logits(const ag::Var<T>& H, const ag::Var<T>& P) const {
  prof::Tag timed(prof::Family::Readout);
  // tau Re tr(H* P_c) + b_c in one op; its unfused reference is
  // ag::add(ag::mul(groups::inner_all(*group_, H, P), ag::exp(log_tau_)), bias_).
  return kernels::prototype_logits(*group_, H, P, log_tau_, bias_);
}

template <class T>
Array<T> PrototypeReadout<T>::logits_pretransposed(const Array<T>& H, const Array<T>& Pt) const {
  prof::Tag timed(prof::Family::Readout);
  return kernels::prototype_logits_pretransposed(*group_, H, Pt, log_tau_.value(), bias_.value());
}

template <class T>
ag::Var<T> UpdateDropout<T>::apply(const ag::Var<T>& P) {
  if (!active()) return P;
  const int64_t rows = P.shape()[0], row_size = P.size() / std::max<int64_t>(rows, 1);
  const T keep_scale = static_cast<T>(1.0 / (1.0 - p_));
  Array<T> mask(P.shape());
  for (int64_t i = 0; i < rows; ++i) {
    const T z = rng_.uniform() < p_ ? T(0) : keep_scale;
    std::fill(mask.data() + i * row_size, mask.data() + (i + 1) * row_size, z);
  }
  return ag::mul(P, ag::Var<T>::constant(std::move(mask)));
}

template class TangentMixing<float>;
template class TangentMixing<double>;
template class PrototypeReadout<float>;
template class PrototypeReadout<double>;
template class UpdateDropout<float>;
template class UpdateDropout<double>;

}  // namespace liegrad::models
