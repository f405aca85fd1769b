// Tests of optim/: SGD, Adam and AdamW on a quadratic; Adam's first steps against
// values computed by hand from Kingma & Ba 2015 (Algorithm 1), with its bias correction
// counted per tensor or per coordinate; decoupled weight decay
// only on Weight-role parameters (Loshchilov & Hutter 2019); bit-identical resume
// from saved state; global-norm clipping; schedules; factory errors; Riemannian steps
// of manifold-mode group parameters (Absil et al. 2008) staying on the group.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <numbers>

#include "core/errors.hpp"
#include "core/rng.hpp"
#include "groups/group.hpp"
#include "optim/clip.hpp"
#include "optim/optimizer.hpp"
#include "optim/riemannian.hpp"
#include "optim/schedule.hpp"

using namespace liegrad;
using ag::Parameter;
using ag::ParamRole;

namespace {

template <class T>
Parameter<T> make_param(const std::string& name, Array<T> value, ParamRole role = ParamRole::Weight,
                        std::shared_ptr<const groups::Group> group = nullptr) {
  Parameter<T> p;
  p.name = name;
  p.var = ag::Var<T>::parameter(std::move(value));
  p.role = role;
  p.group = std::move(group);
  p.dof = p.var.size();
  return p;
}

// The same parameters over fresh tensors holding copies of the current values.
template <class T>
std::vector<Parameter<T>> clone_params(const std::vector<Parameter<T>>& ps) {
  std::vector<Parameter<T>> out;
  for (const Parameter<T>& p : ps) {
    Parameter<T> q = p;
    q.var = ag::Var<T>::parameter(p.var.value());
    out.push_back(q);
  }
  return out;
}

template <class T>
bool bit_equal(const Array<T>& a, const Array<T>& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), sizeof(T) * static_cast<size_t>(a.size())) == 0;
}

// Quadratic 0.5 * sum a_i (w_i - c_i)^2: sets the gradient, returns the loss.
double quadratic_grad(Parameter<float>& p, const std::vector<double>& a, const std::vector<double>& c) {
  Array<float>& w = p.var.value();
  Array<float> g(w.shape());
  double loss = 0;
  for (int64_t i = 0; i < w.size(); ++i) {
    const double r = static_cast<double>(w[i]) - c[static_cast<size_t>(i)];
    loss += 0.5 * a[static_cast<size_t>(i)] * r * r;
    g[i] = static_cast<float>(a[static_cast<size_t>(i)] * r);
  }
  p.var.grad() = g;
  return loss;
}

std::shared_ptr<const groups::Group> so8() { return groups::make_special_orthogonal(8); }

}  // namespace

TEST_CASE("optimizers minimise an ill-conditioned quadratic") {
  const std::vector<double> a{1.0, 4.0, 0.25, 10.0}, c{1.0, -2.0, 3.0, 0.5};
  struct Case {
    std::string name;
    nlohmann::json opt;
    double lr;
  };
  for (const Case& cs :
       {Case{"sgd", {{"momentum", 0.9}}, 0.02}, Case{"sgd", {{"momentum", 0.9}, {"nesterov", true}}, 0.02},
        Case{"sgd", nlohmann::json::object(), 0.05}, Case{"adam", {}, 0.05},
        Case{"adamw", {{"weight_decay", 0.0}}, 0.05}}) {
    CAPTURE(cs.name);
    CAPTURE(cs.opt.dump());
    std::vector<Parameter<float>> ps{make_param<float>("w", Array<float>(Shape{4}, 0.0f))};
    auto opt = optim::make_optimizer<float>(cs.name, ps, cs.opt);
    const double loss0 = quadratic_grad(ps[0], a, c);
    double loss = loss0;
    for (int it = 0; it < 3000; ++it) {
      opt->step(it < 2000 ? cs.lr : cs.lr * 0.1);
      opt->zero_grad();
      CHECK_FALSE(ps[0].var.has_grad());
      loss = quadratic_grad(ps[0], a, c);
    }
    CHECK(loss < 1e-6 * loss0);
    CHECK(opt->step_count() == 3000);
  }
}

