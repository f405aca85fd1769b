// The strict upper triangle of a skew-symmetric matrix as a packed vector: the
// coordinate maps of so(d) (groups/orthogonal.cpp; docs/models.md §1), which run once per
// exponent in the fused kernels' forward and twice in their backward.
//
//   skew_from_upper:  out = c (U - U^T), U the strict upper triangle with u row-major:
//                     out[i,j] = c u[p], out[j,i] = -(c u[p]), out[i,i] = 0 for i < j;
//   upper_of_skew:    u[p] = c (X[i,j] - X[j,i]) for i < j, row-major;
// with p running over (i, j), i < j, row by row (p = 0 .. d(d-1)/2 - 1).
//
// The *_loops forms are the plain loops, the reference. For float with d <= 16 on
// AVX-512 the fast forms hold each row in one register: a masked expanding load
// places row i's run of u in lanes i+1 .. d-1, a register transpose (simd::transpose16)
// gives the columns, and the lower triangle is their negation; upper_of_skew
// compresses lanes i+1 .. d-1 of row i of X - X^T into u. For 16 < d <= 32 (the
// OSM-RNN's SO(23)) each row takes two registers and the transposes go by 16 x 16
// tiles; there the loops took 6-7% of a training step. Each element sees the same
// arithmetic as in the loops, so the results are bit-identical (tests/test_kernels.cpp).
// skew_part (below) serves the fused kernels' backward, where hat(vee(.)) of a
// cotangent with no mixing in between is Pi of it.
#pragma once
#include <cstdint>

namespace liegrad {

template <class T>
void skew_from_upper_loops(int64_t d, const T* u /* (d(d-1)/2) */, T c, T* out /* (d, ldo) */, int64_t ldo) {
  int64_t p = 0;
  for (int64_t i = 0; i < d; ++i) {
    out[i * ldo + i] = T(0);
    for (int64_t j = i + 1; j < d; ++j, ++p) {
      out[i * ldo + j] = c * u[p];
      out[j * ldo + i] = -(c * u[p]);
    }
  }
}

template <class T>
void upper_of_skew_loops(int64_t d, const T* X /* (d, ldx) */, int64_t ldx, T c, T* u /* (d(d-1)/2) */) {
  int64_t p = 0;
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = i + 1; j < d; ++j, ++p) u[p] = c * (X[i * ldx + j] - X[j * ldx + i]);
}

// out = c (X - X^T): with c = 1/2 so(d)'s orthogonal projection Pi, which equals
// hat(vee(X)) (group law "hat vee is Pi"), in one pass and without the packed vector.
template <class T>
void skew_part_loops(int64_t d, const T* X /* (d, ldx) */, int64_t ldx, T c, T* out /* (d, ldo) */, int64_t ldo) {
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) out[i * ldo + j] = c * (X[i * ldx + j] - X[j * ldx + i]);
}

// The fast forms: the loops but for float, d <= 32, on AVX-512 builds (skew_part on any
// SIMD build: a register transpose, then one vector pass).
void skew_from_upper(int64_t d, const float* u, float c, float* out, int64_t ldo);
void upper_of_skew(int64_t d, const float* X, int64_t ldx, float c, float* u);
void skew_part(int64_t d, const float* X, int64_t ldx, float c, float* out, int64_t ldo);
inline void skew_part(int64_t d, const double* X, int64_t ldx, double c, double* out, int64_t ldo) {
  skew_part_loops(d, X, ldx, c, out, ldo);
}
inline void skew_from_upper(int64_t d, const double* u, double c, double* out, int64_t ldo) {
  skew_from_upper_loops(d, u, c, out, ldo);
}
inline void upper_of_skew(int64_t d, const double* X, int64_t ldx, double c, double* u) {
  upper_of_skew_loops(d, X, ldx, c, u);
}

}  // namespace liegrad
