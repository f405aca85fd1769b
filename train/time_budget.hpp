// The training clock and the learning rate under train.time_budget_s: seconds spent in
// training steps (forward, backward, update; evaluations not counted), summed over the
// segments of a resumed run. With a time budget, the schedule's decay after warm-up runs
// on the fraction f of the post-warm-up budget used so far: the schedule is read at the
// step it would be at after f of its decay, so the lr reaches its floor as time runs out.
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

#include "optim/schedule.hpp"

namespace liegrad::train {

class TimeBudget {
 public:
  // budget_seconds 0 = off (the schedule runs on steps); warmup and steps as train.*.
  TimeBudget(double budget_seconds, int64_t warmup, int64_t steps)
      : budget_(budget_seconds), warmup_(warmup), steps_(steps) {}

  // The learning rate of step `step` (0-based).
  double lr(const optim::Schedule& schedule, int64_t step);
  // Adds a step's seconds; the caller makes them one clock on every rank first.
  void add(double step_seconds) { train_seconds_ += step_seconds; }
  double& train_seconds() { return train_seconds_; }
  bool on() const { return budget_ > 0; }
  bool used_up() const { return budget_ > 0 && train_seconds_ >= budget_; }
  double seconds_left() const { return budget_ - train_seconds_; }

  // The checkpoint's "progress" fields {"train_seconds", "warmup_seconds"}, and back.
  nlohmann::json progress() const { return {{"train_seconds", train_seconds_}, {"warmup_seconds", warmup_seconds_}}; }
  void restore(const nlohmann::json& progress);

 private:
  double budget_;
  int64_t warmup_, steps_;
  double train_seconds_ = 0;
  double warmup_seconds_ = -1;  // train_seconds_ when warm-up ended; -1 before
};

}  // namespace liegrad::train