TEST_CASE("Adam's first steps match Kingma & Ba (2015), Algorithm 1") {
  // Reference values by hand from m_t = b1 m + (1-b1) g, v_t = b2 v + (1-b2) g^2,
  // w -= lr (m_t / (1 - b1^t)) / (sqrt(v_t / (1 - b2^t)) + eps), lr 0.01, defaults.
  const double gs[3][3] = {{0.1, -0.3, 2.0}, {0.2, 0.1, -1.0}, {-0.05, 0.4, 0.0}};
  const double expect[3][3] = {{0.990000001000, -1.990000000333, 0.490000000050},
                               {0.980348181352, -1.985997814793, 0.487336629670},
                               {0.974462114470, -1.989093402297, 0.485277836650}};
  std::vector<Parameter<double>> ps{make_param<double>("w", Array<double>(Shape{3}, {1.0, -2.0, 0.5}))};
  optim::Adam<double> adam(ps);
  for (int t = 0; t < 3; ++t) {
    ps[0].var.grad() = Array<double>(Shape{3}, {gs[t][0], gs[t][1], gs[t][2]});
    adam.step(0.01);
    for (int i = 0; i < 3; ++i) CHECK(std::abs(ps[0].var.value()[i] - expect[t][i]) < 1e-6);
  }
}

TEST_CASE("AdamW decays only Weight-role parameters, by exactly lr * wd * w") {
  const double lr = 0.1, wd = 0.3;
  const Array<double> init(Shape{2, 2}, {1.0, -2.0, 0.5, 4.0});
  std::vector<Parameter<double>> ps;
  for (ParamRole r : {ParamRole::Weight, ParamRole::Bias, ParamRole::Norm, ParamRole::Scalar, ParamRole::Mixing,
                      ParamRole::GroupAlgebra})
    ps.push_back(make_param<double>(ag::role_name(r), init, r));
  ps.push_back(make_param<double>("group_base", init, ParamRole::GroupBase));  // never trained, even with a gradient
  ps.push_back(make_param<double>("weight_without_grad", init, ParamRole::Weight));
  auto opt = optim::make_optimizer<double>("adamw", ps, {{"weight_decay", wd}});
  for (size_t i = 0; i + 1 < ps.size(); ++i) ps[i].var.grad() = Array<double>(init.shape());  // zero gradients
  ps[ps.size() - 2].var.grad() = Array<double>(init.shape(), 1.0);                            // group_base
  opt->step(lr);
  for (int64_t k = 0; k < init.size(); ++k)
    CHECK(ps[0].var.value()[k] == doctest::Approx(init[k] - lr * wd * init[k]).epsilon(1e-15));
  for (size_t i = 1; i < ps.size(); ++i) {
    CAPTURE(ps[i].name);
    CHECK(bit_equal(ps[i].var.value(), init));  // no decay; and no gradient -> no step at all
  }
  // Plain Adam without weight decay leaves zero-gradient weights alone.
  std::vector<Parameter<double>> qs{make_param<double>("w", init)};
  optim::Adam<double> adam(qs);
  qs[0].var.grad() = Array<double>(init.shape());
  adam.step(lr);
  CHECK(bit_equal(qs[0].var.value(), init));
}

namespace {
// Runs `steps` steps with random gradients from rng on every parameter.
template <class T>
void random_steps(optim::Optimizer<T>& opt, std::vector<Parameter<T>>& ps, Rng& rng, int steps, double lr) {
  for (int s = 0; s < steps; ++s) {
    for (Parameter<T>& p : ps) p.var.grad() = rng.normal_array<T>(p.var.shape(), 1.0);
    opt.step(lr);
    opt.zero_grad();
  }
}
}  // namespace

