// The token update as one fused tape op: every position is moved by its own token's
// element, re-applied through a learned mixing (docs/models.md §5, grounding `token`):
//
//   u_v = Gamma b_v,  E_v = exp(hat(u_v))        v < V   (b_v: token v's algebra coordinates)
//   H'_i = H_i E_{x_i}                            i < N
//
// b (V,m) are the coordinates of the token elements M_v = exp(hat(b_v)) (GroupParam in
// algebra mode), so with Gamma = I (or undefined: identity mixing) E_v = M_v and the
// update is H <- H M_x, the group automaton's own step. The exponentials are taken once
// per vocabulary entry, not per position (V << N). Backward, given G = dL/dH':
//
//   dH_i = G_i E_{x_i}^T,   dE_v = sum_{i: x_i = v} H_i^T G_i,   du_v = vee(L(A_v^T, dE_v)) / s,
//   dGamma += du_v b_v^T,   db_v = Gamma^T du_v
//
// (s = group.real_scale(); the expm pullback L as in kernels/relative_update.hpp).
#pragma once
#include <cstdint>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/var.hpp"
#include "groups/group.hpp"

namespace liegrad::kernels {

// H (N,n,n); b (V,m); Gamma (m,m) or undefined (identity mixing); ids (N) in [0, V).
template <class T>
ag::Var<T> token_update(const groups::Group& g, const ag::Var<T>& H, const ag::Var<T>& b, const ag::Var<T>& Gamma,
                        const std::vector<int32_t>& ids);

// check_vjp of token_update in double for several groups, with and without Gamma.
std::vector<ag::OpCheck> token_update_op_checks();

}  // namespace liegrad::kernels
