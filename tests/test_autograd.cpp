// Tests of autograd/: every op's derivative (the registry shared with `liegrad
// gradcheck`), the gradient checker's ability to catch a wrong derivative, fan-out
// accumulation, no-grad mode, a deep chain, shape errors, and a small network that
// overfits one batch.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "tests/test_helpers.hpp"

using namespace liegrad;
using namespace liegrad::ag;

TEST_CASE("every autograd op passes check_vjp in double") {
  Rng rng(2024);
  const auto checks = autograd_op_checks();
  CHECK(checks.size() >= 45);
  for (const auto& c : checks) test::require_vjp(c.run(rng));
}

TEST_CASE("check_vjp catches a wrong derivative") {
  // y = x^2 with a backward that forgets the factor 2.
  VjpFn wrong = [](const std::vector<Vard>& x) {
    Array<double> y = x[0].value();
    for (int64_t i = 0; i < y.size(); ++i) y[i] *= y[i];
    Vard in = x[0];
    return record_op<double>(std::move(y), {&in}, [in](const Array<double>& g) {
      Array<double>& dx = in.node()->grad_ref();
      for (int64_t i = 0; i < g.size(); ++i) dx[i] += g[i] * in.value()[i];
    });
  };
  Rng rng(1);
  auto r = check_vjp("wrong square", wrong, {rng.normal_array<double>(Shape{3, 4})}, rng);
  CHECK_FALSE(r.passed);
  CHECK(r.max_rel_error > 0.1);
}

TEST_CASE("gradients accumulate on fan-out") {
  Vard x = Vard::parameter(Array<double>(Shape{3}, std::vector<double>{1, 2, 3}));
  // L = sum(x*x + 3x + x) -> dL/dx = 2x + 4
  Vard y = add(add(mul(x, x), scale(x, 3.0)), x);
  backward(sum(y));
  CHECK(x.grad()[0] == doctest::Approx(6));
  CHECK(x.grad()[2] == doctest::Approx(10));
  // A second backward accumulates into the existing gradient (like PyTorch).
  backward(sum(x));
  CHECK(x.grad()[0] == doctest::Approx(7));
  x.zero_grad();
  CHECK_FALSE(x.has_grad());
}

TEST_CASE("no-grad mode records nothing") {
  Varf w = Varf::parameter(Array<float>(Shape{2, 2}, 1.0f));
  auto& tape = Tape<float>::current();
  tape.clear();
  {
    NoGrad ng;
    Varf y = matmul(w, w);
    CHECK_FALSE(y.requires_grad());
    CHECK(tape.size() == 0);
    CHECK(y.value()[0] == 2.0f);
  }
  CHECK(grad_enabled());
  Varf z = matmul(w, w);
  CHECK(z.requires_grad());
  CHECK(tape.size() == 1);
  tape.clear();
  // Constants alone never record.
  Varf c(Array<float>(Shape{2}, 1.0f));
  Varf d = add(c, c);
  CHECK_FALSE(d.requires_grad());
  CHECK(tape.size() == 0);
}

TEST_CASE("a 10,000-node chain runs backward without recursion") {
  Vard x = Vard::parameter(Array<double>::scalar(0.5));
  Vard y = x;
  const int n = 10000;
  for (int i = 0; i < n; ++i) y = add_const(scale(y, 1.0001), 1e-4);  // 20,000 nodes
  CHECK(Tape<double>::current().size() == 2 * n);
  backward(y);
  CHECK(x.grad()[0] == doctest::Approx(std::pow(1.0001, n)).epsilon(1e-10));
  CHECK(Tape<double>::current().size() == 0);
}

TEST_CASE("backward needs a scalar or a seed, and a differentiable output") {
  Vard x = Vard::parameter(Array<double>(Shape{2}, 1.0));
  Vard y = scale(x, 2.0);
  CHECK_THROWS_AS(backward(y), ShapeError);
  Tape<double>::current().clear();
  Vard c(Array<double>::scalar(1.0));
  CHECK_THROWS_AS(backward(c), ValueError);
}

TEST_CASE("ops reject bad shapes with a typed, readable error") {
  Varf a(Array<float>(Shape{3, 4})), b(Array<float>(Shape{5, 2}));
  try {
    matmul(a, b);
    FAIL("no exception");
  } catch (const ShapeError& e) {
    const std::string m = e.what();
    CHECK(m.find("matmul") != std::string::npos);
    CHECK(m.find("(3,4)") != std::string::npos);
    CHECK(m.find("(5,2)") != std::string::npos);
  }
  CHECK_THROWS_AS(add(a, b), ShapeError);
  CHECK_THROWS_AS(slice(a, 1, 2, 9), ShapeError);
  CHECK_THROWS_AS(concat(std::vector<Varf>{a, b}, 0), ShapeError);
  CHECK_THROWS_AS(cross_entropy(a, {0, 1}), ShapeError);
  CHECK_THROWS_AS(cross_entropy(a, {0, 1, 4}), ValueError);
  CHECK_THROWS_AS(embedding(a, {0, 3}, {2}), ValueError);
}