TEST_CASE("optimizer state round-trips through JSON for a bit-identical resume") {
  for (const std::string name : {"sgd", "adam", "adamw"}) {
    CAPTURE(name);
    Rng init(7);
    std::vector<Parameter<float>> ps{
        make_param<float>("w", init.normal_array<float>(Shape{3, 4}), ParamRole::Weight),
        make_param<float>("b", init.normal_array<float>(Shape{4}), ParamRole::Bias),
        make_param<float>("rot", so8()->sample<float>(init, 3), ParamRole::GroupManifold, so8())};
    const nlohmann::json options = name == "sgd" ? nlohmann::json{{"momentum", 0.9}, {"weight_decay", 1e-2}}
                                                 : nlohmann::json{{"weight_decay", 1e-2}};
    auto a = optim::make_optimizer<float>(name, ps, options);
    Rng g1(11);
    random_steps(*a, ps, g1, 5, 1e-2);

    // Save as text (as a checkpoint would), restore into a fresh optimizer over copies.
    const std::string saved = a->state_to_json().dump();
    std::vector<Parameter<float>> qs = clone_params(ps);
    auto b = optim::make_optimizer<float>(name, qs, options);
    b->state_from_json(nlohmann::json::parse(saved));
    CHECK(b->step_count() == 5);

    Rng g2 = g1;  // identical gradient streams from here on
    random_steps(*a, ps, g1, 5, 1e-2);
    random_steps(*b, qs, g2, 5, 1e-2);
    for (size_t i = 0; i < ps.size(); ++i) {
      CAPTURE(ps[i].name);
      CHECK(bit_equal(ps[i].var.value(), qs[i].var.value()));
    }
    CHECK(a->state_to_json() == b->state_to_json());
  }
}

TEST_CASE("Adam's coordinate bias correction: a row first read late takes Algorithm 1's first step") {
  // Two rows; row 1 has a zero gradient for the first 5,000 steps (a symbol an alphabet
  // curriculum holds back), then g. With the tensor's count t = 5,001 its moments start
  // uncorrected: the first step is lr (0.1 g / 1) / sqrt(0.001 g^2 / (1 - 0.999^5001)),
  // about 3.16 lr; counted from its own first gradient it is lr g / (|g| + eps) ~ lr.
  const double lr = 0.01, g = 0.25;
  auto first_late_step = [&](const std::string& correction) {
    std::vector<Parameter<double>> ps{make_param<double>("table", Array<double>(Shape{2, 3}))};
    auto adam = optim::make_optimizer<double>("adam", ps, {{"bias_correction", correction}});
    Array<double> grad(Shape{2, 3});
    for (int t = 0; t < 5000; ++t) {
      for (int j = 0; j < 3; ++j) grad[j] = (t % 2 ? 1.0 : -1.0) * (j + 1);  // row 0 only
      ps[0].var.grad() = grad;
      adam->step(lr);
    }
    for (int j = 0; j < 3; ++j) CHECK(ps[0].var.value()[3 + j] == 0.0);  // row 1 untouched so far
    for (int j = 0; j < 6; ++j) grad[j] = j < 3 ? 0.0 : g;
    ps[0].var.grad() = grad;
    adam->step(lr);
    return -ps[0].var.value()[3];
  };
  const double tensor_count = first_late_step("parameter"), own_count = first_late_step("coordinate");
  const double b1 = 0.9, b2 = 0.999, t = 5001;
  CHECK(tensor_count == doctest::Approx(lr * ((1 - b1) * g / (1 - std::pow(b1, t))) /
                                        (std::sqrt((1 - b2) * g * g / (1 - std::pow(b2, t))) + 1e-8))
                            .epsilon(1e-9));
  CHECK(tensor_count > 3.1 * lr);
  CHECK(own_count == doctest::Approx(lr * g / (g + 1e-8)).epsilon(1e-12));

  // Where every coordinate has a gradient from the first step the two agree bit for bit.
  Rng init(3);
  std::vector<Parameter<float>> a{make_param<float>("w", init.normal_array<float>(Shape{4, 5}))};
  std::vector<Parameter<float>> b = clone_params(a);
  auto pa = optim::make_optimizer<float>("adamw", a, {{"bias_correction", "parameter"}});
  auto pb = optim::make_optimizer<float>("adamw", b, {{"bias_correction", "coordinate"}});
  Rng ga(9), gb(9);
  random_steps(*pa, a, ga, 20, 1e-2);
  random_steps(*pb, b, gb, 20, 1e-2);
  CHECK(bit_equal(a[0].var.value(), b[0].var.value()));
  CHECK(pb->options_json()["bias_correction"] == "coordinate");
  CHECK(pa->options_json()["bias_correction"] == "parameter");

  // The counts are saved with the moments: a resumed optimizer continues bit for bit.
  const std::string saved = pb->state_to_json().dump();
  CHECK(nlohmann::json::parse(saved)["params"]["w"].contains("steps"));
  std::vector<Parameter<float>> c = clone_params(b);
  auto pc = optim::make_optimizer<float>("adamw", c, {{"bias_correction", "coordinate"}});
  pc->state_from_json(nlohmann::json::parse(saved));
  Rng gc = gb;
  random_steps(*pb, b, gb, 5, 1e-2);
  random_steps(*pc, c, gc, 5, 1e-2);
  CHECK(bit_equal(b[0].var.value(), c[0].var.value()));
  // A state saved without the counts is refused by name.
  auto pd = optim::make_optimizer<float>("adamw", clone_params(a), {{"bias_correction", "coordinate"}});
  CHECK_THROWS_WITH_AS(pd->state_from_json(pa->state_to_json()), doctest::Contains("steps"), ValueError);
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("adam", a, {{"bias_correction", "row"}}),
                       doctest::Contains("bias_correction"), ValueError);
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("sgd", a, {{"bias_correction", "coordinate"}}),
                       doctest::Contains("bias_correction"), ConfigError);
}

