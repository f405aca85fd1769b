// The matrix exponential of ONE n x n matrix and its pullback, for fused kernels that
// run their own OpenMP loop over matrices (kernels/relative_update, kernels/osm_scan). The
// same code path as groups::expm (groups/expm.hpp): scaling and squaring with
// polynomial approximants (BBC's Taylor schemes and Sastre et al.'s 15+), pullback by
// forward-mode differentiation of the computed approximant; serial, no BLAS, no
// allocation (the caller owns scratch).
#pragma once
#include <cstdint>

#include "core/buffer.hpp"
#include "core/profile.hpp"

namespace liegrad::groups {

// Inputs (A, G, E) and outputs (Q, M, dA) must not overlap: with no squarings the
// programs read A and E where they are, not from copies.

// Degree index into {T_1, T_2, T_4, T_8, 15+, T_18} and squarings s, chosen from ||A||_1, or for a
// skew-symmetric A from a sharper bound on ||A||_2 computed from A^2 (groups/expm.cpp).
struct ExpmPlan {
  int degree = 0;
  int squarings = 0;
  // Set by expm_plan when it computed A^2 for the bound and left it in the scratch it
  // was given, for the expm_one_forward call that follows with the same scratch.
  bool known_square = false;
  int products() const;  // matrix products of the forward
};

// Scratch elements the calls below need (forward, including the plan's; pullback).
int64_t expm_forward_scratch(int64_t n);
int64_t expm_pullback_scratch(int64_t n);
// Elements of the optional cache of forward products: (products - 1) n^2.
int64_t expm_cache_size(const ExpmPlan& plan, int64_t n);

// What a caller knows of its exponent. Skew: A = hat(u) of a group, skew-symmetric bit
// for bit (group law "hat lands in the skew matrices"), so the plan takes the sharper
// skew bound without checking; Unknown: the plan checks.
enum class ExponentKind { Unknown, Skew };

// The plan of exp(A), A (n,n); scratch as for expm_one_forward.
template <class T>
ExpmPlan expm_plan(int64_t n, const T* A, T* scratch, ExponentKind kind = ExponentKind::Unknown);

// Q = exp(A) by `plan` (from expm_plan with this scratch, untouched since); records the
// forward products in `cache` when it is not null.
template <class T>
void expm_one_forward(int64_t n, const T* A, const ExpmPlan& plan, T* Q, T* scratch, T* cache);

// dA += L(A^T, G) (the pullback of exp at A applied to G); replays `cache` (as recorded
// by expm_one_forward with the same plan) when it is not null, else recomputes.
template <class T>
void expm_one_pullback(int64_t n, const T* A, const ExpmPlan& plan, const T* G, T* dA, T* scratch, const T* cache);

// M = L(A, E) (written, not added): the derivative of the computed exp at A in the
// direction E, by the same tangent program as expm_one_pullback, without its two
// transposes. The pullback is dA = L(A^T, G) = L(A, G^T)^T, so a caller that can form
// G^T directly and needs only the skew part of dA (vee(dA) = -vee(M) for E = G^T, as
// in the fused kernels) saves both. Scratch and cache as for expm_one_pullback.
template <class T>
void expm_one_tangent(int64_t n, const T* A, const ExpmPlan& plan, const T* E, T* M, T* scratch, const T* cache);

// expm_one_tangent recomputing the products (no cache), and Q = exp(A) (n,n) beside M:
// the values the tangent program forms anyway, run through the last product (one more
// product than expm_one_tangent), bit for bit the Q of expm_one_forward with this plan.
// The OSM-RNN scan's backward takes E = exp(A) from here instead of keeping it from the
// forward.
template <class T>
void expm_one_tangent_with_value(int64_t n, const T* A, const ExpmPlan& plan, const T* E, T* M, T* Q, T* scratch);

// Q (n,n) = exp(A (n,n)), planned here, keeping no products; returns the plan, which
// the backward hands to expm_one_tangent (null cache) or expm_one_tangent_with_value, so
// that the tangent program recomputes the products (and Q) from A. The fused update and
// scan kernels call this per token, with kind Skew (their A is hat(u)). Writing the
// products (2-5 KB a token) in the forward and reading them back in the backward cost
// the models more than recomputing them from an A already in cache; the scan keeps no
// Q either, the relative update does (at d = 16 the extra product costs what the 1 KB
// saves; docs/performance-log.md, "2026-12-06, late").
template <class T>
ExpmPlan expm_one_forward_planned(int64_t n, const T* A, T* Q, T* scratch, ExponentKind kind) {
  prof::Sub exp_time(prof::Family::ExpForward);
  const ExpmPlan plan = expm_plan(n, A, scratch, kind);
  prof::count(prof::Counter::Exponentials, 1);
  prof::count(prof::Counter::ExpForwardProducts, plan.products());
  expm_one_forward(n, A, plan, Q, scratch, static_cast<T*>(nullptr));
  return plan;
}

}  // namespace liegrad::groups
