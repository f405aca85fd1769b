// check_vjp: verifies an op's reverse-mode derivative against central finite
// differences, in double precision. For a function y = f(x_1..x_k) it draws a
// random output cotangent ybar and, for each differentiable input i, a random
// direction v_i, and compares
//     numeric  = < ybar, (f(.., x_i + eps v_i, ..) - f(.., x_i - eps v_i, ..)) / (2 eps) >
//     analytic = < grad_i(ybar), v_i >           (one backward pass per trial)
// The relative error is |numeric - analytic| / max(|numeric|, |analytic|, 1e-10).
//
// OpCheck bundles a named check with the shapes it runs at, so the `liegrad
// gradcheck` command and the test suite run the very same list of checks.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "autograd/var.hpp"
#include "core/rng.hpp"

namespace liegrad::ag {

struct VjpResult {
  std::string name;
  std::string shapes;     // input shapes, e.g. "(2,3,4) x (2,4,5)"
  double max_abs_error = 0;
  double max_rel_error = 0;
  bool passed = false;
};

using VjpFn = std::function<Vard(const std::vector<Vard>&)>;

struct VjpOptions {
  double eps = 1e-6;
  int trials = 3;
  double rel_tol = 1e-6;
  // Inputs not differentiated (integer-like or constant inputs); empty = all.
  std::vector<bool> differentiable;
};

VjpResult check_vjp(const std::string& name, const VjpFn& f, const std::vector<Array<double>>& inputs, Rng& rng,
                    const VjpOptions& opt = {});

struct OpCheck {
  std::string name;
  std::function<VjpResult(Rng&)> run;
};

// check_equivalent: a fused op against its unfused reference (kernels/reference.hpp),
// in double. Both run on the same inputs; the forward error is
// max|y_fused - y_ref| / max(1, max|y_ref|), and one backward pass of each with the
// same random cotangent gives the backward error, the same norm-wise measure over
// every differentiable input's gradient. Passes when both are <= rel_tol.
struct EquivalenceResult {
  std::string name;
  std::string shapes;
  double forward_error = 0;
  double backward_error = 0;
  bool passed = false;
};

EquivalenceResult check_equivalent(const std::string& name, const VjpFn& fused, const VjpFn& reference,
                                   const std::vector<Array<double>>& inputs, Rng& rng, double rel_tol = 1e-10,
                                   const std::vector<bool>& differentiable = {});

struct EquivalenceCheck {
  std::string name;
  std::function<EquivalenceResult(Rng&)> run;
};

// Every op of the autograd layer, at non-trivial shapes including batched ones.
std::vector<OpCheck> autograd_op_checks();

// Derivative of a smooth scalar function at 0 by Ridders' method (Ridders 1982;
// Press et al., Numerical Recipes §5.7): central differences at steps h0, h0/1.4,
// ... extrapolated to h -> 0 in a Neville tableau, returning the estimate with the
// smallest internal error estimate (written to *error when given). It adapts to
// functions whose derivative is tiny or whose curvature is large, where a fixed
// step loses digits to rounding or truncation.
double ridders_derivative(const std::function<double(double)>& f, double h0, double* error = nullptr);

std::string shapes_string(const std::vector<Array<double>>& inputs);

}  // namespace liegrad::ag