TEST_CASE("optimizer state loading rejects mismatches, naming the parameter") {
  std::vector<Parameter<float>> ps{make_param<float>("embed", Array<float>(Shape{3, 4})),
                                   make_param<float>("bias", Array<float>(Shape{4}), ParamRole::Bias)};
  optim::Adam<float> adam(ps);
  const nlohmann::json good = adam.state_to_json();

  std::vector<Parameter<float>> wider{make_param<float>("embed", Array<float>(Shape{3, 5})),
                                      make_param<float>("bias", Array<float>(Shape{4}), ParamRole::Bias)};
  optim::Adam<float> other(wider);
  CHECK_THROWS_WITH_AS(other.state_from_json(good), doctest::Contains("'embed'"), ValueError);

  nlohmann::json missing = good;
  missing["params"].erase("bias");
  CHECK_THROWS_WITH_AS(adam.state_from_json(missing), doctest::Contains("'bias'"), ValueError);

  nlohmann::json extra = good;
  extra["params"]["ghost"] = good["params"]["bias"];
  CHECK_THROWS_WITH_AS(adam.state_from_json(extra), doctest::Contains("'ghost'"), ValueError);

  optim::SGD<float> sgd(ps, {.momentum = 0.9});
  CHECK_THROWS_WITH_AS(sgd.state_from_json(good), doctest::Contains("adam"), ValueError);

  // Non-finite moments survive the round trip.
  ps[0].var.grad() = Array<float>(Shape{3, 4}, INFINITY);
  adam.step(0.1);
  nlohmann::json inf_state = adam.state_to_json();
  optim::Adam<float> again(clone_params(ps));
  again.state_from_json(nlohmann::json::parse(inf_state.dump()));
  CHECK(again.state_to_json().dump() == inf_state.dump());
}

