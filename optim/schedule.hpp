// Learning-rate schedules: lr(step) for a 0-based optimizer step.
//
//   constant         peak_lr after warmup
//   cosine           warmup, then half a cosine from peak_lr down to the floor
//                    (Loshchilov & Hutter 2017, SGDR, without restarts)
//   linear           warmup, then a straight line from peak_lr down to the floor
//
// Warmup (all kinds) is linear: step s < warmup gets peak_lr * (s + 1) / warmup, so
// step 0 gets peak_lr / warmup and step warmup - 1 (and warmup) gets peak_lr.
// The floor is min_lr_frac * peak_lr. The decay runs from step `warmup` (peak) to the
// last step `total_steps - 1` (floor) and stays at the floor beyond it; the cosine
// midpoint, (peak + floor) / 2, is at step warmup + (total_steps - 1 - warmup) / 2.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace liegrad::optim {

class Schedule {
 public:
  enum class Kind { Constant, Cosine, Linear };

  // Throws ValueError for peak_lr not finite and > 0, warmup < 0, total_steps < 1,
  // or min_lr_frac outside [0, 1].
  Schedule(Kind kind, double peak_lr, int64_t warmup, int64_t total_steps, double min_lr_frac);

  // The learning rate for 0-based step `step` (ValueError when step < 0).
  double lr(int64_t step) const;

  Kind kind() const { return kind_; }
  std::string name() const;
  double peak_lr() const { return peak_; }
  double floor_lr() const { return peak_ * min_frac_; }
  int64_t warmup() const { return warmup_; }
  int64_t total_steps() const { return total_; }

 private:
  Kind kind_;
  double peak_;
  int64_t warmup_;
  int64_t total_;
  double min_frac_;
};

// The schedule names make_schedule accepts: "constant", "cosine", "linear".
std::vector<std::string> schedule_names();

// Builds a schedule by name; an unknown name is a ValueError listing the known ones.
Schedule make_schedule(const std::string& name, double peak_lr, int64_t warmup, int64_t total_steps,
                       double min_lr_frac = 0.1);

}  // namespace liegrad::optim
