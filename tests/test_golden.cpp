// Golden trajectories (in the spirit of llm.c's test_gpt2.c): for a fixed seed, the
// first five training losses of a tiny OSMFormer and a tiny Transformer, trained by
// AdamW on fixed token windows, are pinned. A change to initialisation, a forward
// pass, a derivative or the optimizer moves them; the tolerance (relative 2e-5)
// only absorbs float rounding differences from reordered sums (kernel changes and
// thread counts), which move these float32 losses by ~1e-6 relative.
#include <doctest/doctest.h>

#include "autograd/ops.hpp"
#include "models/model.hpp"
#include "optim/optimizer.hpp"
#include "tests/model_test_utils.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {
std::vector<double> first_losses(const json& model_cfg) {
  auto model = models::make_model<float>(model_cfg, 11, 42);
  auto opt = optim::make_optimizer<float>("adamw", model->parameters(), json{{"weight_decay", 0.01}});
  const int64_t B = 4, T_ = 12;
  std::vector<double> losses;
  for (int step = 0; step < 5; ++step) {
    const auto x = test::tokens(B * (T_ + 1), 11, 100);  // one fixed batch: the losses fall
    std::vector<int32_t> in, tg;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T_; ++t) {
        in.push_back(x[static_cast<size_t>(b * (T_ + 1) + t)]);
        tg.push_back(x[static_cast<size_t>(b * (T_ + 1) + t + 1)]);
      }
    opt->zero_grad();
    ag::Varf loss = ag::cross_entropy(model->forward(in, B, T_), tg);
    losses.push_back(loss.value().item());
    ag::backward(loss);
    opt->step(1e-2);
  }
  return losses;
}

void check_pinned(const std::vector<double>& got, const std::vector<double>& pinned) {
  REQUIRE(got.size() == pinned.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("step " << i << ": got " << got[i] << ", pinned " << pinned[i]);
    CHECK(got[i] == doctest::Approx(pinned[i]).epsilon(2e-5));
  }
}
}  // namespace

TEST_CASE("golden: first five losses of a tiny osmformer") {
  const auto got = first_losses({{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 2}, {"heads", 2}});
  check_pinned(got, {2.3994911, 2.3752930, 2.3521900, 2.3300812, 2.3087635});
}

TEST_CASE("golden: first five losses of a tiny transformer") {
  const auto got = first_losses({{"type", "transformer"}, {"D", 16}, {"layers", 2}, {"heads", 2}});
  check_pinned(got, {2.4052939, 2.3237505, 2.2451952, 2.1887853, 2.1223814});
}
