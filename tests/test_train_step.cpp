// train::train_step, the one step the trainer and `liegrad bench` run: it equals the
// step written out by hand (zero, forward, cross-entropy, backward, clip, optimizer
// step) bit for bit, calls its hooks between those parts, and stops before the
// optimizer step on a non-finite loss or gradient norm.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "core/errors.hpp"
#include "optim/clip.hpp"
#include "tests/model_test_utils.hpp"
#include "train/train_step.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {

constexpr int64_t V = 11, B = 3, T = 7;
const json kLstmModel = {{"type", "lstm"}, {"hidden", 8}};
const json kAdamW = {{"weight_decay", 0.01}};

data::Batch batch_of(uint64_t seed) {
  data::Batch b;
  b.B = B;
  b.T = T;
  b.inputs = test::tokens(B * T, V, seed);
  b.targets = test::tokens(B * T, V, seed + 1);
  return b;
}

std::vector<Array<float>> values(models::Model<float>& m) {
  std::vector<Array<float>> v;
  for (auto& p : m.parameters()) v.push_back(p.var.value());
  return v;
}

}  // namespace

TEST_CASE("train_step is the hand-written step, state carried, bit for bit") {
  auto model = models::make_model<float>(kLstmModel, V, 5), twin = models::make_model<float>(kLstmModel, V, 5);
  auto opt = optim::make_optimizer<float>("adamw", model->parameters(), kAdamW);
  auto twin_opt = optim::make_optimizer<float>("adamw", twin->parameters(), kAdamW);
  models::RecurrentState<float> state, twin_state;
  for (uint64_t step = 0; step < 3; ++step) {
    const data::Batch b = batch_of(10 + 2 * step);
    const train::StepOutcome got = train::train_step(*model, *opt, b, &state, 1e-2, 0.5);
    twin_opt->zero_grad();
    ag::Tape<float>::current().clear();
    ag::Varf loss = ag::cross_entropy(twin->forward(b.inputs, B, T, &twin_state), b.targets);
    const double want_loss = loss.value().item();
    ag::backward(loss);
    const double want_norm = optim::clip_grad_norm(twin->parameters(), 0.5);
    twin_opt->step(1e-2);
    CHECK(got.loss == want_loss);
    CHECK(got.grad_norm == want_norm);
  }
  CHECK(!state.empty());
  const auto a = values(*model), b = values(*twin);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t k = 0; k < a[i].size(); ++k) CHECK(a[i][k] == b[i][k]);
}

TEST_CASE("train_step calls its hooks between the parts and reports the reduced loss") {
  auto model = models::make_model<float>(kLstmModel, V, 5);
  auto opt = optim::make_optimizer<float>("adamw", model->parameters(), kAdamW);
  const data::Batch b = batch_of(3);
  std::vector<std::string> calls;
  double seen_loss = 0;
  train::StepHooks hooks;
  hooks.reduce_loss = [&](const Array<float>& logits, double loss) {
    calls.push_back("loss");
    CHECK(logits.shape() == Shape{B, T, V});
    CHECK(!model->parameters().front().var.has_grad());  // before backward
    seen_loss = loss;
    return 2 * loss;
  };
  hooks.reduce_gradients = [&] {
    calls.push_back("gradients");
    for (auto& p : model->parameters()) {
      REQUIRE(p.var.has_grad());  // after backward
      for (int64_t k = 0; k < p.var.grad().size(); ++k) p.var.grad()[k] = 0;
    }
  };
  const train::StepOutcome out = train::train_step(*model, *opt, b, nullptr, 1e-2, 1.0, hooks);
  CHECK(calls == std::vector<std::string>{"loss", "gradients"});
  CHECK(std::abs(seen_loss - std::log(static_cast<double>(V))) < 0.5);  // about ln V at initialisation
  CHECK(out.loss == 2 * seen_loss);
  CHECK(out.grad_norm == 0);  // clipping saw the gradients the hook left
}

TEST_CASE("train_step stops before the optimizer step on a non-finite loss or gradient norm") {
  auto model = models::make_model<float>(kLstmModel, V, 5);
  auto opt = optim::make_optimizer<float>("adamw", model->parameters(), kAdamW);
  const data::Batch b = batch_of(4);
  const auto before = values(*model);
  auto unchanged = [&] {
    const auto now = values(*model);
    for (size_t i = 0; i < now.size(); ++i)
      for (int64_t k = 0; k < now[i].size(); ++k)
        if (now[i][k] != before[i][k]) return false;
    return true;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Stopped {
    std::string what;
    double value;
  };

  // A non-finite reported loss: the hook hears "loss" with this process's (finite) loss.
  train::StepHooks hooks;
  hooks.reduce_loss = [&](const Array<float>&, double) { return nan; };
  hooks.non_finite = [](const char* what, double value) { throw Stopped{what, value}; };
  try {
    train::train_step(*model, *opt, b, nullptr, 1e-2, 1.0, hooks);
    FAIL("no stop");
  } catch (const Stopped& s) {
    CHECK(s.what == "loss");
    CHECK(std::isfinite(s.value));
  }
  CHECK(unchanged());

  // A non-finite gradient norm, without a hook of its own: NumericError naming it.
  train::StepHooks bad_grad;
  bad_grad.reduce_gradients = [&] { model->parameters().front().var.grad()[0] = static_cast<float>(nan); };
  try {
    train::train_step(*model, *opt, b, nullptr, 1e-2, 1.0, bad_grad);
    FAIL("no stop");
  } catch (const NumericError& e) {
    CHECK(std::string(e.what()).find("non-finite gradient norm") != std::string::npos);
  }
  CHECK(unchanged());
}
