// Group: the one interface every Lie group of liegrad implements (docs/models.md §1), in
// manif's vocabulary (exp, log, compose, inverse, hat, vee), with sizes chosen at
// run time. A model names no concrete group: it holds a Group made by make_group.
//
// Every group is a closed subgroup G of U(d), stored as real n x n matrices:
//   - real groups (SO(d), O(d)): n = d, the matrix itself;
//   - complex groups (U(d), SU(d), T(d)): n = 2d, the real form
//         Z = X + iY  ->  R(Z) = [[X, -Y], [Y, X]],
//     an injective *-algebra map: R(ZW) = R(Z)R(W), R(Z*) = R(Z)^T, so compose and
//     inverse are the real matrix product and transpose, and one real exp kernel
//     serves every group. Re tr(Z* W) = 1/2 tr(R(Z)^T R(W)) and
//     ||R(Z)||_F^2 = 2 ||Z||_F^2: the real Frobenius norm squared is twice the complex one;
//   - products G1 x G2 x ...: block diagonal, each factor in its own storage; when any
//     factor is complex, the real factors are stored complexified (X -> [[X, 0], [0, X]],
//     the real form of X as a complex matrix), so one product has one storage kind.
//
// Inner product and norms follow the complex convention of the spec: inner(H, P) =
// Re tr(H* P) = real_scale() * tr(H^T P) on the stored matrices, real_scale() = 1 for
// real groups and 1/2 for complex ones. hat and vee are isometries between R^m and the
// algebra g in that convention: ||hat(u)||_c = ||u||, vee(hat(u)) = u.
//
// Linear maps on arbitrary stored matrices, adjoints w.r.t. the real trace inner
// product <M, N> = tr(M^T N) that autograd sees (s = real_scale()):
//   project(M) = Pi_g(M), the orthogonal projection onto g (self-adjoint, idempotent);
//   vee(M)     = s * hat^T(M) = vee(project(M)): coordinates of the projection;
//   so hat^T = vee / s and vee^T = s * hat (group_ops uses these as pullbacks).
//
// Shapes: X, A, H, P are (n,n) or (N,n,n) batches; coordinates u are (m) or (N,m).
// Basis orders are documented with each group (groups/*.cpp head comments).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "core/rng.hpp"

namespace liegrad::groups {

class Group {
 public:
  virtual ~Group() = default;

  // Canonical spelling accepted by make_group, e.g. "SO(16)", "SO(3)xU(2)".
  virtual std::string name() const = 0;
  // Side of the stored real matrices.
  virtual int64_t n() const = 0;
  // Real dimension m of the Lie algebra (number of coordinates).
  virtual int64_t dim() const = 0;
  // True when stored in complex real form (then n is even).
  virtual bool is_complex() const = 0;
  // Re tr(Z* W) = real_scale() * tr(R^T S) on the stored matrices: 1 (real) or 1/2 (complex).
  double real_scale() const { return is_complex() ? 0.5 : 1.0; }
  // d of the ambient U(d): n for real groups, n/2 for complex ones; inner(H, H) = d on G.
  int64_t complex_dim() const { return is_complex() ? n() / 2 : n(); }

  // ---- Batch operations (T = float or double; shapes as in the head comment) ----

  // Pi_g(X): orthogonal projection onto the algebra, same shape as X.
  template <class T>
  Array<T> project(const Array<T>& X) const;
  // u (m) or (N,m) -> algebra element(s) (n,n) or (N,n,n).
  template <class T>
  Array<T> hat(const Array<T>& u) const;
  // (n,n) or (N,n,n) -> coordinates (m) or (N,m) of the projection onto g.
  template <class T>
  Array<T> vee(const Array<T>& A) const;
  // exp: g -> G. Assumes A in g (uses its structure, e.g. the torus' closed form); for
  // arbitrary matrices and for gradients use groups::expm (groups/expm.hpp).
  template <class T>
  Array<T> exp(const Array<T>& A) const;
  // A logarithm in g with exp(log X) = X: the principal one (eigenvalue angles in
  // (-pi, pi]), except SU(d), which shifts angles by 2 pi where needed to stay traceless.
  // Computed in double via a complex Schur decomposition; throws ValueError at the cut
  // locus of a real group (an eigenvalue -1, e.g. every O(d) element with det -1).
  template <class T>
  Array<T> log(const Array<T>& X) const;
  // X Y per matrix; either side may be one (n,n) matrix broadcast over the other's batch.
  template <class T>
  Array<T> compose(const Array<T>& X, const Array<T>& Y) const;
  // X^-1 = X* (the transpose of the stored matrix).
  template <class T>
  Array<T> inverse(const Array<T>& X) const;
  // Re tr(H_b* P_b) per matrix: (N) for batches, a scalar for two (n,n) matrices.
  template <class T>
  Array<T> inner(const Array<T>& H, const Array<T>& P) const;
  // The identity element (n,n).
  template <class T>
  Array<T> identity() const;
  // One Haar-random element (n,n), or N of them (N,n,n). Drawn in double.
  template <class T>
  Array<T> sample(Rng& rng) const;
  template <class T>
  Array<T> sample(Rng& rng, int64_t N) const;
  // Distance from the group, the maximum over a batch: ||H* H - I||_F (complex norm)
  // + distance from the storage structure (real form, diagonal, block diagonal)
  // + |det H - 1| for SO and SU. Zero exactly on G.
  template <class T>
  double defect(const Array<T>& H) const;

