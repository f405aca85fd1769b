// Real-valued inputs and rotation outputs shared by the models (see continuous.hpp).
#include "models/continuous.hpp"

#include <cmath>

#include "autograd/ops.hpp"
#include "core/errors.hpp"
#include "groups/rotation_6d.hpp"

namespace liegrad::models {

template <class T>
ag::Var<T> embed_features(const ag::Var<T>& table, const Array<T>& features, int64_t B, int64_t T_,
                          const std::string& who) {
  const int64_t F = table.shape()[0], D = table.shape()[1];
  if (features.size() != B * T_ * F)
    throw ValueError(who + ": " + std::to_string(features.size()) + " feature values for a (" + std::to_string(B) +
                     "," + std::to_string(T_) + ") batch of " + std::to_string(F) + " features per position");
  for (int64_t i = 0; i < features.size(); ++i)
    if (!std::isfinite(static_cast<double>(features.data()[i])))
      throw ValueError(who + ": feature " + std::to_string(i % F) + " at position " + std::to_string(i / F) +
                       " is not finite");
  Array<T> x = features;
  x.reshape_inplace(Shape{B * T_, F});
  return ag::reshape(ag::matmul(ag::Var<T>::constant(std::move(x)), table), Shape{B, T_, D});
}

template <class T>
ag::Var<T> rotation_head(const ag::Var<T>& x, int64_t B, int64_t T_) {
  return ag::reshape(groups::rotation_from_6d(ag::reshape(x, Shape{B * T_, kRotationHeadWidth})),
                     Shape{B, T_, kRotationOutputs});
}

template <class T>
void add_identity_to_rotation_bias(Array<T>& bias) {
  bias[0] += T(1);
  bias[4] += T(1);
}

void check_rotation_classes(const std::string& key, int64_t classes) {
  if (classes != kRotationOutputs)
    throw ConfigError("model." + key + ": rotation outputs " + std::to_string(kRotationOutputs) +
                      " numbers per position (a 3x3 rotation), but the task has " + std::to_string(classes) +
                      " classes; use it with the rotations task (data.dataset \"rotations:SO3\")");
}

template ag::Var<float> embed_features(const ag::Var<float>&, const Array<float>&, int64_t, int64_t, const std::string&);
template ag::Var<double> embed_features(const ag::Var<double>&, const Array<double>&, int64_t, int64_t,
                                        const std::string&);
template ag::Var<float> rotation_head(const ag::Var<float>&, int64_t, int64_t);
template void add_identity_to_rotation_bias(Array<float>&);
template void add_identity_to_rotation_bias(Array<double>&);
template ag::Var<double> rotation_head(const ag::Var<double>&, int64_t, int64_t);

}  // namespace liegrad::models
