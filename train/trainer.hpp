// The training loop behind `liegrad train`: data, model, optimizer and schedule
// from a RunConfig; metrics to DIR/metrics.jsonl; validation every eval_interval
// steps; DIR/best.json (best validation) and DIR/last.json (latest) checkpoints;
// final validation and test BPC in DIR/result.json, beside the best checkpoint's.
// With train.patience, the run stops early after that many evaluations without a new
// best validation BPC; such a run is finished (resuming it trains no further).
//
// Group word tasks (data.dataset "words:<group>", data/group_words.hpp) train every
// model the same way on fresh random words (no state carried between batches), with
// the cross-entropy of the running product at every position; validation reports
// loss and accuracy at length data.max_len, the final evaluation accuracy at every
// data.eval_lengths (train/word_eval.hpp), and the best checkpoint is the one with
// the lowest validation loss.
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
  // Data-parallel training (train/distributed.hpp): every rank calls run_training with
  // the same configuration; null = this process trains alone. Rank 0 alone logs,
  // evaluates and writes the run directory; log should be null on the other ranks.
  Communicator* comm = nullptr;
};

struct TrainResult {
  int64_t steps_done = 0;
  bool interrupted = false;
  double val_bpc = 0, test_bpc = 0;   // final, over the whole splits (not set when interrupted)
  // Group word tasks: {"val": scores, "test": [scores per length], "steps_to_99": step or
  // null} (WordScores::to_json); null for language models and when interrupted.
  nlohmann::json words;
  double best_val_bpc = 0;             // best.json over the whole validation split
  double test_bpc_at_best = 0;         // best.json over the whole test split
  int64_t best_step = -1;
  bool stopped_early = false;          // train.patience ended the run before train.steps
  int64_t parameters = 0;
  double seconds = 0, tokens_per_second = 0;
};

// config: the run configuration (for resume, the one stored in out_dir is used and
// `config` may only change train.steps and train.threads).
TrainResult run_training(const nlohmann::json& config, const TrainOptions& options);

}  // namespace liegrad::train