  // ---- Per-matrix kernels ----
  // One n x n block at a time with row strides ld, so products can run their factors'
  // kernels in place on sub-blocks. Thread-safe (no shared mutable state); called inside
  // OpenMP loops by the batch operations and by groups/group_ops. Raw-pointer API for
  // implementers; prefer the batch operations above.

  // out = Pi_g(X); every entry of the n x n out block is written. X and out must not alias.
  virtual void project_kernel(const double* X, int64_t ldx, double* out, int64_t ldo) const = 0;
  virtual void project_kernel(const float* X, int64_t ldx, float* out, int64_t ldo) const = 0;
  // out = hat(u), u of length m; every entry of the block is written.
  virtual void hat_kernel(const double* u, double* out, int64_t ldo) const = 0;
  virtual void hat_kernel(const float* u, float* out, int64_t ldo) const = 0;
  // u = vee(X) = s * hat^T(X) for any X (not only algebra elements).
  virtual void vee_kernel(const double* X, int64_t ldx, double* u) const = 0;
  virtual void vee_kernel(const float* X, int64_t ldx, float* u) const = 0;
  // Q_b = exp(A_b) for a dense batch (N,n,n), A_b in g. Default: groups::expm_forward.
  virtual void exp_kernel(int64_t N, const double* A, double* Q) const;
  virtual void exp_kernel(int64_t N, const float* A, float* Q) const;
  // A = log(X) (see log above). Calls LAPACK: serial code only.
  virtual void log_kernel(const double* X, int64_t ldx, double* A, int64_t lda) const;
  // A Haar-random element written to the block. Calls LAPACK: serial code only.
  virtual void sample_kernel(Rng& rng, double* out, int64_t ldo) const = 0;
  // The defect of one matrix (see defect above).
  virtual double defect_kernel(const double* H, int64_t ldh) const;
  // Projects H in place onto the linear span of the group's storage pattern (complex
  // real form, complex diagonal, block diagonal): the nearest such matrix in the
  // Frobenius norm. Nothing to do for SO(d) and O(d). groups::renormalize applies it
  // before its polar step, which restores unitarity but not a broken pattern.
  virtual void restore_structure_kernel(double* H, int64_t ldh) const;
  virtual void restore_structure_kernel(float* H, int64_t ldh) const;

 protected:
  // Logarithm of a unitary (given as a real matrix or in real form) via the complex Schur
  // form X = Q T Q*, log X = Q diag(i theta) Q*, theta_j = arg T_jj in (-pi, pi]. With
  // traceless, angles are shifted by -+2 pi (largest / smallest first) until sum theta = 0.
  // The result is written unprojected; real groups throw ValueError if it is not real.
  void unitary_log(const double* X, int64_t ldx, double* A, int64_t lda, bool traceless) const;
  // ||H* H - I||_F in the complex norm (sqrt(real_scale()) times the real one).
  double unitarity_defect(const double* H, int64_t ldh) const;
};

// The largest stored matrix size n of a group (one element in double is then 32 MB):
// SO(d), O(d) need d <= 2048; U(d), SU(d), T(d) (stored in real form, n = 2d) d <= 1024;
// a product the sum of its factors' n. Larger groups are a ValueError saying so.
inline constexpr int64_t kMaxGroupN = 2048;

// Concrete groups (see groups/*.cpp for their conventions). 1 <= d, n <= kMaxGroupN.
std::unique_ptr<Group> make_special_orthogonal(int64_t d);  // SO(d); SO(1) is trivial (m = 0)
std::unique_ptr<Group> make_orthogonal(int64_t d);          // O(d); O(1) = {+1, -1} (m = 0)
std::unique_ptr<Group> make_unitary(int64_t d);             // U(d)
std::unique_ptr<Group> make_special_unitary(int64_t d);     // SU(d); SU(1) is trivial (m = 0)
std::unique_ptr<Group> make_torus(int64_t k);               // T(k), diagonal unitaries
// G1 x G2 x ... (block diagonal in factor order); nested products are flattened and a
// single factor is returned as it is.
std::unique_ptr<Group> make_product(std::vector<std::unique_ptr<Group>> factors);

// Parses "SO(16)", "O(8)", "U(8)", "SU(8)", "T(16)" and products of them joined by
// "x", "×" or "*" ("SO(8)xSO(8)", "SO(3) × U(2)"); names are case-insensitive and
// whitespace is ignored. Throws ValueError naming the bad spelling and the accepted forms.
std::unique_ptr<Group> make_group(const std::string& spec);

}  // namespace liegrad::groups
