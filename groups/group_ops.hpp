// Tape ops of the group layer: project, hat, vee, compose and inner_all, each a
// tape-free forward/backward kernel pair plus a short wrapper (OpenMP over the batch).
//
// Adjoints are taken w.r.t. the real trace inner product <M, N> = tr(M^T N) on the
// stored matrices and the dot product on coordinates, which is what autograd sees.
// With s = group.real_scale() (1 real, 1/2 complex; groups/group.hpp):
//   project:  Pi is an orthogonal projection, so self-adjoint:   dX += Pi(G)
//   hat:      hat^T = vee / s  (vee = s * hat^T):                 du += vee(G) / s
//   vee:      vee^T = s * hat:                                    dA += s * hat(g)
// (vee(hat(u)) = u, but hat^T hat = id / s: for complex storage ||hat(u)||_F^2 = 2 ||u||^2.)
//   compose:  op(H) op(P), op = identity or conjugate transpose (the transpose of the
//             stored matrix): the matmul pullbacks (autograd/matmul.hpp).
//   inner_all: S = s * vec(H) vec(P)^T, S_iv = Re tr(H_i* P_v), one GEMM;
//             dH += s * G vec(P), dP += s * G^T vec(H).
//
// The Group passed to a wrapper must outlive the tape's backward pass (the recorded
// step keeps a reference to it).
#pragma once
#include <cstdint>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/var.hpp"
#include "groups/group.hpp"

namespace liegrad::groups {

// ---- Tape ops ----

// X (n,n) or (N,n,n) -> Pi_g(X), same shape.
template <class T>
ag::Var<T> project(const Group& g, const ag::Var<T>& X);
// u (m) or (N,m) -> hat(u) (n,n) or (N,n,n).
template <class T>
ag::Var<T> hat(const Group& g, const ag::Var<T>& u);
// A (n,n) or (N,n,n) -> vee(A) (m) or (N,m), the coordinates of Pi_g(A).
template <class T>
ag::Var<T> vee(const Group& g, const ag::Var<T>& A);
// op(H) op(P) with op(X) = X* when the flag is set: H (N,n,n) with P (N,n,n) or a
// broadcast P (n,n), or H (n,n) with P (n,n). E.g. R = H* M is compose(g, H, M, true).
template <class T>
ag::Var<T> compose(const Group& g, const ag::Var<T>& H, const ag::Var<T>& P, bool conj_h = false,
                   bool conj_p = false);
// H (N,n,n), P (V,n,n) -> S (N,V) with S_iv = Re tr(H_i* P_v), one GEMM of the flattened matrices.
template <class T>
ag::Var<T> inner_all(const Group& g, const ag::Var<T>& H, const ag::Var<T>& P);

// ---- Kernels (dense batches; backward kernels accumulate with +=) ----

// out (N,n,n) = Pi(X); dX (N,n,n) += Pi(dout).
template <class T>
void project_forward(const Group& g, int64_t N, const T* X, T* out);
template <class T>
void project_backward(const Group& g, int64_t N, const T* dout, T* dX);
// out (N,n,n) = hat(u (N,m)); du (N,m) += vee(dout) / s.
template <class T>
void hat_forward(const Group& g, int64_t N, const T* u, T* out);
template <class T>
void hat_backward(const Group& g, int64_t N, const T* dout, T* du);
// u (N,m) = vee(A (N,n,n)); dA (N,n,n) += s * hat(du).
template <class T>
void vee_forward(const Group& g, int64_t N, const T* A, T* u);
template <class T>
void vee_backward(const Group& g, int64_t N, const T* du, T* dA);
// out (N,V) = s * H (N,n*n) P (V,n*n)^T; dH += s * dout P, dP += s * dout^T H (null skips).
// Calls BLAS: serial code only.
template <class T>
void inner_all_forward(const Group& g, int64_t N, int64_t V, const T* H, const T* P, T* out);
template <class T>
void inner_all_backward(const Group& g, int64_t N, int64_t V, const T* dout, const T* H, const T* P, T* dH,
                        T* dP);

// Gradient checks of every op above (and an rplus chain through groups::expm) for every
// group kind at small batched sizes: SO, O, U, SU, T, SOxSO and mixed products.
std::vector<ag::OpCheck> group_op_checks();

}  // namespace liegrad::groups
