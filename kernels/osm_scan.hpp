// The OSM-RNN time loop (docs/models.md §4) as one fused tape op: every lane of the batch runs
// its whole window of steps in one pass, lanes split over the OpenMP threads (one
// parallel region for the forward, one for the backward, instead of ~12 tape ops per
// step over a batch of 32), with a hand-written backward through time.
//
//   per lane b, t = 0..T-1, with M_t = table[ids[b,t]] and H the state before step t:
//     r_t = vee(H* M_t)  (relative) | vee(M_t)  (token) | vee(H* M_t) + vee(M_t)  (both)
//     u_t = Gamma r_t (Gamma undefined: u_t = r_t),   E_t = exp(hat(u_t)),   H <- H E_t
//     every `renormalize_every` steps (t+1 a multiple; 0 = never) H gets the
//     straight-through Newton-Schulz step of groups/renormalize.hpp;
//     out[b,t] = H.
//
// Backward (given dL/dout): the state adjoint runs backwards through time,
//   dH_t = (dH_{t+1} + G_t) E_t^T + [relative] M_t dR_t^T,  dE_t = H_t^T (dH_{t+1} + G_t),
//   du_t = vee(expm pullback(A_t, dE_t)) / s,  dGamma += du_t r_t^T,  dr_t = Gamma^T du_t,
//   dR_t = s hat(dr_t),  dtable[ids[b,t]] += H_t dR_t (relative) + dR_t (token),
// and the renormalisation passes the adjoint through unchanged. Within a thread the
// lanes advance in lockstep, so the mixing is one (lanes x m) by (m x m) product per step.
// The forward keeps the states, r_t, u_t and the exponentials' plans; the backward forms
// E_t and the exponential's products again from hat(u_t) (groups/expm_kernel.hpp).
//
// With the token drive E_t depends on the token only, so the kernel mixes and
// exponentiates once per table row the ids use (U <= V rows, against B*T steps), the
// lanes then only multiply, and the backward sums dE over the steps of each row before
// one exponential pullback per row (the pullback is linear in dE): the same gradients up
// to float rounding, at about a twentieth of the exponentials for S5 words (U = 120,
// B*T = 2,048).
#pragma once
#include <cstdint>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/var.hpp"
#include "groups/group.hpp"

namespace liegrad::kernels {

using groups::Group;

enum class ScanDrive { Relative, Token, Both };

// H0 (B,n,n) initial states; table (V,n,n) token elements; ids (B*T) row-major over
// (B,T) in [0, V); Gamma (m,m) or undefined. Returns the states after every step,
// (B*T,n,n) row-major over (B,T); the final state of lane b is row b*T + T-1.
template <class T>
ag::Var<T> osm_scan(const Group& g, const ag::Var<T>& H0, const ag::Var<T>& table, const std::vector<int32_t>& ids,
                    int64_t B, int64_t T_, const ag::Var<T>& Gamma, ScanDrive drive, int64_t renormalize_every);

// check_vjp of osm_scan in double: several groups, drives, with and without Gamma.
std::vector<ag::OpCheck> scan_op_checks();

}  // namespace liegrad::kernels
