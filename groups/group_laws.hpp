// The law suite every Lie group of liegrad must satisfy, as one registry that
// `liegrad groupcheck` prints and the tests (tests/test_group_laws.cpp) run for every
// group. Each law is measured in double precision at three kinds of points (manif's
// triple, Sola et al. 2018):
//     identity   X = I,                      u = 0
//     near I     X = exp(hat(u)),            ||u|| = kLawNear
//     random     X Haar-random (Mezzadri 2007), u ~ N(0, 1) in every coordinate
// (for groups with an O(d) factor, whose det -1 component has no real logarithm, the
// random points of the log laws are exp(hat(u)) with u ~ N(0, 1) instead), and passes
// when the worst value over kLawSamples samples at each kind of point is <= its
// tolerance (NaN fails).
//
// Tangent vectors at X are X A with A in g, so the linear laws are checked on the
// tangent space at each point: the tangent projection P_X(M) = X Pi(X* M) (Absil,
// Mahony & Sepulchre 2008, §3.6) must be idempotent and self-adjoint, and the chart
// u -> X hat(u) must be an isometry with adjoint and inverse vee(X* .). At X = I they
// are the plain laws of Pi, hat and vee (groups/group.hpp). The derivative of exp is
// checked three ways at A = hat(u): check_vjp of u -> X exp(hat(u))
// (autograd/gradcheck.hpp), the fast pullback against the block-triangular reference
// (Mathias 1996), and the adjoint identity <G, L(A, E)> = <L(A^T, G), E> (groups/expm.hpp).
//
// Norms are the spec's: ||M|| = sqrt(Re tr(M* M)) = sqrt(s tr(M^T M)) on stored matrices,
// s = real_scale() (1 real, 1/2 complex), the Euclidean norm on coordinates.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "groups/group.hpp"

namespace liegrad::groups {

inline constexpr int64_t kLawSamples = 4;  // matrices per kind of point
inline constexpr double kLawNear = 1e-3;   // ||u|| near the identity

// The kinds of points, in the order of LawResult::value.
inline constexpr const char* kLawPointNames[3] = {"identity", "near I", "random"};

struct LawInfo {
  std::string name;     // what must hold, e.g. "exp(log X) = X"
  std::string measure;  // the measured quantity, e.g. "||exp(log X) - X||"
  std::string formula;  // one line of explanation for --help
  double tol = 0;
};

// The registry, in the order the laws are checked and printed.
const std::vector<LawInfo>& group_laws();

struct LawResult {
  const LawInfo* law = nullptr;
  double value[3] = {0, 0, 0};  // worst value at the identity, near I, at random points
  bool passed = false;
};

// Every law of the registry for group g; the random points are drawn from a seed derived
// from `seed` and the group's name (so a group's numbers do not depend on which other
// groups are checked).
std::vector<LawResult> check_group_laws(const Group& g, uint64_t seed);

// True when some factor of the group spelled `name` is O(d) (not SO(d)).
bool has_o_factor(const std::string& name);

}  // namespace liegrad::groups
