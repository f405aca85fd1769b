// The training clock and the learning rate under a time budget (see time_budget.hpp).
#include "train/time_budget.hpp"

#include <algorithm>
#include <cmath>

namespace liegrad::train {

double TimeBudget::lr(const optim::Schedule& schedule, int64_t step) {
  if (budget_ <= 0 || step < warmup_) return schedule.lr(step);
  if (warmup_seconds_ < 0) warmup_seconds_ = train_seconds_;
  const double left = std::max(budget_ - warmup_seconds_, 1e-9);
  const double f = std::clamp((train_seconds_ - warmup_seconds_) / left, 0.0, 1.0);
  const int64_t decay_steps = std::max<int64_t>(steps_ - 1 - warmup_, 0);
  return schedule.lr(warmup_ + std::llround(f * static_cast<double>(decay_steps)));
}

void TimeBudget::restore(const nlohmann::json& p) {
  train_seconds_ = p.value("train_seconds", 0.0);
  warmup_seconds_ = p.value("warmup_seconds", -1.0);
}

}  // namespace liegrad::train
