// The training loop (see trainer.hpp): setting up a run, then one loop that reads top to
// bottom — draw a batch, take a step, log, evaluate, stop — and the run's end. The
// parts it calls each do one job: the task (tasks/task.hpp: batches, metrics,
// evaluations), the run directory and its lock (run_directory.hpp), resuming
// (resume.hpp, training_checkpoint.hpp), the metrics log (metrics_log.hpp), the best
// checkpoint and early stopping (best_checkpoint.hpp), the time budget
// (time_budget.hpp), pins (pins.hpp), the ranks (distributed.hpp) and the console.
#include "train/trainer.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "optim/optimizer.hpp"
#include "optim/schedule.hpp"
#include "tasks/registry.hpp"
#include "train/best_checkpoint.hpp"
#include "train/checkpoint.hpp"
#include "train/console.hpp"
#include "train/distributed.hpp"
#include "train/metrics_log.hpp"
#include "train/pins.hpp"
#include "train/resume.hpp"
#include "train/run_config.hpp"
#include "train/run_directory.hpp"
#include "train/time_budget.hpp"
#include "train/train_step.hpp"
#include "train/training_checkpoint.hpp"

namespace liegrad::train {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

class Run {
 public:
  Run(const nlohmann::json& config_in, const TrainOptions& opt)
      : opt_(opt),
        comm_(opt.comm ? *opt.comm : single_process()),
        dir_(opt.out_dir),
        console_(opt.log, opt.progress_bar),
        budget_(0, 0, 0) {
    if (opt.out_dir.empty()) throw ValueError("train: an output directory (--out DIR) is required");
    std::error_code ec;
    if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
      throw IoError("output directory '" + dir_.string() + "' is a file, not a directory");
    // Rank 0 owns the directory: a directory in use by another run is refused before
    // anything in it is read or changed.
    if (comm_.is_root() && fs::exists(dir_)) lock_ = RunLock(dir_);
    nlohmann::json config = config_in;
    nlohmann::json resume_from;
    const fs::path last = dir_ / "last.json";
    if (opt.resume) {
      if (!fs::exists(last))
        throw IoError("--resume: '" + last.string() + "' does not exist (nothing to resume in '" + dir_.string() + "')");
      resume_from = read_checkpoint(last.string());
      config = resumed_config(config, resume_from, last.string());
    } else if (comm_.is_root() && fs::exists(dir_) && holds_run(dir_)) {
      if (!opt.force)
        throw IoError("output directory '" + dir_.string() +
                      "' already holds a run; use --resume to continue it or --force to overwrite it");
      clear_run(dir_);
    }
    rc_ = parse_run_config(config);
    const TrainConfig& t = rc_.train;
    try {
      rows_per_rank(comm_, t.batch);
    } catch (const ConfigError& e) {
      throw ConfigError((opt.resume ? "--resume: " : "") + std::string(e.what()));
    }
    set_num_threads(t.threads);
    const nlohmann::json* vocab = opt.resume ? &resume_from.at("vocab") : nullptr;
    task_ = tasks::make_task({rc_.data.section, opt.data_dir, vocab, last.string()});
    model_ = models::make_model<float>(rc_.model, task_->input_vocab(), t.seed, task_->classes());
    training_ = task_->start_training(rc_.task_settings(), *model_);
    check_pins(*model_, t.pins);
    optimizer_ = optim::make_optimizer<float>(t.optimizer, model_->parameters(), t.optimizer_options);
    schedule_ = std::make_unique<optim::Schedule>(optim::make_schedule(t.schedule, t.lr, t.warmup, t.steps, t.min_lr_frac));
    budget_ = TimeBudget(t.time_budget_s, t.warmup, t.steps);
    // The resolved configuration, with the model's defaults filled in.
    resolved_ = rc_.resolved();
    resolved_["model"] = model_->config();
    if (comm_.is_root() && !lock_.held()) lock_ = RunLock(dir_);  // creates the directory
    if (opt.resume) {
      restore(resume_from, last.string());
    } else if (comm_.is_root()) {
      write_json_atomic((dir_ / "config.json").string(), resolved_);
    }
  }