TEST_CASE("float layer_norm (SIMD rows) agrees with the double op, forward and backward, for every tail") {
  // autograd/layer_norm_rows.hpp serves float rows; the double op runs the scalar loops.
  // Rows of D = 1 to 70 (whole vectors, masked tails, both), x with an offset so the
  // mean matters; y, dx, dgamma and dbeta against double. No D = 2 or 3: there two
  // nearly equal entries make the row ill-conditioned (the float mean's rounding,
  // amplified by 1/std; 4e-4 at D = 2 in this draw), which says nothing of the kernel.
  Rng rng(77);
  double worst = 0;
  for (int64_t D : {1, 7, 15, 16, 17, 31, 33, 40, 64, 70}) {
    const int64_t R = 300;  // more than one 256-row chunk of the backward
    Array<double> x = rng.normal_array<double>(Shape{R, D}), g = rng.normal_array<double>(Shape{R, D});
    Array<double> gam = rng.normal_array<double>(Shape{D}), bet = rng.normal_array<double>(Shape{D});
    for (int64_t i = 0; i < x.size(); ++i) x[i] = 3.0 + 2.0 * x[i];
    auto to_f = [](const Array<double>& a) {
      Array<float> f(a.shape());
      for (int64_t i = 0; i < a.size(); ++i) f[i] = static_cast<float>(a[i]);
      return f;
    };
    // The double reference runs on the float inputs' values.
    auto round_trip = [&](const Array<double>& a) {
      Array<double> r(a.shape());
      for (int64_t i = 0; i < a.size(); ++i) r[i] = static_cast<double>(static_cast<float>(a[i]));
      return r;
    };
    Vard xd(round_trip(x), true), gd = Vard::parameter(round_trip(gam)), bd = Vard::parameter(round_trip(bet));
    Varf xf(to_f(x), true), gf = Varf::parameter(to_f(gam)), bf = Varf::parameter(to_f(bet));
    Vard yd = layer_norm(xd, gd, bd, 1e-5);
    Varf yf = layer_norm(xf, gf, bf, 1e-5f);
    Tape<double>::current().backward(yd, round_trip(g));
    Tape<float>::current().backward(yf, to_f(g));
    auto compare = [&](const Array<float>& got, const Array<double>& want, double scale) {
      double w = 0;
      for (int64_t i = 0; i < want.size(); ++i) w = std::max(w, std::abs(got[i] - want[i]) / scale);
      worst = std::max(worst, w);
    };
    compare(yf.value(), yd.value(), 10.0);
    compare(xf.grad(), xd.grad(), 10.0);
    compare(gf.grad(), gd.grad(), 10.0 * R);
    compare(bf.grad(), bd.grad(), 10.0 * R);
    Tape<double>::current().clear();
    Tape<float>::current().clear();
  }
  INFO("worst error " << worst);
  CHECK(worst < 2e-6);
}

TEST_CASE("a two-layer network overfits one batch") {
  // 16 examples, 8 features, 4 classes; a tanh MLP trained by plain gradient descent.
  Rng rng(11);
  Varf x(rng.normal_array<float>(Shape{16, 8}));
  std::vector<int32_t> y(16);
  for (int i = 0; i < 16; ++i) y[static_cast<size_t>(i)] = static_cast<int32_t>(rng.integer(4));
  Varf w1 = Varf::parameter(rng.normal_array<float>(Shape{8, 32}, 0.3));
  Varf b1 = Varf::parameter(Array<float>(Shape{32}));
  Varf w2 = Varf::parameter(rng.normal_array<float>(Shape{32, 4}, 0.3));
  Varf b2 = Varf::parameter(Array<float>(Shape{4}));
  std::vector<Varf> params{w1, b1, w2, b2};
  float first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    Varf h = tanh(add(matmul(x, w1), b1));
    Varf loss = cross_entropy(add(matmul(h, w2), b2), y);
    if (step == 0) first = loss.value().item();
    last = loss.value().item();
    for (auto& p : params) p.zero_grad();
    backward(loss);
    for (auto& p : params)
      for (int64_t i = 0; i < p.size(); ++i) p.value()[i] -= 0.5f * p.grad()[i];
  }
  INFO("first loss " << first << ", last " << last);
  CHECK(last < 0.1f * first);
}
