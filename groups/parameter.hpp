// Parameter: a named trainable tensor together with what an optimizer needs to
// know about it: its role (whether weight decay applies, whether it lives on a
// group) and, for group-valued parameters, the group.
//
// Roles (spec §2, §3):
//   Weight        Euclidean weight matrix (linear layers, embeddings): decayed by AdamW.
//   Bias, Norm, Scalar   vectors, LayerNorm gains/shifts, scalars (log_tau, log_beta): no decay.
//   Mixing        tangent mixing Gamma (initialised to I): no decay (decay would pull it to 0, not I).
//   GroupAlgebra  algebra coordinates (V,m) of group elements used through exp: plain
//                 Euclidean updates, no decay.
//   GroupManifold group elements (V,n,n) stored directly: Riemannian steps
//                 W <- W exp(-lr * Pi(W^T grad)) that keep W in the group, no decay.
//   GroupBase     the base element B of a rebased algebra parameter (elements are
//                 B exp(hat(u))): saved in checkpoints, never trained (no gradient).
#pragma once
#include <memory>
#include <string>

#include "autograd/var.hpp"

namespace liegrad::groups {

class Group;

enum class ParamRole { Weight, Bias, Norm, Scalar, Mixing, GroupAlgebra, GroupManifold, GroupBase };

const char* role_name(ParamRole r);

template <class T>
struct Parameter {
  std::string name;    // checkpoint key, e.g. "layers.0.mix_att"
  ag::Var<T> var;      // the stored tensor the optimizer updates in place
  ParamRole role = ParamRole::Weight;
  std::shared_ptr<const Group> group;  // set for GroupAlgebra / GroupManifold
  int64_t dof = 0;     // degrees of freedom: m per group element, else the element count

  bool decays() const { return role == ParamRole::Weight; }
  bool on_manifold() const { return role == ParamRole::GroupManifold; }
};

}  // namespace liegrad::groups
