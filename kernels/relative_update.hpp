// The OSM relative update as one fused tape op (docs/models.md §4, §5):
//
//   H'_i = H_i exp(hat(Gamma vee(H_i* P_i)))          i < N
//
// H, P: (N,n,n); Gamma: (m,m) (linear mixing) or an undefined Var (identity mixing,
// u = vee(H* P)). The same function as the chain compose(H, P, conj) -> vee -> matmul
// by Gamma^T -> hat -> expm -> compose(H, .), in one pass per token instead of six
// passes over the batch, with a hand-written backward (one pass too):
//
//   R = H* P, r = vee(R), u = Gamma r, A = hat(u), E = exp(A), H' = H E;  given G = dL/dH':
//   dH += G E^T,  dE = H^T G,  dA = L(A^T, dE) (expm pullback),  du = vee(dA) / s,
//   dGamma += du r^T,  dr = Gamma^T du,  dR = s hat(dr),  dH += P dR^T,  dP += H dR
//
// (s = group.real_scale(); hat^T = vee / s and vee^T = s hat, groups/group.hpp). Tokens
// run in chunks of 16 (the mixing is a 16 x m by m x m product per chunk) with OpenMP
// over chunks; the forward keeps r, u, E and the exponentials' forward products.
#pragma once
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/var.hpp"
#include "groups/group.hpp"

namespace liegrad::kernels {

using groups::Group;

template <class T>
ag::Var<T> relative_update(const Group& g, const ag::Var<T>& H, const ag::Var<T>& P, const ag::Var<T>& Gamma);

// The combined update of two targets in one exponential (docs/models.md §5, grounding
// `combined`): H'_i = H_i exp(hat(Gamma1 vee(H_i* P1_i) + Gamma2 vee(H_i* P2_i))), both
// tangents taken at the same H. Shapes as relative_update; either Gamma may be undefined.
template <class T>
ag::Var<T> combined_update(const Group& g, const ag::Var<T>& H, const ag::Var<T>& P1, const ag::Var<T>& Gamma1,
                           const ag::Var<T>& P2, const ag::Var<T>& Gamma2);

// check_vjp of relative_update in double for several groups, with and without Gamma.
std::vector<ag::OpCheck> update_op_checks();
// check_vjp of combined_update in double: several groups, with and without Gammas, aliased inputs.
std::vector<ag::OpCheck> combined_update_op_checks();

}  // namespace liegrad::kernels
