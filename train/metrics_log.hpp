// DIR/metrics.jsonl, one JSON object a line: a line per log window of training steps
// ({"step", "loss", the task's metric ("bpc", "acc"), "lr", "grad_norm", "tokens_per_s",
// "elapsed_s", and "allreduce_s" on several ranks}) and a line per evaluation (the
// task's fields with "step"). Only rank 0 writes; the others keep the window's books.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tasks/task.hpp"

namespace liegrad::train {

class MetricsLog {
 public:
  // writer: false on ranks other than 0 (nothing is written).
  MetricsLog(const std::filesystem::path& file, bool writer);

  // One training step of the window: its loss (nats), global positions, the task's
  // count (summed over the ranks) and seconds spent averaging gradients.
  void add_step(double loss, int64_t positions, double count, double allreduce_seconds);

  struct Window {
    double mean_loss = 0, tokens_per_second = 0, seconds = 0;
    int64_t steps = 0;
    tasks::WindowMetric metric;
  };
  // Closes the window after step `done`: writes its line and starts the next window.
  Window close_window(int64_t done, double lr, double grad_norm, double elapsed_seconds, bool several_ranks,
                      const tasks::TaskTraining& task);

  // An evaluation's line: {"step": step, fields...}.
  void write_evaluation(int64_t step, const nlohmann::json& fields);

 private:
  void write(const nlohmann::json& line);

  std::ofstream out_;
  bool writer_;
  double loss_ = 0, count_ = 0, allreduce_ = 0;
  int64_t steps_ = 0, positions_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace liegrad::train
