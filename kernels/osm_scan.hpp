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

// One step of one lane off the tape, for generation (the models' decode steps): with
// M (n,n) the token's element and H (n,n) the state, Hn (n,n) = H exp(hat(Gamma r)) by
// the same kernels in the same order as osm_scan's forward, so a cached step equals the
// scan's row for that step bit for bit (sampled text must not drift from a forward over
// the whole text). gammaT (m,m) is Gamma transposed (gamma_transposed in
// kernels/mixing.hpp), formed once per stream by the caller, or null for no mixing; no
// tape, no saved state, no per-call transpose of Gamma, as a one-lane osm_scan would do.
// No renormalisation (the caller renormalises where the scan would). Hn must not alias H.
template <class T>
void osm_step_one(const Group& g, const T* H, const T* M, const T* gammaT, ScanDrive drive, T* Hn);

// check_vjp of osm_scan in double: several groups, drives, with and without Gamma.
std::vector<ag::OpCheck> scan_op_checks();

}  // namespace liegrad::kernels