TEST_CASE("global-norm clipping scales to the max norm and reports the pre-clip norm") {
  std::vector<Parameter<float>> ps{make_param<float>("a", Array<float>(Shape{2})),
                                   make_param<float>("b", Array<float>(Shape{1})),
                                   make_param<float>("no_grad", Array<float>(Shape{3}))};
  auto set = [&] {
    ps[0].var.grad() = Array<float>(Shape{2}, {3.0f, 4.0f});
    ps[1].var.grad() = Array<float>(Shape{1}, {12.0f});
  };
  set();
  CHECK(optim::grad_norm(ps) == doctest::Approx(13.0));
  CHECK(optim::clip_grad_norm(ps, 6.5) == doctest::Approx(13.0));
  CHECK(optim::grad_norm(ps) == doctest::Approx(6.5));
  CHECK(ps[0].var.grad()[0] == doctest::Approx(1.5));
  CHECK(ps[1].var.grad()[0] == doctest::Approx(6.0));
  CHECK_FALSE(ps[2].var.has_grad());

  for (double off : {0.0, -1.0, static_cast<double>(INFINITY), 20.0}) {
    set();
    CHECK(optim::clip_grad_norm(ps, off) == doctest::Approx(13.0));
    CHECK(ps[1].var.grad()[0] == 12.0f);
  }
  set();
  ps[0].var.grad()[0] = NAN;
  CHECK(std::isnan(optim::clip_grad_norm(ps, 1.0)));
  CHECK(ps[1].var.grad()[0] == 12.0f);  // unscaled: the trainer decides
}

TEST_CASE("schedules hit their endpoints") {
  // warmup 10, total 111 steps: decay from step 10 (peak) to step 110 (floor), midpoint 60.
  for (const std::string name : {"cosine", "linear"}) {
    CAPTURE(name);
    const optim::Schedule s = optim::make_schedule(name, 2.0, 10, 111, 0.1);
    CHECK(s.lr(0) == doctest::Approx(0.2));
    CHECK(s.lr(4) == doctest::Approx(1.0));
    CHECK(s.lr(9) == doctest::Approx(2.0));
    CHECK(s.lr(10) == doctest::Approx(2.0));
    CHECK(s.lr(60) == doctest::Approx(1.1));  // (peak + floor) / 2 for both
    CHECK(s.lr(110) == doctest::Approx(0.2));
    CHECK(s.lr(5000) == doctest::Approx(0.2));
    for (int64_t t = 10; t < 110; ++t) CHECK(s.lr(t + 1) <= s.lr(t));
  }
  const optim::Schedule cos = optim::make_schedule("cosine", 1.0, 0, 101, 0.0);
  CHECK(cos.lr(0) == doctest::Approx(1.0));
  CHECK(cos.lr(25) == doctest::Approx(0.5 * (1 + std::cos(std::numbers::pi / 4))));
  CHECK(cos.lr(100) == doctest::Approx(0.0));
  const optim::Schedule lin = optim::make_schedule("linear", 1.0, 0, 101, 0.0);
  CHECK(lin.lr(25) == doctest::Approx(0.75));
  const optim::Schedule c = optim::make_schedule("constant", 3e-3, 4, 100, 0.1);
  CHECK(c.lr(0) == doctest::Approx(7.5e-4));
  CHECK(c.lr(3) == doctest::Approx(3e-3));
  CHECK(c.lr(99) == doctest::Approx(3e-3));
  CHECK(c.lr(1000) == doctest::Approx(3e-3));

  CHECK_THROWS_WITH_AS(optim::make_schedule("step", 1.0, 0, 10, 0.1), doctest::Contains("constant, cosine, linear"),
                       ValueError);
  CHECK_THROWS_WITH_AS(optim::make_schedule("cosine", 1.0, -1, 10, 0.1), doctest::Contains("warmup"), ValueError);
  CHECK_THROWS_WITH_AS(optim::make_schedule("cosine", 1.0, 0, 0, 0.1), doctest::Contains("total_steps"), ValueError);
  CHECK_THROWS_WITH_AS(optim::make_schedule("cosine", 1.0, 0, 10, 1.5), doctest::Contains("min_lr_frac"), ValueError);
  CHECK_THROWS_WITH_AS(optim::make_schedule("cosine", 0.0, 0, 10, 0.1), doctest::Contains("peak lr"), ValueError);
  CHECK_THROWS_AS(c.lr(-1), ValueError);
}

