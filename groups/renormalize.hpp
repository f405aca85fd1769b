// renormalize: pulls float states that have drifted off the group by rounding back
// onto it, with one Newton-Schulz step towards the polar factor (Higham 2008,
// "Functions of Matrices", §8.3):
//     H <- H (3I - H^T H) / 2,
// which maps a matrix at distance delta from the unitary group to one at distance
// O(delta^2) and keeps block-diagonal and complex-real-form structure (both are
// closed under products and transposes). It cannot restore such structure once
// rounding has broken it, so the group's pattern is projected back first
// (Group::restore_structure_kernel: the average of the real-form blocks for U(d), ...);
// without that, a U(8) state's distance from the real forms random-walks to ~3e-5
// over 100,000 float steps (tests/test_group_drift.cpp). On the tape it is straight-through: its
// pullback is the identity. The correction is of the size of the rounding error it
// removes (~1e-6 in float), so the gradient it ignores is of that size too; in
// double the change is ~1e-13.
//
// Why: a float OSM-RNN state is a product of thousands of exponentials, each
// unitary to about 1e-6, and the defect grows linearly with the steps (2e-3 after
// 10,000 tokens without it; tests/test_osm_models.cpp).
#pragma once
#include "autograd/var.hpp"
#include "groups/group.hpp"

namespace liegrad::groups {

// H (N,n,n) or (n,n): one Newton-Schulz polar step per matrix, identity pullback.
template <class T>
ag::Var<T> renormalize(const Group& g, const ag::Var<T>& H);

// The forward kernel on a dense batch (N,n,n), in place.
template <class T>
void renormalize_kernel(const Group& g, int64_t N, T* H);

// One n x n matrix in place (n = g.n()): the group's storage pattern is restored
// (Group::restore_structure_kernel; a no-op for real groups), then one Newton-Schulz
// step. tmp: 2 n^2 scratch values. For fused kernels that renormalise inside their
// own parallel loops.
template <class T>
void renormalize_one(const Group& g, T* H, T* tmp);

}  // namespace liegrad::groups
