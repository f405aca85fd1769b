// Names of parameter roles, for checkpoints and printed breakdowns.
#include "autograd/parameter.hpp"

namespace liegrad::ag {

const char* role_name(ParamRole r) {
  switch (r) {
    case ParamRole::Weight: return "weight";
    case ParamRole::Bias: return "bias";
    case ParamRole::Norm: return "norm";
    case ParamRole::Scalar: return "scalar";
    case ParamRole::Mixing: return "mixing";
    case ParamRole::GroupAlgebra: return "group_algebra";
    case ParamRole::GroupManifold: return "group_manifold";
    case ParamRole::GroupBase: return "group_base";
  }
  return "unknown";
}

}  // namespace liegrad::ag
