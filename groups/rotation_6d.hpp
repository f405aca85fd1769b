// The 6D rotation representation (Zhou, Barnes, Lu, Yang and Li 2019, "On the continuity
// of rotation representations in neural networks", section 4.2) as a tape op: a
// regression head's 6 outputs x = (a1, a2) in R^3 x R^3 map to the rotation whose rows are
// the Gram-Schmidt orthonormalisation of a1, a2 and their cross product,
//     b1 = a1 / |a1|,   b2 = u / |u| with u = a2 - <b1, a2> b1,   b3 = b1 x b2,
//     R = [b1; b2; b3] in SO(3)  (det R = <b1 x b2, b3> = 1).
// Unlike a unit quaternion (a double cover) or Euler angles, this map is continuous and
// onto SO(3) from an open set, and when (a1, a2) are the first two rows of a rotation it
// returns that rotation. Its backward (hand-written, checked against central differences
// by rotation_op_checks):
//     gb1 += b2 x gb3,  gb2 += gb3 x b1,
//     gu = (gb2 - <b2, gb2> b2) / |u|,  ga2 = gu - <b1, gu> b1,  gb1 -= <b1, a2> gu + <b1, gu> a2,
//     ga1 = (gb1 - <b1, gb1> b1) / |a1|.
// Undefined where a1 = 0 or a2 is parallel to a1 (a measure-zero set): the forward pass
// throws NumericError there rather than return a non-rotation.
#pragma once
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/var.hpp"

namespace liegrad::groups {

// x (N,6) -> R (N,3,3), row-major rotations.
template <class T>
ag::Var<T> rotation_from_6d(const ag::Var<T>& x);

// The gradient checks of rotation_from_6d (part of group_op_checks, `liegrad gradcheck`).
std::vector<ag::OpCheck> rotation_op_checks();

}  // namespace liegrad::groups
