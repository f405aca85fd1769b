// Global-norm gradient clipping (Pascanu, Mikolov & Bengio 2013): treats the
// gradients of all parameters as one vector g; when ||g||_2 > max_norm, scales every
// gradient by max_norm / ||g||_2 so the global norm becomes max_norm.
//
// The norm is accumulated in double. Parameters without a gradient this step, and
// GroupBase parameters (never trained), are skipped. The gradients are modified through
// the parameters' Var handles (which alias the model's tensors), so a const vector of
// parameters is enough.
#pragma once
#include <vector>

#include "autograd/parameter.hpp"

namespace liegrad::optim {

// The global L2 norm of all present gradients (double accumulation).
template <class T>
double grad_norm(const std::vector<ag::Parameter<T>>& params);

// Returns the pre-clip global norm. Scales the gradients only when the norm is finite
// and exceeds max_norm; max_norm <= 0, infinite or NaN means off (nothing is scaled,
// the norm is still returned). A non-finite norm is returned unscaled: the caller
// decides whether to skip the step.
template <class T>
double clip_grad_norm(const std::vector<ag::Parameter<T>>& params, double max_norm);

}  // namespace liegrad::optim