  TrainResult train() {
    const TrainConfig& t = rc_.train;
    TrainResult r;
    r.parameters = model_->parameter_count();
    console_.say("model " + model_->type() + ": " + std::to_string(r.parameters) + " parameters; data " +
                 task_->describe() + (step_ > 0 ? "; resuming at step " + std::to_string(step_) : ""));
    MetricsLog metrics(dir_ / "metrics.jsonl", comm_.is_root());  // rank 0 alone logs
    t0_ = Clock::now();
    int64_t tokens_this_segment = 0;
    model_->set_training(true);
    for (; step_ < t.steps && !stopped_early_; ++step_) {
      const auto step_start = Clock::now();
      const double lr = budget_.lr(*schedule_, step_);

      // The batch: every rank draws the global batch (the draws stay identical) and
      // trains on its rows; recurrent state carries over when the task says so.
      if (const std::string note = training_->before_step(*model_, step_); !note.empty())
        console_.say("step " + std::to_string(step_) + ": " + note);
      const data::Batch global = training_->next();
      const data::Batch batch = take_rows(comm_, global);
      const bool carry = model_->recurrent() && training_->carries_state();
      if (carry && batch.starts_new_pass) train_state_.clear();
      // Dropout masks follow (seed, step), so a resumed run draws the same ones.
      // Ranks after the first draw their own masks (a different, equally valid draw).
      model_->begin_step((t.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(step_)) ^
                         (static_cast<uint64_t>(comm_.rank()) * 0xD1B54A32D192ED03ULL));

      // The step, with the ranks' collectives between its parts.
      double count = 0, allreduce_seconds = 0;
      apply_pins(*model_, t.pins, step_);
      const StepOutcome outcome = train_step(*model_, *optimizer_, batch, carry ? &train_state_ : nullptr, lr, t.clip,
                                             rank_hooks(batch, count, allreduce_seconds));
      apply_pins(*model_, t.pins, step_);
      budget_.add(seconds_since(step_start));
      if (budget_.on()) comm_.max({&budget_.train_seconds(), 1});  // one clock for the schedule on every rank
      const bool time_up = budget_.used_up();
      tokens_this_segment += global.B * global.T;
      const int64_t done = step_ + 1;

      // The log window.
      metrics.add_step(outcome.loss, global.B * global.T, count, allreduce_seconds);
      if (done % t.log_interval == 0 || done == t.steps || time_up) {
        const MetricsLog::Window w =
            metrics.close_window(done, lr, outcome.grad_norm, elapsed_before_ + seconds_since(t0_), comm_.size() > 1, *training_);
        const double eta = budget_.on() ? std::max(0.0, budget_.seconds_left())
                                        : static_cast<double>(t.steps - done) * w.seconds / static_cast<double>(w.steps);
        console_.progress(done, t.steps, w.mean_loss, w.metric.name, w.metric.value, w.tokens_per_second, eta);
      }
      auto report = [&](double criterion) {
        if (opt_.on_step) opt_.on_step(StepReport{done, t.steps, outcome.loss, lr, outcome.grad_norm, criterion});
      };

      // The time budget is used up: the final evaluation follows the loop.
      if (time_up) {
        report(-1);
        ++step_;
        break;
      }
      // An interim evaluation, best.json and last.json.
      double criterion = -1;
      if (done % t.eval_interval == 0 && done != t.steps) criterion = evaluate_and_save(done, metrics);
      report(criterion);
      // Early stopping: the final evaluation follows.
      if (best_.patience_spent(t.patience)) {
        stopped_early_ = true;
        ++step_;
        console_.say("no new best " + task_->criterion_name() + " in " + std::to_string(t.patience) +
                     " evaluations: stopping early at step " + std::to_string(step_) + " (best at step " +
                     std::to_string(best_.step()) + ")");
        break;
      }
      // A stop request (a signal, the on_step callback, --stop-at): last.json, then return.
      if (any(comm_, opt_.stop && opt_.stop->load()) || (opt_.stop_at > 0 && done >= opt_.stop_at && done < t.steps)) {
        ++step_;
        gather_state();
        save_checkpoint("last.json", step_);
        console_.end_progress();
        console_.say("stopped at step " + std::to_string(step_) + "; last.json written; continue with --resume");
        r.interrupted = true;
        r.steps_done = step_;
        return r;
      }
    }
    console_.end_progress();
    gather_state();
    r.steps_done = step_;  // t.steps, or fewer when the time budget ran out or the run stopped early
    if (!comm_.is_root()) return r;  // rank 0 alone evaluates and writes the final checkpoints
    finish(r, metrics, tokens_this_segment);
    return r;
  }

