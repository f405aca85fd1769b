// GroupParam: initialisation, the elements on the tape, and rebase (see header).
#include "groups/group_param.hpp"

#include <cmath>

#include "autograd/ops.hpp"
#include "groups/expm.hpp"
#include "groups/group_ops.hpp"

namespace liegrad::groups {

GroupParamMode parse_group_param_mode(const std::string& s) {
  if (s == "algebra") return GroupParamMode::Algebra;
  if (s == "manifold") return GroupParamMode::Manifold;
  throw ValueError("group_param: unknown mode '" + s + "' (expected 'algebra' or 'manifold')");
}

template <class T>
GroupParam<T>::GroupParam(const std::string& name, std::shared_ptr<const Group> group, int64_t count,
                          GroupParamMode mode, double init_scale, Rng& rng, std::vector<ag::Parameter<T>>& out,
                          bool with_base)
    : group_(std::move(group)), mode_(mode) {
  const int64_t m = group_->dim(), n = group_->n();
  if (m < 1) throw ValueError(name + ": group " + group_->name() + " has a zero-dimensional algebra; nothing to train");
  if (with_base && mode != GroupParamMode::Algebra)
    throw ValueError(name + ": a base (rebase) applies to algebra-mode parameters only");
  const double sigma = init_scale / std::sqrt(static_cast<double>(m));
  Array<double> u = rng.normal_array<double>(Shape{count, m}, sigma);
  if (mode == GroupParamMode::Algebra) {
    stored_ = ag::Var<T>::parameter(u.cast<T>());
  } else {
    Array<double> W(Shape{count, n, n});
    group_->exp_kernel(count, group_->hat(u).data(), W.data());
    stored_ = ag::Var<T>::parameter(W.cast<T>());
  }
  const ag::ParamRole role = mode == GroupParamMode::Algebra ? ag::ParamRole::GroupAlgebra : ag::ParamRole::GroupManifold;
  ag::register_param(out, name, stored_, role, group_, count * m);
  if (with_base) {
    Array<T> B(Shape{count, n, n});
    const Array<T> I = group_->identity<T>();
    for (int64_t k = 0; k < count; ++k) std::copy(I.data(), I.data() + n * n, B.data() + k * n * n);
    base_ = ag::Var<T>::constant(std::move(B));
    ag::register_param(out, name + ".base", base_, ag::ParamRole::GroupBase, group_, 0);
  }
}

template <class T>
ag::Var<T> GroupParam<T>::elements() const {
  if (mode_ == GroupParamMode::Manifold) return stored_;
  ag::Var<T> e = expm(hat(*group_, stored_));
  return base_.defined() ? compose(*group_, base_, e) : e;
}

template <class T>
void GroupParam<T>::rebase() {
  if (!base_.defined()) throw ValueError("rebase: this group parameter has no base (enable it at construction)");
  ag::NoGrad ng;
  const Array<T> e = elements().value();
  base_.value() = e;
  stored_.value().fill(T(0));
}

template class GroupParam<float>;
template class GroupParam<double>;

}  // namespace liegrad::groups
