// Solutions to chapter 5's exercises 1 and 3 (docs/tutorial/05-optimise-on-group.md), on five
// pairs (v_i, w_i = R_true v_i) and f(R) = weight * sum_i ||R v_i - w_i||^2, R a GroupParam in
// manifold mode:
//
//   1. Near the fit f ~ xi^T C xi / 2 in the step coordinates xi, with the eigenvalues of
//      C = sum_i (||v_i||^2 I - v_i v_i^T); a gradient step multiplies xi by I - lr C, so SGD
//      converges for lr < 2 / lambda_max(C) and not above. lambda_max by power iteration
//      (C is symmetric positive semidefinite); runs at 0.9 and 1.1 times the limit.
//   3. Adam's step d = m1_hat / (sqrt(m2_hat) + eps) does not change when every gradient is
//      multiplied by 5 (up to eps), so the summed and the averaged loss take the same steps.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "autograd/ops.hpp"
#include "core/rng.hpp"
#include "groups/group.hpp"
#include "groups/group_param.hpp"
#include "optim/optimizer.hpp"
#include "../tutorial.hpp"

using namespace liegrad;

int main() {
  tutorial::Checks check;
  std::shared_ptr<const groups::Group> g = groups::make_group("SO(3)");
  Rng rng(11);
  const Array<double> R_true = g->sample<double>(rng), V = rng.normal_array<double>(Shape{3, 5});
  const ag::Vard Vv = ag::Vard::constant(V), Wv = ag::Vard::constant(tutorial::mm(R_true, V).reshaped(Shape{1, 3, 5}));

  // f after `steps` steps of SGD (adam = false) or Adam at step size lr; R_end: the final R.
  auto fit = [&](bool adam, double lr, double weight, int steps, Array<double>* R_end) {
    std::vector<ag::Parameter<double>> params;
    Rng init(0);
    groups::GroupParam<double> R("R", g, 1, groups::GroupParamMode::Manifold, 0.0, init, params);
    std::unique_ptr<optim::Optimizer<double>> opt;
    if (adam)
      opt = std::make_unique<optim::Adam<double>>(params, optim::AdamOptions{});
    else
      opt = std::make_unique<optim::SGD<double>>(params);
    double f = 0;
    for (int step = 0; step <= steps; ++step) {
      const ag::Vard fv = ag::scale(ag::sum(ag::square(ag::sub(ag::matmul(R.elements(), Vv), Wv))), weight);
      f = fv.value().item() / weight;  // the summed loss, to compare runs
      if (step == steps) break;
      opt->zero_grad();
      ag::backward(fv);
      opt->step(lr);
    }
    if (R_end) *R_end = R.elements().value().reshaped(Shape{3, 3});
    return f;
  };

  // 1. C = (sum_i ||v_i||^2) I - V V^T and its largest eigenvalue.
  Array<double> C = tutorial::axpy(Array<double>(Shape{3, 3}), -1.0, tutorial::mm(V, V, false, true));
  for (int64_t i = 0; i < 3; ++i) C.at(i, i) += tutorial::dot(V, V);
  Array<double> x(Shape{3, 1}, {1.0, 0.7, 0.3});
  double lambda = 0;
  for (int k = 0; k < 500; ++k) {
    const Array<double> y = tutorial::mm(C, x);
    lambda = std::sqrt(tutorial::dot(y, y));
    x = tutorial::axpy(Array<double>(Shape{3, 1}), 1 / lambda, y);
  }
  const double limit = 2 / lambda, below = fit(false, 0.9 * limit, 1.0, 400, nullptr);
  const double above = fit(false, 1.1 * limit, 1.0, 400, nullptr);
  std::printf("1. sum_i ||v_i||^2 = %.3f, lambda_max(C) = %.3f: SGD limit 2/lambda_max = %.4f (safe bound %.4f)\n",
              tutorial::dot(V, V), lambda, limit, 2 / tutorial::dot(V, V));
  std::printf("   f after 400 steps: %.1e at 0.9 x the limit, %.1e at 1.1 x the limit\n", below, above);
  check("sgd_converges_below_the_limit", "f", below, 1e-16);
  check("sgd_does_not_converge_above_it", "inverse_f", 1e-6 / above, 1);

  // 3. Adam on the summed and on the averaged loss, step 0.05.
  Array<double> R_sum, R_mean;
  const double f_sum = fit(true, 0.05, 1.0, 200, &R_sum), f_mean = fit(true, 0.05, 0.2, 200, &R_mean);
  std::printf("3. Adam, 200 steps of 0.05: f %.1e summed, %.1e averaged; ||R_sum - R_mean||_F = %.1e\n", f_sum, f_mean,
              tutorial::dist(R_sum, R_mean));
  check("adam_summed_equals_averaged", "dist", tutorial::dist(R_sum, R_mean), 1e-6);
  return check.status();
}