 private:
  // The final evaluation: the final model's scores, best.json if it is the best,
  // last.json, the task's report (with the best checkpoint's model when that is another
  // one) and result.json.
  void finish(TrainResult& r, MetricsLog& metrics, int64_t tokens_this_segment) {
    const int64_t steps_done = step_;
    const tasks::Scores final_scores = training_->final_scores(*model_, steps_done);
    metrics.write_evaluation(steps_done, final_scores.log);
    if (!final_scores.message.empty()) console_.say("step " + std::to_string(steps_done) + ": " + final_scores.message);
    if (best_.offer_final(final_scores.criterion, steps_done)) save_checkpoint("best.json", steps_done);
    save_checkpoint("last.json", steps_done);
    LoadedModel best;  // best.json's model, loaded only when the task asks for it
    const tasks::BestModel best_model = [&]() -> models::Model<float>* {
      if (best_.step() == steps_done) return nullptr;
      if (!best.model) best = load_model((dir_ / "best.json").string(), opt_.data_dir);
      return best.model.get();
    };
    const tasks::Report report = training_->report(*model_, best_model, best_.criterion());

    r.best_step = best_.step();
    r.stopped_early = stopped_early_;
    r.seconds = seconds_since(t0_) + elapsed_before_;
    r.tokens_per_second = static_cast<double>(tokens_this_segment) / std::max(seconds_since(t0_), 1e-9);
    r.scores = report.result;
    r.headline = report.headline;
    nlohmann::json result = report.result;
    result.update(nlohmann::json{{"model", model_->type()},
                                 {"parameters", r.parameters},
                                 {"steps", r.steps_done},
                                 {"tokens_seen", training_->positions_trained(r.steps_done)},
                                 {"best_step", r.best_step},
                                 {"stopped_early", r.stopped_early},
                                 {"wall_seconds", r.seconds},
                                 {"tokens_per_second", r.tokens_per_second},
                                 {"train_seconds", budget_.train_seconds()},
                                 {"threads", rc_.train.threads},
                                 {"config", resolved_}});
    write_json_atomic((dir_ / "result.json").string(), result);
    console_.say("finished after " + std::to_string(r.steps_done) + " steps (" + format_duration(r.seconds) +
                 ", best checkpoint at step " + std::to_string(r.best_step) + "); " + report.summary);
  }

  // The step's collectives: the loss and the task's count summed over the ranks, the
  // gradients averaged before clipping (pinned ones zeroed), and the rank that reports
  // a non-finite value.
  StepHooks rank_hooks(const data::Batch& batch, double& count, double& allreduce_seconds) {
    StepHooks hooks;
    hooks.forward = [this](models::Model<float>& model, const data::Batch& b, models::RecurrentState<float>* state) {
      return training_->forward(model, b, state);
    };
    hooks.loss = [this](const ag::Varf& logits, const data::Batch& b) { return training_->loss(logits, b); };
    hooks.reduce_loss = [this, &batch, &count](const Array<float>& logits, double local_loss) {
      // The global batch's loss: the mean of the ranks' (their shares are of equal size).
      double sums[2] = {local_loss, training_->count(logits, batch)};
      comm_.sum(sums);
      count = sums[1];
      return sums[0] / comm_.size();
    };
    hooks.reduce_gradients = [this, &allreduce_seconds] {
      const auto reduce_start = Clock::now();
      average_gradients(comm_, model_->parameters(), grad_buffer_);
      allreduce_seconds = seconds_since(reduce_start);
      zero_pinned_gradients(*model_, rc_.train.pins, step_);  // a pinned gradient is not in the clip norm
    };
    hooks.non_finite = [this](const char* what, double value) { fail_non_finite(what, value); };
    return hooks;
  }