TEST_CASE("optimizer factory errors name the problem") {
  std::vector<Parameter<float>> ps{make_param<float>("w", Array<float>(Shape{2}))};
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("rmsprop", ps), doctest::Contains("sgd, adam, adamw"), ValueError);
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("adam", ps, {{"beta1", 1.0}}), doctest::Contains("beta1"),
                       ValueError);
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("adam", ps, {{"beta2", -0.1}}), doctest::Contains("-0.1"),
                       ValueError);
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("adamw", ps, {{"eps", 0.0}}), doctest::Contains("eps"), ValueError);
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("adamw", ps, {{"weight_decay", -1e-3}}),
                       doctest::Contains("weight_decay"), ValueError);
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("sgd", ps, {{"momentum", -0.5}}), doctest::Contains("momentum"),
                       ValueError);
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("sgd", ps, {{"nesterov", true}}), doctest::Contains("nesterov"),
                       ValueError);
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("adam", ps, {{"beta1", "high"}}), doctest::Contains("beta1"),
                       ValueError);
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("adam", ps, {{"betas", {0.9, 1.5}}}), doctest::Contains("beta2"),
                       ValueError);
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("adam", ps, {{"momentum", 0.9}}), doctest::Contains("momentum"),
                       ConfigError);
  CHECK_THROWS_AS(optim::make_optimizer<float>("adam", ps, {{"reorth_every", -1}}), ValueError);
  auto ok = optim::make_optimizer<float>("adamw", ps, {{"betas", {0.8, 0.99}}});
  CHECK(ok->name() == "adamw");
  CHECK(ok->options_json()["beta1"] == 0.8);
  CHECK(ok->options_json()["weight_decay"] == 0.01);
  CHECK_THROWS_AS(ok->step(-1.0), ValueError);

  std::vector<Parameter<float>> dup{ps[0], ps[0]};
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("sgd", dup), doctest::Contains("'w'"), ValueError);
  std::vector<Parameter<float>> nogroup{make_param<float>("m", Array<float>(Shape{1, 8, 8}), ParamRole::GroupManifold)};
  CHECK_THROWS_WITH_AS(optim::make_optimizer<float>("sgd", nogroup), doctest::Contains("'m'"), ValueError);
}

// ---------------------------------------------------------------- manifold parameters

TEST_CASE("Riemannian gradient coordinates are the derivative of u -> L(W exp(hat u))") {
  Rng rng(3);
  std::vector<std::shared_ptr<const groups::Group>> gs{so8(), groups::make_unitary(3), groups::make_special_unitary(3)};
  for (const auto& G : gs) {
    CAPTURE(G->name());
    const Array<double> W = G->sample<double>(rng, 2);                 // (2,n,n)
    const Array<double> C = rng.normal_array<double>(W.shape(), 1.0);  // L(W) = sum_b tr(C_b^T W_b)
    const Array<double> g = optim::riemannian_grad_coords(*G, W, C);   // (2,m)
    auto loss = [&](const Array<double>& u) {
      Array<double> X = W;
      optim::retract_exp(*G, X, u);
      double s = 0;
      for (int64_t k = 0; k < X.size(); ++k) s += C[k] * X[k];
      return s;
    };
    double worst = 0;
    const double h = 1e-6;
    for (int64_t k = 0; k < g.size(); ++k) {
      Array<double> up(g.shape()), um(g.shape());
      up[k] = h;
      um[k] = -h;
      worst = std::max(worst, std::abs((loss(up) - loss(um)) / (2 * h) - g[k]));
    }
    CHECK(worst < 1e-7);
  }
}

