// The training loop behind `liegrad train`: data, model, optimizer and schedule
// from a RunConfig; metrics to DIR/metrics.jsonl; validation every eval_interval
// steps; DIR/best.json (best validation) and DIR/last.json (latest) checkpoints;
// final validation and test BPC in DIR/result.json.
//
// Transformers train on random windows; recurrent models on consecutive windows
// of B parallel lanes with their state carried across windows (truncated
// back-propagation through time) and reset at each new pass over the data.
//
// Nothing is lost: checkpoints are written atomically; a non-finite loss or
// gradient stops the run (NumericError) before the optimizer step, leaving the
// checkpoints of the last good evaluation intact; a stop request (SIGINT/SIGTERM
// in the app) writes last.json at the current step and returns. Resuming from
// last.json reproduces the uninterrupted run's losses exactly (same thread count).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace liegrad::train {

// What the trainer reports after each step (TrainOptions::on_step).
struct StepReport {
  int64_t step = 0;          // steps done, 1-based
  int64_t total_steps = 0;   // train.steps
  double loss = 0;           // this step's training loss (nats per symbol)
  double lr = 0;
  double grad_norm = 0;      // before clipping
  double val_bpc = -1;       // the interim validation BPC when this step evaluated, else -1
};

struct TrainOptions {
  std::string out_dir;
  std::string data_dir;          // "" = find_data_dir's search
  bool resume = false;           // continue from out_dir/last.json
  bool force = false;            // overwrite a directory that holds another run
  bool progress_bar = false;     // redraw one status line (for terminals)
  std::ostream* log = nullptr;   // progress and messages; null = silent
  const std::atomic<bool>* stop = nullptr;  // polled after every step
  int64_t stop_at = 0;           // > 0: stop after this step as if interrupted (split long runs)
  // Called after every step (and its evaluation, if any), before `stop` is polled, on the
  // thread that runs the training: it may set *stop to end the run cleanly (last.json
  // written, TrainResult::interrupted). It must not throw.
  std::function<void(const StepReport&)> on_step;
};

struct TrainResult {
  int64_t steps_done = 0;
  bool interrupted = false;
  double val_bpc = 0, test_bpc = 0;   // final, over the whole splits (not set when interrupted)
  double best_val_bpc = 0;
  int64_t best_step = -1;
  int64_t parameters = 0;
  double seconds = 0, tokens_per_second = 0;
};

// config: the run configuration (for resume, the one stored in out_dir is used and
// `config` may only change train.steps and train.threads).
TrainResult run_training(const nlohmann::json& config, const TrainOptions& options);

}  // namespace liegrad::train