  // An interim evaluation on rank 0, its criterion shared with every rank, which keep
  // the same books; best.json when it is a new best, and last.json. Returns the criterion.
  double evaluate_and_save(int64_t done, MetricsLog& metrics) {
    double criterion = 0;
    gather_state();
    if (comm_.is_root()) {
      const tasks::Scores s = training_->validate(*model_, done);
      metrics.write_evaluation(done, s.log);
      console_.say("step " + std::to_string(done) + ": " + s.message);
      criterion = s.criterion;
    }
    comm_.broadcast({&criterion, 1});
    if (best_.offer(criterion, done)) save_checkpoint("best.json", done);
    save_checkpoint("last.json", done);
    return criterion;
  }

  // Called on every rank with this rank's value; the lowest rank whose own value is
  // not finite reports (rank 0 when none is), the others throw PeerFailure.
  [[noreturn]] void fail_non_finite(const char* what, double value) {
    console_.end_progress();
    const int first = first_rank_where(comm_, !std::isfinite(value));
    if (first != comm_.rank() && !(first < 0 && comm_.is_root())) throw PeerFailure("another rank stopped the run");
    std::ostringstream os;
    os << "non-finite " << what << " (" << value << ") at step " << step_ + 1 << "; stopped before the update";
    if (best_.any())
      os << "; " << (dir_ / "best.json").string() << " and last.json hold the last good evaluation (best step "
         << best_.step() << ")";
    else
      os << "; no checkpoint had been written yet";
    os << ". Try a lower train.lr or clipping (train.clip)";
    throw NumericError(os.str());
  }

  // The carried state of every lane, on rank 0, for the checkpoints (a collective).
  void gather_state() { saved_state_ = gather_lanes(comm_, train_state_.tensors); }

  // Rank 0 writes DIR/name (the state is the last gather_state()'s); the others do nothing.
  void save_checkpoint(const char* name, int64_t step) {
    if (!comm_.is_root()) return;
    nlohmann::json progress = best_.progress("best_" + task_->criterion_name());
    progress["elapsed_s"] = elapsed_before_ + seconds_since(t0_);
    progress.update(budget_.progress());
    write_json_atomic((dir_ / name).string(), training_checkpoint(resolved_, *task_, *training_, *model_, *optimizer_,
                                                                  saved_state_, step, progress));
  }

  void restore(const nlohmann::json& j, const std::string& source) {
    const Restored s = restore_training(j, source, *model_, *optimizer_, *training_);
    step_ = s.step;
    train_state_.clear();
    train_state_.tensors = lanes_of(comm_, s.carried, rc_.train.batch, source + " train_state");  // this rank's lanes
    best_.restore(s.progress, "best_" + task_->criterion_name());
    // An early-stopped run is finished: resuming it goes straight to the final evaluation.
    stopped_early_ = best_.patience_spent(rc_.train.patience);
    elapsed_before_ = s.progress.value("elapsed_s", 0.0);
    budget_.restore(s.progress);
    if (comm_.is_root()) truncate_metrics(dir_ / "metrics.jsonl", step_);
  }

  TrainOptions opt_;
  Communicator& comm_;  // the ranks of a data-parallel run (train/distributed.hpp)
  fs::path dir_;
  RunLock lock_;        // rank 0's, for the run's life
  Console console_;
  RunConfig rc_;
  nlohmann::json resolved_;
  std::unique_ptr<tasks::Task> task_;
  std::unique_ptr<models::Model<float>> model_;
  std::unique_ptr<tasks::TaskTraining> training_;
  std::unique_ptr<optim::Optimizer<float>> optimizer_;
  std::unique_ptr<optim::Schedule> schedule_;
  TimeBudget budget_;
  BestCheckpoint best_;
  models::RecurrentState<float> train_state_;  // this rank's lanes
  std::vector<Array<float>> saved_state_;      // every lane's, on rank 0 (gather_state)
  std::vector<float> grad_buffer_;             // average_gradients' scratch
  int64_t step_ = 0;
  bool stopped_early_ = false;
  double elapsed_before_ = 0;  // wall time of earlier segments of a resumed run
  Clock::time_point t0_ = Clock::now();
};

}  // namespace

TrainResult run_training(const nlohmann::json& config, const TrainOptions& options) {
  // Every rank sets up alone; a failure on any rank stops all of them before training.
  std::unique_ptr<Run> run;
  agree(options.comm ? *options.comm : single_process(), [&] { run = std::make_unique<Run>(config, options); });
  return run->train();
}

}  // namespace liegrad::train
