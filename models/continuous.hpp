// Pieces the models share to read real-valued inputs and to output rotations
// (models/capabilities.hpp, ContinuousInput):
//   embed_features  x (B,T,F) times the embedding table E (F,D): each position's features
//                   through the same linear map whose rows a one-hot token selects.
//   rotation_head   a regression head's 6 outputs per position (B,T,6) to rotations
//                   (B,T,9) by the 6D Gram-Schmidt map (groups/rotation_6d.hpp): continuous
//                   and onto SO(3), unlike a quaternion (a double cover: q and -q are one
//                   rotation, so a regression target has a seam) or an SVD projection (whose
//                   derivative is singular where singular values meet).
// kRotationOutputs: the 9 outputs of a rotation-valued model (the task's classes()).
#pragma once
#include <cstdint>
#include <string>

#include "autograd/var.hpp"

namespace liegrad::models {

inline constexpr int64_t kRotationOutputs = 9;
inline constexpr int64_t kRotationHeadWidth = 6;

// features (B,T,F), table (F,D) -> (B,T,D). ValueError "<who>: ..." when features does
// not hold B*T*F values or one is not finite.
template <class T>
ag::Var<T> embed_features(const ag::Var<T>& table, const Array<T>& features, int64_t B, int64_t T_,
                          const std::string& who);

// x (B,T,6) -> (B,T,9).
template <class T>
ag::Var<T> rotation_head(const ag::Var<T>& x, int64_t B, int64_t T_);

// Adds the identity's first two rows (1,0,0, 0,1,0) to a rotation head's bias (6), so an
// untrained head outputs rotations near I, where the Gram-Schmidt map is well conditioned
// (its derivative grows as 1/|a1|: a head of small outputs would start on its singular set).
template <class T>
void add_identity_to_rotation_bias(Array<T>& bias);

// ConfigError "model.<key>: rotation outputs 9 numbers per position (a 3x3 rotation); the
// task has C classes" unless C = 9.
void check_rotation_classes(const std::string& key, int64_t classes);

}  // namespace liegrad::models
