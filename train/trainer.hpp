// The training loop behind `liegrad train` and `liegrad.train`: the task, model,
// optimizer and schedule from a RunConfig; metrics to DIR/metrics.jsonl; an interim
// evaluation every eval_interval steps; DIR/best.json (best selection criterion) and
// DIR/last.json (latest) checkpoints; the final evaluation in DIR/result.json, the task's
// scores beside the run's figures. What is trained on and how it is scored is the
// task's (tasks/task.hpp: text language modelling, group words, or a registered kind);
// the loop itself is the same for every task. With train.patience, the run stops early
// after that many evaluations without a new best; such a run is finished (resuming it
// trains no further).
//
// The run directory is locked for the run's life (train/run_directory.hpp): a second
// writer is refused in one line naming the process that holds it.
//
// Nothing is lost: checkpoints are written atomically; a non-finite loss or
// gradient stops the run (NumericError) before the optimizer step, leaving the
// checkpoints of the last good evaluation intact; a stop request (SIGINT/SIGTERM
// in the app) writes last.json at the current step and returns. Resuming from
// last.json reproduces the uninterrupted run's losses exactly (same thread count).
//
// Data-parallel (TrainOptions::comm, train/distributed.hpp, docs/distributed.md): every
// rank draws the global batch of train.batch rows and trains on its B/N rows (recurrent
// models: its B/N lanes, whose carried state it keeps); the gradients are averaged over
// the ranks before clipping and the step. Rank 0 alone logs, evaluates and writes the
// run directory (the checkpoints hold every lane's state, so any rank count resumes).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace liegrad::train {

class Communicator;  // train/distributed.hpp

// What the trainer reports after each step (TrainOptions::on_step).
struct StepReport {
  int64_t step = 0;          // steps done, 1-based
  int64_t total_steps = 0;   // train.steps
  double loss = 0;           // this step's training loss (nats per symbol)
  double lr = 0;
  double grad_norm = 0;      // before clipping
  double val_bpc = -1;       // the interim evaluation's criterion (validation BPC for text,
                             // loss for group words) when this step evaluated, else -1
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
  // Data-parallel training (train/distributed.hpp): every rank calls run_training with
  // the same configuration; null = this process trains alone. Rank 0 alone logs,
  // evaluates and writes the run directory; log should be null on the other ranks.
  Communicator* comm = nullptr;
};

struct TrainResult {
  int64_t steps_done = 0;
  bool interrupted = false;
  // The task's scores, as in result.json (text: val_bpc, test_bpc, best_val_bpc,
  // test_bpc_at_best; group words: val, test by length, steps_to_99, ...); null when
  // interrupted.
  nlohmann::json scores;
  std::string headline;                // the task's short closing line ("val_bpc 1.52 test_bpc 1.50")
  int64_t best_step = -1;
  bool stopped_early = false;          // train.patience ended the run before train.steps
  int64_t parameters = 0;
  double seconds = 0, tokens_per_second = 0;
};

// config: the run configuration (for resume, the one stored in out_dir is used and
// `config` may only change train.steps and train.threads).
TrainResult run_training(const nlohmann::json& config, const TrainOptions& options);

}  // namespace liegrad::train
