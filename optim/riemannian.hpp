// Riemannian-step kernels for manifold-mode group parameters (docs/models.md §2), on batches
// of V group elements stored as (V,n,n) real matrices (complex groups in real form,
// where the conjugate transpose is the real transpose).
//
// Following Absil, Mahony & Sepulchre 2008 (Optimization Algorithms on Matrix
// Manifolds): for the bi-invariant metric the Riemannian gradient at W is
// W Pi_g(W^T grad) (ch. 3.6, projection onto the tangent space W g), which we keep in
// left-trivialised form as algebra coordinates; the exponential map W exp(xi) is a
// retraction (ch. 4.1). The polar factor W (W^T W)^{-1/2} is the nearest orthogonal
// matrix (Higham 2008, Functions of Matrices, ch. 8), computed by Newton-Schulz.
#pragma once
#include <cstdint>

#include "core/array.hpp"

namespace liegrad::groups {
class Group;
}

namespace liegrad::optim {

// The real dimension m of the group's algebra and the side n of its stored matrices.
int64_t algebra_dim(const groups::Group& G);
int64_t matrix_side(const groups::Group& G);

// W (V,n,n) in G, grad (V,n,n) the Euclidean gradient -> (V,m) coordinates of
// Pi_g(W^T grad).
template <class T>
Array<T> riemannian_grad_coords(const groups::Group& G, const Array<T>& W, const Array<T>& grad);

// W (V,n,n) <- W exp(hat(u)) for u (V,m): the exponential retraction (rplus).
template <class T>
void retract_exp(const groups::Group& G, Array<T>& W, const Array<T>& u);

// W (V,n,n) <- its polar factor, by Newton-Schulz iterations X <- X (3I - X^T X) / 2 in
// double while ||X^T X - I||_F falls (at most max_iters; matrices with a defect >= 1,
// outside the iteration's basin, are left alone). Products and transposes of real forms
// and of block-diagonal or diagonal matrices keep that structure, so this maps a
// perturbed element of O, SO, U, T or a product of them back onto the group (det > 0
// is kept, so SO stays SO). For SU(d) it does not correct the phase of det W, which
// keeps drifting at rounding level (measured 3.5e-6 after 10,000 float Adam steps on
// SU(4) with reorth_every = 100). Returns the largest defect ||W^T W - I||_F before.
template <class T>
double polar_reorthonormalise(Array<T>& W, int max_iters = 8);

}  // namespace liegrad::optim
