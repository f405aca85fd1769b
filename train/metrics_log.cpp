// The metrics log (see metrics_log.hpp).
#include "train/metrics_log.hpp"

#include <algorithm>

namespace liegrad::train {

MetricsLog::MetricsLog(const std::filesystem::path& file, bool writer) : writer_(writer) {
  if (writer_) out_.open(file, std::ios::app);
}

void MetricsLog::add_step(double loss, int64_t positions, double count, double allreduce_seconds) {
  loss_ += loss;
  positions_ += positions;
  count_ += count;
  allreduce_ += allreduce_seconds;
  ++steps_;
}

MetricsLog::Window MetricsLog::close_window(int64_t done, double lr, double grad_norm, double elapsed_seconds,
                                            bool several_ranks, const tasks::TaskTraining& task) {
  Window w;
  w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  w.steps = steps_;
  w.tokens_per_second = static_cast<double>(positions_) / std::max(w.seconds, 1e-9);
  w.mean_loss = loss_ / static_cast<double>(steps_);
  w.metric = task.window_metric(w.mean_loss, count_, positions_);
  nlohmann::json line = {{"step", done},         {"loss", w.mean_loss},       {w.metric.name, w.metric.value},
                         {"lr", lr},             {"grad_norm", grad_norm},    {"tokens_per_s", w.tokens_per_second},
                         {"elapsed_s", elapsed_seconds}};
  if (several_ranks) line["allreduce_s"] = allreduce_ / static_cast<double>(steps_);
  write(line);
  loss_ = count_ = allreduce_ = 0;
  steps_ = positions_ = 0;
  start_ = std::chrono::steady_clock::now();
  return w;
}

void MetricsLog::write_evaluation(int64_t step, const nlohmann::json& fields) {
  nlohmann::json line = {{"step", step}};
  line.update(fields);
  write(line);
}

void MetricsLog::write(const nlohmann::json& line) {
  if (writer_) out_ << line.dump() << "\n" << std::flush;
}

}  // namespace liegrad::train
