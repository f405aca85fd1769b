// Central-difference check of vector-Jacobian products (see gradcheck.hpp).
#include "autograd/gradcheck.hpp"

#include <algorithm>
#include <cmath>

#include "autograd/tape.hpp"

namespace liegrad::ag {

namespace {
double dot(const Array<double>& a, const Array<double>& b) {
  double s = 0;
  for (int64_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
}  // namespace

double ridders_derivative(const std::function<double(double)>& f, double h0, double* error) {
  constexpr int kMax = 12;
  constexpr double kShrink = 1.4, kShrink2 = kShrink * kShrink, kSafe = 2.0;
  double a[kMax][kMax];
  double h = h0, best = 0, err = 1e300;
  a[0][0] = (f(h) - f(-h)) / (2 * h);
  for (int i = 1; i < kMax; ++i) {
    h /= kShrink;
    a[0][i] = (f(h) - f(-h)) / (2 * h);
    double fac = kShrink2;
    for (int j = 1; j <= i; ++j) {  // Richardson extrapolation of increasing order
      a[j][i] = (a[j - 1][i] * fac - a[j - 1][i - 1]) / (fac - 1);
      fac *= kShrink2;
      const double e = std::max(std::abs(a[j][i] - a[j - 1][i]), std::abs(a[j][i] - a[j - 1][i - 1]));
      if (e <= err) {
        err = e;
        best = a[j][i];
      }
    }
    // Stop once higher orders get worse by a clear margin.
    if (std::abs(a[i][i] - a[i - 1][i - 1]) >= kSafe * err) break;
  }
  if (error) *error = err;
  return best;
}

std::string shapes_string(const std::vector<Array<double>>& inputs) {
  std::string s;
  for (size_t i = 0; i < inputs.size(); ++i) s += (i ? " x " : "") + inputs[i].shape().str();
  return s;
}

VjpResult check_vjp(const std::string& name, const VjpFn& f, const std::vector<Array<double>>& inputs, Rng& rng,
                    const VjpOptions& opt) {
  VjpResult r;
  r.name = name;
  r.shapes = shapes_string(inputs);
  const size_t k = inputs.size();
  auto differentiable = [&](size_t i) { return opt.differentiable.empty() || opt.differentiable[i]; };
  auto eval = [&](const std::vector<Array<double>>& xs) {
    NoGrad ng;
    std::vector<Vard> vs;
    for (const auto& x : xs) vs.emplace_back(x, false);
    return f(vs).value();
  };
  for (int t = 0; t < opt.trials; ++t) {
    // Analytic: one backward pass with a random cotangent.
    std::vector<Vard> vars;
    for (size_t i = 0; i < k; ++i) vars.emplace_back(inputs[i], differentiable(i));
    Tape<double>::current().clear();
    Vard y = f(vars);
    const Array<double> ybar = rng.normal_array<double>(y.shape());
    Tape<double>::current().backward(y, ybar);
    for (size_t i = 0; i < k; ++i) {
      if (!differentiable(i)) continue;
      const Array<double> v = rng.normal_array<double>(inputs[i].shape());
      const double analytic = vars[i].has_grad() ? dot(vars[i].grad(), v) : 0.0;
      std::vector<Array<double>> plus = inputs, minus = inputs;
      for (int64_t j = 0; j < v.size(); ++j) {
        plus[i][j] += opt.eps * v[j];
        minus[i][j] -= opt.eps * v[j];
      }
      const Array<double> fp = eval(plus), fm = eval(minus);
      double numeric = 0;
      for (int64_t j = 0; j < fp.size(); ++j) numeric += ybar[j] * (fp[j] - fm[j]);
      numeric /= 2 * opt.eps;
      const double abs_err = std::abs(numeric - analytic);
      const double rel_err = abs_err / std::max({std::abs(numeric), std::abs(analytic), 1e-10});
      if (!std::isfinite(analytic) || !std::isfinite(numeric)) {
        r.max_abs_error = r.max_rel_error = INFINITY;
      } else {
        r.max_abs_error = std::max(r.max_abs_error, abs_err);
        r.max_rel_error = std::max(r.max_rel_error, rel_err);
      }
    }
  }
  r.passed = r.max_rel_error <= opt.rel_tol;
  return r;
}

namespace {

// max|a - b| / max(1, max|b|); infinite when the shapes differ or a value is not finite.
double normwise_error(const Array<double>& a, const Array<double>& b) {
  if (a.shape() != b.shape()) return INFINITY;
  double diff = 0, scale = 1;
  for (int64_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return INFINITY;
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return diff / scale;
}

}  // namespace

EquivalenceResult check_equivalent(const std::string& name, const VjpFn& fused, const VjpFn& reference,
                                   const std::vector<Array<double>>& inputs, Rng& rng, double rel_tol,
                                   const std::vector<bool>& differentiable) {
  EquivalenceResult r;
  r.name = name;
  r.shapes = shapes_string(inputs);
  auto grad_of = [&](size_t i) { return differentiable.empty() || differentiable[i]; };
  // One forward and one backward pass of f with cotangent ybar (drawn on the first call).
  Array<double> ybar;
  auto run = [&](const VjpFn& f, std::vector<Array<double>>& grads) {
    std::vector<Vard> vars;
    for (size_t i = 0; i < inputs.size(); ++i) vars.emplace_back(inputs[i], grad_of(i));
    Tape<double>::current().clear();
    Vard y = f(vars);
    if (ybar.empty()) ybar = rng.normal_array<double>(y.shape());
    if (y.shape() == ybar.shape()) Tape<double>::current().backward(y, ybar);
    for (size_t i = 0; i < inputs.size(); ++i)
      grads.push_back(grad_of(i) && vars[i].has_grad() ? vars[i].grad() : Array<double>(inputs[i].shape(), 0.0));
    Tape<double>::current().clear();
    return y.value();
  };
  std::vector<Array<double>> grads_fused, grads_ref;
  const Array<double> y_fused = run(fused, grads_fused);
  const Array<double> y_ref = run(reference, grads_ref);
  r.forward_error = normwise_error(y_fused, y_ref);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (grad_of(i)) r.backward_error = std::max(r.backward_error, normwise_error(grads_fused[i], grads_ref[i]));
  r.passed = r.forward_error <= rel_tol && r.backward_error <= rel_tol;
  return r;
}

}  // namespace liegrad::ag
