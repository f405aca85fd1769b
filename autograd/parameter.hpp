// Parameter: a named trainable tensor together with what an optimizer needs to
// know about it: its role (whether weight decay applies, whether it lives on a
// group) and, for group-valued parameters, the group. register_param / add_param
// append one to a parameter list: the one place a parameter record is filled in
// (models::ModelBase::add_param, groups::GroupParam and the OSM layers use them).
//
// Roles (docs/models.md §2, §3):
//   Weight        Euclidean weight matrix (linear layers, embeddings): decayed by AdamW.
//   Bias, Norm, Scalar   vectors, LayerNorm gains/shifts, scalars (log_tau, log_beta): no decay.
//   Mixing        tangent mixing Gamma (initialised to I): no decay (decay would pull it to 0, not I).
//   GroupAlgebra  algebra coordinates (V,m) of group elements used through exp: plain
//                 Euclidean updates, no decay.
//   GroupManifold group elements (V,n,n) stored directly: Riemannian steps
//                 W <- W exp(-lr * Pi(W^T grad)) that keep W in the group, no decay.
//   GroupBase     the base element B of a rebased algebra parameter (elements are
//                 B exp(hat(u))): saved in checkpoints, never trained (no gradient).
//
// A parameter is a tape leaf plus bookkeeping, so it lives here rather than in
// groups/: every model uses it, the transformer and the LSTM included. The group is
// only held (declared, never used, in this layer); optim/ and train/ read it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/var.hpp"

namespace liegrad::groups {
class Group;
}

namespace liegrad::ag {

enum class ParamRole { Weight, Bias, Norm, Scalar, Mixing, GroupAlgebra, GroupManifold, GroupBase };

const char* role_name(ParamRole r);

template <class T>
struct Parameter {
  std::string name;    // checkpoint key, e.g. "layers.0.mix_att"
  Var<T> var;          // the stored tensor the optimizer updates in place
  ParamRole role = ParamRole::Weight;
  std::shared_ptr<const groups::Group> group;  // set for GroupAlgebra / GroupManifold / GroupBase
  int64_t dof = 0;     // degrees of freedom: m per group element, else the element count

  bool decays() const { return role == ParamRole::Weight; }
  bool on_manifold() const { return role == ParamRole::GroupManifold; }
};

// Appends the record of an existing tensor `var` to `params` and returns `var`.
// dof < 0: its element count.
template <class T>
Var<T> register_param(std::vector<Parameter<T>>& params, const std::string& name, Var<T> var, ParamRole role,
                      std::shared_ptr<const groups::Group> group = nullptr, int64_t dof = -1) {
  Parameter<T> p;
  p.name = name;
  p.dof = dof >= 0 ? dof : var.size();
  p.var = std::move(var);
  p.role = role;
  p.group = std::move(group);
  params.push_back(p);
  return p.var;
}

// A new trainable leaf holding `init`, registered as above.
template <class T>
Var<T> add_param(std::vector<Parameter<T>>& params, const std::string& name, Array<T> init, ParamRole role,
                 std::shared_ptr<const groups::Group> group = nullptr, int64_t dof = -1) {
  return register_param(params, name, Var<T>::parameter(std::move(init)), role, std::move(group), dof);
}

}  // namespace liegrad::ag
