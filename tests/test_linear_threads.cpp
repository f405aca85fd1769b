// The fused dense layers (autograd/linear.hpp) at a transformer's size, where their float
// paths go parallel: the forward's 128-row blocks (fill, then product) and the backward's
// products with the bias column sums and the residual's gradient beside them in one
// region (core/linalg.hpp, gemm_group's side jobs). One thread and two give the same
// bits, and both agree with the unfused double reference.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/linear.hpp"
#include "autograd/tape.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "kernels/reference.hpp"
#include "tests/test_helpers.hpp"

using namespace liegrad;

namespace {

// R rows (not a multiple of the 128-row block), K = 64 in, N = 192 out: 2 R K N = 24.6
// MFLOP per product, above gemm_group's threshold, and 8 forward blocks.
constexpr int64_t kR = 1000, kK = 64, kN = 192;

struct Case {
  std::string name;
  // x (R,K), W (K,N), b (N), r (R,N) -> y; the residual form ignores r when alias_x is
  // set and adds x instead (then N = K).
  std::function<ag::Varf(const std::vector<ag::Varf>&)> f;
  std::function<ag::Vard(const std::vector<ag::Vard>&)> reference;
  int64_t N;
};

template <class T>
Array<T> converted(const Array<double>& a) {
  Array<T> out(a.shape());
  for (int64_t i = 0; i < a.size(); ++i) out[i] = static_cast<T>(static_cast<float>(a[i]));
  return out;
}

// y and every input's gradient for a seed gradient, with `threads` threads.
template <class T, class F>
std::vector<Array<T>> run(int threads, const std::vector<Array<double>>& inputs, const Array<double>& seed, F&& f) {
  set_num_threads(threads);
  auto& tape = ag::Tape<T>::current();
  tape.clear();
  std::vector<ag::Var<T>> vars;
  for (const Array<double>& a : inputs) vars.push_back(ag::Var<T>::parameter(converted<T>(a)));
  ag::Var<T> y = f(vars);
  tape.backward(y, converted<T>(seed));
  std::vector<Array<T>> out = {y.value()};
  for (const ag::Var<T>& v : vars) out.push_back(v.grad());
  tape.clear();
  return out;
}

}  // namespace

TEST_CASE("fused dense layers on two threads: one thread's bits in float, the double reference's values") {
  const std::vector<Case> cases = {
      {"linear", [](const std::vector<ag::Varf>& v) { return ag::linear(v[0], v[1], v[2]); },
       [](const std::vector<ag::Vard>& v) { return kernels::linear_reference(v[0], v[1], v[2]); }, kN},
      {"linear_gelu", [](const std::vector<ag::Varf>& v) { return ag::linear_gelu(v[0], v[1], v[2]); },
       [](const std::vector<ag::Vard>& v) { return kernels::linear_gelu_reference(v[0], v[1], v[2]); }, kN},
      {"linear_residual", [](const std::vector<ag::Varf>& v) { return ag::linear_residual(v[0], v[1], v[2], v[3]); },
       [](const std::vector<ag::Vard>& v) { return kernels::linear_residual_reference(v[0], v[1], v[2], v[3]); }, kN},
      // r = x: one gradient buffer for the residual and the product dx
      {"linear_residual, r = x", [](const std::vector<ag::Varf>& v) { return ag::linear_residual(v[0], v[1], v[2], v[0]); },
       [](const std::vector<ag::Vard>& v) { return kernels::linear_residual_reference(v[0], v[1], v[2], v[0]); }, kK},
  };
  const int threads_before = num_threads();
  Rng rng(35);
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::vector<Array<double>> in = {rng.normal_array<double>(Shape{kR, kK}), rng.normal_array<double>(Shape{kK, c.N}, 0.1),
                                     rng.normal_array<double>(Shape{c.N}, 0.1)};
    if (c.name == "linear_residual") in.push_back(rng.normal_array<double>(Shape{kR, c.N}));
    const Array<double> seed = rng.normal_array<double>(Shape{kR, c.N});
    const auto one = run<float>(1, in, seed, c.f);
    const auto two = run<float>(2, in, seed, c.f);
    const auto ref = run<double>(2, in, seed, c.reference);
    REQUIRE(one.size() == ref.size());
    for (size_t k = 0; k < one.size(); ++k) {
      CAPTURE(k);  // 0: y; then x, W, b (and r)
      CHECK(max_abs_diff(one[k], two[k]) == 0.0);
      double scale = 0, err = 0;
      for (int64_t i = 0; i < ref[k].size(); ++i) {
        scale = std::max(scale, std::abs(ref[k][i]));
        err = std::max(err, std::abs(static_cast<double>(two[k][i]) - ref[k][i]));
      }
      CHECK(scale > 0);
      // float against double: sums of up to R = 1000 terms of size ~1
      CHECK(err <= 1e-5 * scale * std::sqrt(static_cast<double>(kR)));
    }
  }
  set_num_threads(threads_before);
}
