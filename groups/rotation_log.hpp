// A real logarithm of every rotation, the cut locus included: for Q in SO(n), a skew
// A with exp(A) = Q. Group::log returns the principal logarithm and refuses a matrix
// with an eigenvalue -1, where the principal one is not real (a rotation by pi has two
// logarithms, +pi and -pi, and neither is preferred); this one picks one there, which is
// what a caller needs that only wants exp(A) = Q (the words task's warm start).
//
// From the real Schur form Q = Z T Z^T (LAPACK dgees; T is block diagonal for the
// normal matrix Q up to rounding): a 2 x 2 block [[a, b], [c, a]] (a rotation by theta,
// c = sin theta ~ -b) has the logarithm [[0, -theta], [theta, 0]], theta =
// atan2((c - b) / 2, a); a 1 x 1 block +1 has 0; the 1 x 1 blocks -1, even in number
// when det Q = 1, are taken in pairs (i, j) as rotations by pi in their plane. Then
// A = Z L Z^T, made exactly skew. Culver (1966) on real logarithms; Higham, "Functions
// of Matrices" (2008), section 11.
#pragma once
#include <cstdint>

namespace liegrad::groups {

// Q (n x n, row-major) in SO(n) -> A (n x n) skew with exp(A) = Q. ValueError when Q is
// not orthogonal within 1e-6 or has an odd number of eigenvalues -1 (det Q = -1).
// Calls LAPACK: serial code only.
void rotation_log(int64_t n, const double* Q, double* A);

}  // namespace liegrad::groups
