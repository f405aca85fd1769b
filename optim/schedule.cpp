// Learning-rate schedules (see schedule.hpp for the exact step conventions).
#include "optim/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/errors.hpp"

namespace liegrad::optim {

Schedule::Schedule(Kind kind, double peak_lr, int64_t warmup, int64_t total_steps, double min_lr_frac)
    : kind_(kind), peak_(peak_lr), warmup_(warmup), total_(total_steps), min_frac_(min_lr_frac) {
  if (!(std::isfinite(peak_lr) && peak_lr > 0))
    throw ValueError("schedule: peak lr must be finite and > 0, got " + number_for_message(peak_lr));
  if (warmup < 0) throw ValueError("schedule: warmup must be >= 0 steps, got " + std::to_string(warmup));
  if (total_steps < 1) throw ValueError("schedule: total_steps must be >= 1, got " + std::to_string(total_steps));
  if (!(min_lr_frac >= 0 && min_lr_frac <= 1))
    throw ValueError("schedule: min_lr_frac (floor as a fraction of the peak) must be in [0, 1], got " +
                     number_for_message(min_lr_frac));
}

double Schedule::lr(int64_t step) const {
  if (step < 0) throw ValueError("schedule: step must be >= 0, got " + std::to_string(step));
  if (step < warmup_) return peak_ * static_cast<double>(step + 1) / static_cast<double>(warmup_);
  if (kind_ == Kind::Constant) return peak_;
  const double floor = peak_ * min_frac_;
  // Decay span: from step warmup (peak) to step total - 1 (floor); at least one step.
  const double span = static_cast<double>(std::max<int64_t>(1, total_ - 1 - warmup_));
  const double p = std::min(1.0, static_cast<double>(step - warmup_) / span);
  if (kind_ == Kind::Cosine) return floor + (peak_ - floor) * 0.5 * (1.0 + std::cos(std::numbers::pi * p));
  return peak_ - (peak_ - floor) * p;  // Linear
}

std::string Schedule::name() const {
  switch (kind_) {
    case Kind::Constant:
      return "constant";
    case Kind::Cosine:
      return "cosine";
    case Kind::Linear:
      return "linear";
  }
  return "unknown";
}

std::vector<std::string> schedule_names() { return {"constant", "cosine", "linear"}; }

Schedule make_schedule(const std::string& name, double peak_lr, int64_t warmup, int64_t total_steps,
                       double min_lr_frac) {
  Schedule::Kind kind;
  if (name == "constant") {
    kind = Schedule::Kind::Constant;
  } else if (name == "cosine") {
    kind = Schedule::Kind::Cosine;
  } else if (name == "linear") {
    kind = Schedule::Kind::Linear;
  } else {
    std::string known;
    for (const std::string& n : schedule_names()) known += (known.empty() ? "" : ", ") + n;
    throw ValueError("unknown lr schedule '" + name + "'; known schedules: " + known);
  }
  return Schedule(kind, peak_lr, warmup, total_steps, min_lr_frac);
}

}  // namespace liegrad::optim
