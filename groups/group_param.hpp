// GroupParam: a trainable table of `count` elements of a group G (token elements,
// prototypes), in either of the spec's two modes (§2):
//
//   algebra  (default) stored as coordinates u (count, m) of algebra elements and
//            used as exp(hat(u)); an ordinary Euclidean optimizer trains u. With a
//            base (geotorch / expRNN style, Lezcano-Casado & Martinez-Rubio 2019) the
//            elements are B exp(hat(u)), and rebase() folds u into B and zeroes u,
//            keeping the elements unchanged while moving the chart's centre.
//   manifold stored as the elements W (count, n, n) themselves; the optimizer takes
//            Riemannian steps W <- W exp(-lr Pi(W^T grad)) (optim/).
//
// Both count m degrees of freedom per element. Initialisation: u ~ N(0, s^2) with
// s = init_scale / sqrt(m), so ||hat(u)|| is about init_scale; manifold elements
// start at exp(hat(u)) of such a draw.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "groups/group.hpp"
#include "autograd/parameter.hpp"

namespace liegrad::groups {

enum class GroupParamMode { Algebra, Manifold };
// "algebra" or "manifold"; anything else throws ValueError naming the value.
GroupParamMode parse_group_param_mode(const std::string& s);

template <class T>
class GroupParam {
 public:
  GroupParam() = default;
  // Draws the initial elements and appends the parameter records (the coordinates
  // or elements, and the base when with_base) to `out`.
  GroupParam(const std::string& name, std::shared_ptr<const Group> group, int64_t count, GroupParamMode mode,
             double init_scale, Rng& rng, std::vector<ag::Parameter<T>>& out, bool with_base = false);

  // The elements (count, n, n) on the tape.
  ag::Var<T> elements() const;
  // Algebra mode with a base: base <- base exp(hat(u)), u <- 0. Throws otherwise.
  void rebase();

  GroupParamMode mode() const { return mode_; }
  const ag::Var<T>& stored() const { return stored_; }

 private:
  std::shared_ptr<const Group> group_;
  GroupParamMode mode_ = GroupParamMode::Algebra;
  ag::Var<T> stored_;  // u (count, m) or W (count, n, n)
  ag::Var<T> base_;    // B (count, n, n), only with a base
};

}  // namespace liegrad::groups
