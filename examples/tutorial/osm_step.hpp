// The OSM update written with plain tape ops (tutorial chapters 6 and 7; docs/models.md §4, §5):
//
//     H' = H exp(hat(Gamma vee(H* M)))      per matrix of a batch,
//
// M = M_x (the token element) in the OSM-RNN and in OSMFormer's grounding, M = A_i (the
// attention average) in OSMFormer's attention update. The fused op the models run is
// kernels::relative_update (kernels/relative_update.hpp).
#pragma once
#include "autograd/ops.hpp"
#include "groups/expm.hpp"
#include "groups/group.hpp"
#include "groups/group_ops.hpp"

namespace tutorial {

// H, M (N,n,n); Gamma (m,m) -> H exp(hat(Gamma vee(H^T M))) (N,n,n).
inline liegrad::ag::Vard osm_step(const liegrad::groups::Group& g, const liegrad::ag::Vard& H,
                                  const liegrad::ag::Vard& M, const liegrad::ag::Vard& Gamma) {
  using namespace liegrad;
  const ag::Vard R = ag::matmul(H, M, /*trans_a=*/true);  // H* M: the conjugate transpose is the transpose in real form
  const ag::Vard r = groups::vee(g, R);                   // (N,m) coordinates of Pi_g(R)
  const ag::Vard u = ag::matmul(r, Gamma, false, true);   // each row r_i -> Gamma r_i
  const ag::Vard Q = groups::expm(groups::hat(g, u));     // (N,n,n), in G
  return ag::matmul(H, Q);
}

}  // namespace tutorial
