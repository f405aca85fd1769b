// Internal helper for the groups' .cpp files: TypedGroup<D> implements Group's double
// and float kernel overloads by forwarding to the derived class's templates
//     template <class T> void project_t(const T* X, int64_t ldx, T* out, int64_t ldo) const;
//     template <class T> void hat_t(const T* u, T* out, int64_t ldo) const;
//     template <class T> void vee_t(const T* X, int64_t ldx, T* u) const;
// so each group writes its kernels once (virtual functions cannot be templates). This
// dispatches on the scalar only; sizes stay run-time values.
#pragma once
#include <complex>
#include <string>

#include "groups/group.hpp"

namespace liegrad::groups {

template <class D>
class TypedGroup : public Group {
 public:
  void project_kernel(const double* X, int64_t ldx, double* out, int64_t ldo) const override {
    self().project_t(X, ldx, out, ldo);
  }
  void project_kernel(const float* X, int64_t ldx, float* out, int64_t ldo) const override {
    self().project_t(X, ldx, out, ldo);
  }
  void hat_kernel(const double* u, double* out, int64_t ldo) const override { self().hat_t(u, out, ldo); }
  void hat_kernel(const float* u, float* out, int64_t ldo) const override { self().hat_t(u, out, ldo); }
  void vee_kernel(const double* X, int64_t ldx, double* u) const override { self().vee_t(X, ldx, u); }
  void vee_kernel(const float* X, int64_t ldx, float* u) const override { self().vee_t(X, ldx, u); }

 private:
  const D& self() const { return static_cast<const D&>(*this); }
};

// Throws ValueError "<what>: d must be >= 1, got <d>".
void require_group_size(const char* what, int64_t d, int64_t n_per_d);

// A Haar-random element of U(d) as a dense complex d x d matrix (Mezzadri 2007): the QR
// factor of a complex Gaussian with its columns multiplied by the phases of diag(R).
// Defined in groups/unitary.cpp.
void haar_unitary(int64_t d, Rng& rng, std::complex<double>* Q);

}  // namespace liegrad::groups