namespace {
// Defect after `steps` float Adam steps with N(0,1) Euclidean gradients on V elements.
double defect_after_random_adam(std::shared_ptr<const groups::Group> G, int steps, int64_t reorth_every) {
  Rng rng(2024);
  std::vector<Parameter<float>> ps{make_param<float>("embed", G->sample<float>(rng, 4), ParamRole::GroupManifold, G)};
  optim::AdamOptions o;
  o.reorth_every = reorth_every;
  optim::Adam<float> adam(ps, o);
  random_steps(adam, ps, rng, steps, 1e-2);
  return G->defect(ps[0].var.value());
}
}  // namespace

TEST_CASE("manifold Adam keeps group parameters on the group over 10,000 float steps") {
  // Each step rounds W exp(hat u) (computed in double) to float once, so the distance
  // from the group performs a random walk: measured ~2e-5 for SO(8) and ~1e-5 for U(4)
  // after 10,000 plain steps. A polar re-orthonormalisation every 100 steps keeps it at
  // float rounding (~1e-7).
  for (const auto& G : {so8(), std::shared_ptr<const groups::Group>(groups::make_unitary(4)),
                        std::shared_ptr<const groups::Group>(groups::make_special_unitary(4)),
                        std::shared_ptr<const groups::Group>(groups::make_group("T(4)xSO(3)"))}) {
    CAPTURE(G->name());
    const double plain = defect_after_random_adam(G, 10000, 0);
    const double reorth = defect_after_random_adam(G, 10000, 100);
    MESSAGE(G->name() << ": defect after 10,000 float Adam steps: " << plain << " plain, " << reorth
                      << " with reorth_every = 100");
    CHECK(plain <= 1e-4);
    CHECK(reorth <= 1e-5);
  }
}

TEST_CASE("polar re-orthonormalisation pulls a perturbed element back onto the group") {
  Rng rng(5);
  for (const auto& G : {so8(), std::shared_ptr<const groups::Group>(groups::make_unitary(4))}) {
    CAPTURE(G->name());
    Array<double> W = G->sample<double>(rng, 3);
    const Array<double> W0 = W;
    // A perturbation inside the group's storage structure (real form): scale the matrices.
    for (int64_t k = 0; k < W.size(); ++k) W[k] *= 1.001;
    CHECK(G->defect(W) > 1e-3);
    const double before = optim::polar_reorthonormalise(W);
    CHECK(before > 1e-3);
    CHECK(G->defect(W) < 1e-12);
    CHECK(max_abs_diff(W, W0) < 1e-12);  // the polar factor of c W is W
  }
}

TEST_CASE("manifold Riemannian SGD fits a rotation target and stays in SO(8)") {
  auto G = so8();
  Rng rng(9);
  const Array<float> R = G->sample<float>(rng, 1);  // target (1,8,8)
  std::vector<Parameter<float>> ps{
      make_param<float>("rot", G->identity<float>().reshaped(Shape{1, 8, 8}), ParamRole::GroupManifold, G)};
  optim::SGD<float> sgd(ps, {.momentum = 0.5});
  auto loss_and_grad = [&] {  // 0.5 ||W - R||_F^2, gradient W - R
    Array<float> g(R.shape());
    double loss = 0;
    for (int64_t k = 0; k < g.size(); ++k) {
      g[k] = ps[0].var.value()[k] - R[k];
      loss += 0.5 * static_cast<double>(g[k]) * g[k];
    }
    ps[0].var.grad() = g;
    return loss;
  };
  const double loss0 = loss_and_grad();
  double loss = loss0;
  for (int it = 0; it < 500; ++it) {
    sgd.step(0.1);
    sgd.zero_grad();
    loss = loss_and_grad();
  }
  MESSAGE("rotation fit: loss " << loss0 << " -> " << loss);
  CHECK(loss < 1e-6 * loss0);
  CHECK(G->defect(ps[0].var.value()) < 1e-5);
}
