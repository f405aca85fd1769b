// The training loop (see trainer.hpp).
#include "train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/array_json.hpp"
#include "core/config.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "data/batcher.hpp"
#include "data/datasets.hpp"
#include "data/group_words.hpp"
#include "optim/optimizer.hpp"
#include "optim/schedule.hpp"
#include "train/checkpoint.hpp"
#include "train/distributed.hpp"
#include "train/evaluate.hpp"
#include "train/run_config.hpp"
#include "train/train_step.hpp"
#include "train/word_diagnosis.hpp"
#include "train/word_eval.hpp"

namespace liegrad::train {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string format_duration(double s) {
  char buf[32];
  const int64_t t = static_cast<int64_t>(s + 0.5);
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(t / 3600), static_cast<long long>(t / 60 % 60));
  else
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(t / 60), static_cast<long long>(t % 60));
  return buf;
}

// The files that mark a directory as holding a run.
bool holds_run(const fs::path& dir) {
  for (const char* f : {"config.json", "metrics.jsonl", "last.json", "best.json", "result.json"})
    if (fs::exists(dir / f)) return true;
  return false;
}

// One tensor of the checkpoint's "train_state" (core/array_json.hpp, key "values");
// a malformed one is an IoError, like the rest of a malformed checkpoint.
Array<float> train_state_from_json(const nlohmann::json& j, const std::string& what) {
  try {
    return array_from_json<float>(j, "values", what);
  } catch (const ValueError& e) {
    throw IoError(e.what());
  }
}

// Keeps only metrics lines up to `step` (after a resume, later lines belong to the
// lost part of the interrupted run and are recomputed) and drops final-evaluation
// lines (those with "test_bpc"), which the resumed run writes again.
void truncate_metrics(const fs::path& file, int64_t step) {
  if (!fs::exists(file)) return;
  std::ifstream in(file);
  std::string line, kept;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("step")) continue;
    if (j.at("step").get<int64_t>() <= step && !j.contains("test_bpc")) kept += line + "\n";
  }
  write_file_atomic(file.string(), kept);
}

class Run {
 public:
  Run(const nlohmann::json& config_in, const TrainOptions& opt)
      : opt_(opt), comm_(opt.comm ? *opt.comm : single_process()), dir_(opt.out_dir) {
    if (opt.out_dir.empty()) throw ValueError("train: an output directory (--out DIR) is required");
    std::error_code ec;
    if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
      throw IoError("output directory '" + dir_.string() + "' is a file, not a directory");
    nlohmann::json config = config_in;
    nlohmann::json resume_ckpt;
    if (opt.resume) {
      const fs::path last = dir_ / "last.json";
      if (!fs::exists(last))
        throw IoError("--resume: '" + last.string() + "' does not exist (nothing to resume in '" + dir_.string() + "')");
      resume_ckpt = read_checkpoint(last.string());
      nlohmann::json stored = resume_ckpt.at("config");
      // Only the step budget and the thread count may change on resume.
      if (!config.is_null()) {
        nlohmann::json a = stored, b = config;
        for (auto* x : {&a, &b})
          if (x->contains("train")) {
            (*x)["train"].erase("steps");
            (*x)["train"].erase("threads");
          }
        // Compare with every default filled in, the model's included.
        const auto task = word_task_of(stored, &resume_ckpt.at("vocab"), last.string());
        const int64_t V = task ? task->input_vocab() : vocab_from_json(resume_ckpt.at("vocab"), last.string()).size();
        const int64_t C = task ? task->classes() : 0;
        auto full = [V, C](const nlohmann::json& c) {
          nlohmann::json r = parse_run_config(c).resolved();
          r["model"] = models::make_model<float>(r["model"], V, 0, C)->config();
          return r;
        };
        if (full(a) != full(b))
          throw ConfigError("--resume: the given configuration differs from the one stored in '" + last.string() +
                            "' (only train.steps and train.threads may change)");
        stored["train"]["steps"] = parse_run_config(config).train.steps;
        stored["train"]["threads"] = parse_run_config(config).train.threads;
      }
      config = stored;
    } else if (comm_.is_root() && fs::exists(dir_) && holds_run(dir_)) {  // rank 0 owns the directory
      if (!opt.force)
        throw IoError("output directory '" + dir_.string() +
                      "' already holds a run; use --resume to continue it or --force to overwrite it");
      for (const char* f : {"config.json", "metrics.jsonl", "last.json", "best.json", "result.json"}) fs::remove(dir_ / f);
    }
    rc_ = parse_run_config(config);
    const TrainConfig& t = rc_.train;
    try {
      rows_per_rank(comm_, t.batch);
    } catch (const ConfigError& e) {
      throw ConfigError((opt.resume ? "--resume: " : "") + std::string(e.what()));
    }
    set_num_threads(t.threads);
    if (rc_.data.words()) {
      words_ = std::make_unique<data::WordTask>(data::word_group_of(rc_.data.dataset), rc_.data.inputs);
      model_ = models::make_model<float>(rc_.model, words_->input_vocab(), t.seed, words_->classes());
      try {  // before training: a transformer cannot read data.eval_lengths past its one-pass limit
        check_word_eval_lengths(*model_, rc_.data.eval_lengths, "data.eval_lengths");
      } catch (const ValueError& e) {
        throw ConfigError(e.what());
      }
    } else {
      corpus_ = data::load_corpus(rc_.data.dataset, opt.data_dir, rc_.data.val_frac, rc_.data.test_frac);
      if (static_cast<int64_t>(corpus_.train.size()) < t.seq_len + 2)
        throw ConfigError("train.seq_len: " + std::to_string(t.seq_len) + " is longer than the training split (" +
                          std::to_string(corpus_.train.size()) + " symbols)");
      model_ = models::make_model<float>(rc_.model, corpus_.vocab.size(), t.seed);
    }
    for (const ParamPin& pin : t.pins)
      if (!model_->find_parameter(pin.param)) {
        std::vector<std::string> names;
        for (const auto& p : model_->parameters()) names.push_back(p.name);
        const std::string near = nearest_word(pin.param, names);
        throw ConfigError("train.pin: the model has no parameter '" + printable(pin.param) + "'" +
                          (near.empty() ? "" : "; did you mean '" + near + "'?"));
      }
    optimizer_ = optim::make_optimizer<float>(t.optimizer, model_->parameters(), t.optimizer_options);
    schedule_ = std::make_unique<optim::Schedule>(optim::make_schedule(t.schedule, t.lr, t.warmup, t.steps, t.min_lr_frac));
    if (words_)
      word_batcher_ = std::make_unique<data::WordBatcher>(*words_, t.batch, rc_.data.min_len, rc_.data.max_len,
                                                          data::word_split_seed(t.seed, data::WordSplit::Train),
                                                          rc_.data.curriculum_steps);
    else if (model_->recurrent())
      seq_batcher_ = std::make_unique<data::SequentialBatcher>(corpus_.train, t.batch, t.seq_len);
    else
      rand_batcher_ = std::make_unique<data::RandomWindowBatcher>(corpus_.train, t.batch, t.seq_len, t.seed);
    // The resolved configuration, with the model's defaults filled in.
    resolved_ = rc_.resolved();
    resolved_["model"] = model_->config();
    if (comm_.is_root()) fs::create_directories(dir_, ec);
    if (ec) throw IoError("cannot create output directory '" + dir_.string() + "': " + ec.message());
    if (opt.resume) {
      restore(resume_ckpt);
    } else if (comm_.is_root()) {
      write_json_atomic((dir_ / "config.json").string(), resolved_);
    }
  }

  TrainResult train() {
    const TrainConfig& t = rc_.train;
    TrainResult r;
    r.parameters = model_->parameter_count();
    const std::string data_text =
        words_ ? rc_.data.dataset + " (words of length " + std::to_string(rc_.data.min_len) + ".." +
                     std::to_string(rc_.data.max_len) + ", " + std::to_string(words_->input_vocab()) + " input symbols, " +
                     std::to_string(words_->classes()) + " classes)"
               : corpus_.name + " (" + std::to_string(corpus_.train.size()) + " train symbols, vocabulary " +
                     std::to_string(corpus_.vocab.size()) + ")";
    say("model " + model_->type() + ": " + std::to_string(r.parameters) + " parameters; data " + data_text +
        (step_ > 0 ? "; resuming at step " + std::to_string(step_) : ""));
    std::ofstream metrics;  // rank 0 alone logs
    if (comm_.is_root()) metrics.open(dir_ / "metrics.jsonl", std::ios::app);
    t0_ = Clock::now();
    const auto t0 = t0_;
    auto window_start = Clock::now();
    double window_loss = 0, window_allreduce = 0;  // allreduce: seconds in average_gradients
    int64_t window_steps = 0, window_tokens = 0, window_correct = 0, tokens_total = 0;
    model_->set_training(true);
    for (; step_ < t.steps && !stopped_early_; ++step_) {
      const auto step_start = Clock::now();
      const double lr = current_lr();
      // Every rank draws the global batch (the batchers stay identical) and trains on its rows.
      const data::Batch global = words_ ? word_batcher_->next()
                                 : model_->recurrent() ? seq_batcher_->next()
                                                       : rand_batcher_->next();
      const data::Batch batch = take_rows(comm_, global);
      // Language models carry recurrent state across windows; words are independent.
      const bool carry = model_->recurrent() && !words_;
      if (carry && batch.starts_new_pass) train_state_.clear();
      // Dropout masks follow (seed, step), so a resumed run draws the same ones.
      // Ranks after the first draw their own masks (a different, equally valid draw).
      model_->begin_step((t.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(step_)) ^
                         (static_cast<uint64_t>(comm_.rank()) * 0xD1B54A32D192ED03ULL));
      StepHooks hooks;
      hooks.reduce_loss = [&](const Array<float>& logits, double local_loss) {
        // The global batch's loss: the mean of the ranks' (their shares are of equal size).
        double sums[2] = {local_loss, words_ ? static_cast<double>(count_correct(logits, batch.targets)) : 0.0};
        comm_.sum(sums);
        window_correct += static_cast<int64_t>(sums[1]);
        return sums[0] / comm_.size();
      };
      hooks.reduce_gradients = [&] {
        const auto reduce_start = Clock::now();
        average_gradients(comm_, model_->parameters(), grad_buffer_);
        window_allreduce += seconds_since(reduce_start);
        zero_pinned_gradients();  // a pinned parameter is frozen: its gradient is not in the clip norm
      };
      hooks.non_finite = [this](const char* what, double value) { fail_non_finite(what, value); };
      apply_pins();  // before the step (the forward sees the pinned value) and after (undoes the update)
      const StepOutcome outcome =
          train_step(*model_, *optimizer_, batch, carry ? &train_state_ : nullptr, lr, t.clip, hooks);
      apply_pins();
      const double loss_value = outcome.loss, norm = outcome.grad_norm;
      train_seconds_ += seconds_since(step_start);
      if (t.time_budget_s > 0) comm_.max({&train_seconds_, 1});  // one clock for the schedule on every rank
      const bool time_up = t.time_budget_s > 0 && train_seconds_ >= t.time_budget_s;
      tokens_total += global.B * global.T;
      tokens_seen_ += global.B * global.T;
      window_tokens += global.B * global.T;
      window_loss += loss_value;
      ++window_steps;
      const int64_t done = step_ + 1;
      if (done % t.log_interval == 0 || done == t.steps || time_up) {
        const double dt = seconds_since(window_start);
        const double tps = static_cast<double>(window_tokens) / std::max(dt, 1e-9);
        const double mean_loss = window_loss / static_cast<double>(window_steps);
        // Word tasks log the training accuracy over the window's positions instead of BPC.
        const double acc = static_cast<double>(window_correct) / static_cast<double>(std::max<int64_t>(window_tokens, 1));
        nlohmann::json line = {{"step", done},         {"loss", mean_loss},  {"bpc", mean_loss / std::log(2.0)},
                               {"lr", lr},             {"grad_norm", norm},  {"tokens_per_s", tps},
                               {"elapsed_s", elapsed_before_ + seconds_since(t0)}};
        if (comm_.size() > 1) line["allreduce_s"] = window_allreduce / static_cast<double>(window_steps);
        if (words_) {
          line.erase("bpc");
          line["acc"] = acc;
        }
        metrics << line.dump() << "\n" << std::flush;
        const double eta = t.time_budget_s > 0
                               ? std::max(0.0, t.time_budget_s - train_seconds_)
                               : static_cast<double>(t.steps - done) * dt / static_cast<double>(window_steps);
        progress(done, mean_loss, words_ ? acc : mean_loss / std::log(2.0), tps, eta);
        window_loss = 0;
        window_allreduce = 0;
        window_steps = 0;
        window_tokens = 0;
        window_correct = 0;
        window_start = Clock::now();
      }
      auto report = [&](double val_bpc) {
        if (opt_.on_step) opt_.on_step(StepReport{done, t.steps, loss_value, lr, norm, val_bpc});
      };
      if (time_up) {  // the time budget is used up: the final evaluation follows the loop
        report(-1);
        ++step_;
        break;
      }
      double val_bpc = -1;
      if (done % t.eval_interval == 0 && done != t.steps) val_bpc = evaluate_and_save(done, metrics);
      report(val_bpc);
      if (t.patience > 0 && evals_since_best_ >= t.patience) {  // early stop: the final evaluation follows
        stopped_early_ = true;
        ++step_;
        say("no new best validation BPC in " + std::to_string(t.patience) + " evaluations: stopping early at step " +
            std::to_string(step_) + " (best at step " + std::to_string(best_step_) + ")");
        break;
      }
      if (any(comm_, opt_.stop && opt_.stop->load()) || (opt_.stop_at > 0 && done >= opt_.stop_at && done < t.steps)) {
        ++step_;
        gather_state();
        save_checkpoint((dir_ / "last.json").string(), step_);
        end_progress();
        say("stopped at step " + std::to_string(step_) + "; last.json written; continue with --resume");
        r.interrupted = true;
        r.steps_done = step_;
        return r;
      }
    }
    end_progress();
    gather_state();
    if (!comm_.is_root()) {  // rank 0 alone evaluates and writes the final checkpoints
      r.steps_done = step_;
      return r;
    }
    if (words_) return finish_words(r, metrics, t0, tokens_total);
    // Final evaluation over the whole splits.
    const EvalResult val = evaluate_bpc(*model_, corpus_.val, t.seq_len);
    const EvalResult test = corpus_.test.size() >= 2 ? evaluate_bpc(*model_, corpus_.test, t.seq_len) : EvalResult{};
    const int64_t steps_done = step_;  // t.steps, or fewer when the time budget ran out
    metrics << nlohmann::json{{"step", steps_done}, {"val_bpc", val.bpc}, {"test_bpc", test.bpc}}.dump() << "\n" << std::flush;
    // The final model competes for best.json on the interim evaluations' measure.
    const double selection = t.eval_tokens > 0 ? evaluate_bpc(*model_, corpus_.val, t.seq_len, t.eval_tokens).bpc : val.bpc;
    if (best_step_ < 0 || selection < best_val_) {
      best_val_ = selection;
      best_step_ = steps_done;
      save_checkpoint((dir_ / "best.json").string(), steps_done);
    }
    save_checkpoint((dir_ / "last.json").string(), steps_done);
    // The best checkpoint over the whole splits (the final model's numbers when it is the best).
    EvalResult best_val = val, best_test = test;
    if (best_step_ != steps_done) {
      const LoadedModel best = load_model((dir_ / "best.json").string());
      best_val = evaluate_bpc(*best.model, corpus_.val, t.seq_len);
      if (corpus_.test.size() >= 2) best_test = evaluate_bpc(*best.model, corpus_.test, t.seq_len);
    }
    r.val_bpc = val.bpc;
    r.test_bpc = test.bpc;
    r.best_val_bpc = best_val.bpc;
    r.test_bpc_at_best = best_test.bpc;
    write_result(r, t0, tokens_total,
                 {{"val_bpc", r.val_bpc},
                  {"test_bpc", r.test_bpc},
                  {"best_val_bpc", r.best_val_bpc},
                  {"test_bpc_at_best", r.test_bpc_at_best}});
    say("validation BPC " + fixed(r.val_bpc) + ", test BPC " + fixed(r.test_bpc) + " after " +
        std::to_string(r.steps_done) + " steps (" + format_duration(r.seconds) + "); best checkpoint (step " +
        std::to_string(r.best_step) + "): validation " + fixed(r.best_val_bpc) + ", test " + fixed(r.test_bpc_at_best));
    return r;
  }

 private:
  // The end of a word-task run: validation at data.max_len, the test words at every
  // data.eval_lengths, the checkpoints and result.json.
  TrainResult finish_words(TrainResult r, std::ofstream& metrics, Clock::time_point t0, int64_t tokens_total) {
    const TrainConfig& t = rc_.train;
    const int64_t steps_done = step_;  // t.steps, or fewer when the time budget ran out
    const WordScores val = validate_words(steps_done, metrics);
    const std::vector<WordScores> test = evaluate_word_lengths(*model_, *words_, t.seed, data::WordSplit::Test,
                                                               rc_.data.eval_lengths, rc_.data.test_sequences);
    if (best_step_ < 0 || val.loss < best_val_) {
      best_val_ = val.loss;
      best_step_ = steps_done;
      save_checkpoint((dir_ / "best.json").string(), steps_done);
    }
    save_checkpoint((dir_ / "last.json").string(), steps_done);
    nlohmann::json tests = nlohmann::json::array();
    std::string summary;
    for (const auto& s : test) {
      tests.push_back(s.to_json());
      summary += (summary.empty() ? "" : ", ") + std::to_string(s.length) + ": " + fixed(s.position_acc);
    }
    const nlohmann::json reach = reach_99_step_ >= 0 ? nlohmann::json(reach_99_step_) : nlohmann::json();
    r.words = {{"val", val.to_json()}, {"test", tests}, {"steps_to_99", reach}};
    nlohmann::json extra = {{"task", rc_.data.dataset},
                            {"input_vocab", words_->input_vocab()},
                            {"classes", words_->classes()},
                            {"val", val.to_json()},
                            {"test", tests},
                            {"steps_to_99", reach},
                            {"best_val_loss", best_val_}};
    // The group-structure diagnosis (train/word_diagnosis.hpp) for OSM-RNN runs.
    if (const auto diagnosis = diagnose_word_model(*model_, *words_, t.seed, drift_lengths(rc_.data.eval_lengths),
                                                   kDriftWords)) {
      r.words["diagnosis"] = diagnosis->to_json();
      extra["diagnosis"] = diagnosis->to_json();
    }
    write_result(r, t0, tokens_total, extra);
    say("validation accuracy " + fixed(val.position_acc) + " at length " + std::to_string(val.length) +
        "; test accuracy by length: " + summary + " after " + std::to_string(steps_done) + " steps (" +
        format_duration(r.seconds) + ")");
    return r;
  }

  // The end of a run, of either kind: sets r's closing figures (steps, best step, times)
  // and writes result.json, those figures with the model, its size and the resolved
  // configuration beside the task's own (`own`: BPC for language models, accuracies for
  // word tasks).
  void write_result(TrainResult& r, Clock::time_point t0, int64_t tokens_total, nlohmann::json own) {
    const TrainConfig& t = rc_.train;
    r.steps_done = step_;  // t.steps, or fewer when the time budget ran out
    r.best_step = best_step_;
    r.stopped_early = stopped_early_;
    r.seconds = seconds_since(t0) + elapsed_before_;
    r.tokens_per_second = static_cast<double>(tokens_total) / std::max(seconds_since(t0), 1e-9);
    // Word lengths vary, so word tasks count (and checkpoint) the positions they trained on.
    const int64_t tokens_seen = words_ ? tokens_seen_ : r.steps_done * t.batch * t.seq_len;
    own.update(nlohmann::json{{"model", model_->type()},
                              {"parameters", r.parameters},
                              {"steps", r.steps_done},
                              {"tokens_seen", tokens_seen},
                              {"best_step", r.best_step},
                              {"stopped_early", r.stopped_early},
                              {"wall_seconds", r.seconds},
                              {"tokens_per_second", r.tokens_per_second},
                              {"train_seconds", train_seconds_},
                              {"threads", t.threads},
                              {"config", resolved_}});
    write_json_atomic((dir_ / "result.json").string(), own);
  }

  static std::string fixed(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4f", v);
    return b;
  }

  void say(const std::string& s) {
    if (!opt_.log) return;
    end_progress();
    *opt_.log << s << "\n" << std::flush;
  }

  // metric: BPC for language models, training accuracy for word tasks.
  void progress(int64_t done, double loss, double metric, double tps, double eta) {
    if (!opt_.log) return;
    const TrainConfig& t = rc_.train;
    const char* name = words_ ? "acc" : "bpc";
    char line[256];
    if (opt_.progress_bar) {
      const int width = 24;
      const int filled = static_cast<int>(width * done / t.steps);
      std::string bar(static_cast<size_t>(filled), '#');
      bar.resize(static_cast<size_t>(width), '.');
      std::snprintf(line, sizeof line, "\rstep %lld/%lld [%s] loss %.4f  %s %.4f  %.0f tok/s  ETA %s ",
                    static_cast<long long>(done), static_cast<long long>(t.steps), bar.c_str(), loss, name, metric,
                    tps, format_duration(eta).c_str());
      *opt_.log << line << std::flush;
      bar_open_ = true;
    } else {
      std::snprintf(line, sizeof line, "step %lld/%lld loss %.4f %s %.4f %.0f tok/s ETA %s",
                    static_cast<long long>(done), static_cast<long long>(t.steps), loss, name, metric, tps,
                    format_duration(eta).c_str());
      *opt_.log << line << "\n" << std::flush;
    }
  }

  void end_progress() {
    if (bar_open_ && opt_.log) *opt_.log << "\n";
    bar_open_ = false;
  }

  // Word tasks: scores on the validation words (length data.max_len), logged and noted
  // for steps_to_99.
  WordScores validate_words(int64_t done, std::ofstream& metrics) {
    const WordScores v = evaluate_words(
        *model_, data::word_eval_set(*words_, rc_.train.seed, data::WordSplit::Val, rc_.data.max_len, rc_.data.val_sequences));
    metrics << nlohmann::json{{"step", done}, {"val_loss", v.loss}, {"val_acc", v.position_acc},
                              {"val_seq_acc", v.sequence_acc}}.dump()
            << "\n" << std::flush;
    if (reach_99_step_ < 0 && v.position_acc >= 0.99) reach_99_step_ = done;
    say("step " + std::to_string(done) + ": validation loss " + fixed(v.loss) + ", accuracy " + fixed(v.position_acc) +
        " at length " + std::to_string(rc_.data.max_len));
    return v;
  }

  // Returns the selection criterion (validation BPC, or loss for word tasks).
  double evaluate_and_save(int64_t done, std::ofstream& metrics) {
    // The selection criterion, lower is better: validation BPC, or loss for word tasks.
    double criterion = 0;
    gather_state();
    if (!comm_.is_root()) {
      // Rank 0 evaluates; the other ranks keep the same books from its result.
    } else if (words_) {
      criterion = validate_words(done, metrics).loss;
    } else {
      const EvalResult val = evaluate_bpc(*model_, corpus_.val, rc_.train.seq_len, rc_.train.eval_tokens);
      metrics << nlohmann::json{{"step", done}, {"val_bpc", val.bpc}}.dump() << "\n" << std::flush;
      say("step " + std::to_string(done) + ": validation BPC " + fixed(val.bpc));
      criterion = val.bpc;
    }
    comm_.broadcast({&criterion, 1});
    if (best_step_ < 0 || criterion < best_val_) {
      best_val_ = criterion;
      best_step_ = done;
      evals_since_best_ = 0;
      save_checkpoint((dir_ / "best.json").string(), done);
    } else {
      ++evals_since_best_;
    }
    save_checkpoint((dir_ / "last.json").string(), done);
    return criterion;
  }

  // train.pin: the gradients of the parameters pinned at this step are zero, as for a
  // frozen tensor, so they neither enter the clipping norm nor move the optimizer's state.
  void zero_pinned_gradients() {
    for (const ParamPin& pin : rc_.train.pins) {
      if (step_ < pin.from_step) continue;
      auto* p = model_->find_parameter(pin.param);
      if (p->var.node() && p->var.requires_grad()) {
        Array<float>& g = p->var.node()->grad_ref();
        std::fill(g.data(), g.data() + g.size(), 0.0f);
      }
    }
  }

  // train.pin: hold each pinned parameter at its value from its from_step on.
  void apply_pins() {
    for (const ParamPin& pin : rc_.train.pins) {
      if (step_ < pin.from_step) continue;
      Array<float>& v = model_->find_parameter(pin.param)->var.value();
      std::fill(v.data(), v.data() + v.size(), static_cast<float>(pin.value));
    }
  }

  // The learning rate of step step_. With a time budget, the decay after warm-up runs
  // on the fraction f of the post-warm-up budget used so far: the schedule is read at the
  // step it would be at after f of its decay, so the lr reaches the floor as time runs out.
  double current_lr() {
    const TrainConfig& t = rc_.train;
    if (t.time_budget_s <= 0 || step_ < t.warmup) return schedule_->lr(step_);
    if (warmup_seconds_ < 0) warmup_seconds_ = train_seconds_;
    const double left = std::max(t.time_budget_s - warmup_seconds_, 1e-9);
    const double f = std::clamp((train_seconds_ - warmup_seconds_) / left, 0.0, 1.0);
    const int64_t decay_steps = std::max<int64_t>(t.steps - 1 - t.warmup, 0);
    return schedule_->lr(t.warmup + std::llround(f * static_cast<double>(decay_steps)));
  }

  // Called on every rank with this rank's value; the lowest rank whose own value is
  // not finite reports (rank 0 when none is), the others throw PeerFailure.
  [[noreturn]] void fail_non_finite(const char* what, double value) {
    end_progress();
    const int first = first_rank_where(comm_, !std::isfinite(value));
    if (first != comm_.rank() && !(first < 0 && comm_.is_root())) throw PeerFailure("another rank stopped the run");
    std::ostringstream os;
    os << "non-finite " << what << " (" << value << ") at step " << step_ + 1 << "; stopped before the update";
    if (best_step_ >= 0)
      os << "; " << (dir_ / "best.json").string() << " and last.json hold the last good evaluation (best step "
         << best_step_ << ")";
    else
      os << "; no checkpoint had been written yet";
    os << ". Try a lower train.lr or clipping (train.clip)";
    throw NumericError(os.str());
  }

  // The carried state of every lane, on rank 0, for the checkpoints (a collective).
  void gather_state() { saved_state_ = gather_lanes(comm_, train_state_.tensors); }

  // Rank 0 writes (the state is the last gather_state()'s); the other ranks do nothing.
  void save_checkpoint(const std::string& path, int64_t step) {
    if (!comm_.is_root()) return;
    // resolved_["model"] is model_->config() already, as checkpoint_json sets it.
    nlohmann::json j =
        checkpoint_json(resolved_, words_ ? word_vocab_to_json(*words_) : vocab_to_json(corpus_.vocab), *model_, step);
    j["optimizer"] = optimizer_->state_to_json();
    nlohmann::json data;
    if (rand_batcher_) data["random_batcher"] = rand_batcher_->state();
    if (seq_batcher_) data["sequential_position"] = seq_batcher_->position();
    if (word_batcher_) data["word_batcher"] = word_batcher_->state();
    j["data_position"] = data;
    nlohmann::json state = nlohmann::json::array();
    for (const auto& a : saved_state_) state.push_back(array_to_json(a, "values"));
    j["train_state"] = state;
    j["progress"] = {{best_key(), best_step_ >= 0 ? nlohmann::json(best_val_) : nlohmann::json()},
                     {"best_step", best_step_},
                     {"evals_since_best", evals_since_best_},
                     {"elapsed_s", elapsed_before_ + seconds_since(t0_)},
                     {"train_seconds", train_seconds_},
                     {"warmup_seconds", warmup_seconds_}};
    if (words_) {
      j["progress"]["steps_to_99"] = reach_99_step_;
      j["progress"]["tokens_seen"] = tokens_seen_;
    }
    write_json_atomic(path, j);
  }

  void restore(const nlohmann::json& j) {
    const std::string src = (dir_ / "last.json").string();
    parameters_from_json(*model_, j.at("parameters"), src);
    if (j.contains("optimizer")) optimizer_->state_from_json(j.at("optimizer"));
    step_ = j.at("step").get<int64_t>();
    const auto& d = j.value("data_position", nlohmann::json::object());
    if (rand_batcher_ && d.contains("random_batcher")) rand_batcher_->set_state(d.at("random_batcher").get<std::string>());
    if (seq_batcher_ && d.contains("sequential_position"))
      seq_batcher_->set_position(d.at("sequential_position").get<int64_t>());
    if (word_batcher_ && d.contains("word_batcher")) word_batcher_->set_state(d.at("word_batcher").get<std::string>());
    train_state_.clear();
    std::vector<Array<float>> whole;
    for (const auto& a : j.value("train_state", nlohmann::json::array()))
      whole.push_back(train_state_from_json(a, src + " train_state"));
    train_state_.tensors = lanes_of(comm_, whole, rc_.train.batch, src + " train_state");  // this rank's lanes
    const auto& p = j.value("progress", nlohmann::json::object());
    best_step_ = p.value("best_step", int64_t{-1});
    if (best_step_ >= 0) best_val_ = p.at(best_key()).get<double>();
    // An early-stopped run is finished: resuming it goes straight to the final evaluation.
    evals_since_best_ = p.value("evals_since_best", int64_t{0});
    stopped_early_ = rc_.train.patience > 0 && evals_since_best_ >= rc_.train.patience;
    reach_99_step_ = p.value("steps_to_99", int64_t{-1});
    tokens_seen_ = p.value("tokens_seen", int64_t{0});
    elapsed_before_ = p.value("elapsed_s", 0.0);
    train_seconds_ = p.value("train_seconds", 0.0);
    warmup_seconds_ = p.value("warmup_seconds", -1.0);
    if (comm_.is_root()) truncate_metrics(dir_ / "metrics.jsonl", step_);
  }

  // The checkpoint's progress key of the best validation value.
  const char* best_key() const { return words_ ? "best_val_loss" : "best_val_bpc"; }

  TrainOptions opt_;
  Communicator& comm_;  // the ranks of a data-parallel run (train/distributed.hpp)
  fs::path dir_;
  RunConfig rc_;
  nlohmann::json resolved_;
  data::Corpus corpus_;
  std::unique_ptr<models::Model<float>> model_;
  std::unique_ptr<optim::Optimizer<float>> optimizer_;
  std::unique_ptr<optim::Schedule> schedule_;
  std::unique_ptr<data::RandomWindowBatcher> rand_batcher_;
  std::unique_ptr<data::SequentialBatcher> seq_batcher_;
  std::unique_ptr<data::WordTask> words_;          // group word tasks only
  std::unique_ptr<data::WordBatcher> word_batcher_;
  int64_t reach_99_step_ = -1;  // words: first evaluation step with validation accuracy >= 0.99
  int64_t tokens_seen_ = 0;     // positions trained on, all segments (words have varying lengths)
  models::RecurrentState<float> train_state_;   // this rank's lanes
  std::vector<Array<float>> saved_state_;       // every lane's, on rank 0 (gather_state)
  std::vector<float> grad_buffer_;              // average_gradients' scratch
  int64_t step_ = 0;
  double best_val_ = 0;
  int64_t best_step_ = -1;
  int64_t evals_since_best_ = 0;  // interim evaluations since the last new best (train.patience)
  bool stopped_early_ = false;
  double elapsed_before_ = 0;  // wall time of earlier segments of a resumed run
  double train_seconds_ = 0;   // time spent in training steps, all segments (train.time_budget_s)
  double warmup_seconds_ = -1;  // train_seconds_ when warm-up ended; -1 before
  Clock::time_point t0_ = Clock::now();
  bool bar_open_ = false;
};

}  // namespace

TrainResult run_training(const nlohmann::json& config, const TrainOptions& options) {
  // Every rank sets up alone; a failure on any rank stops all of them before training.
  std::unique_ptr<Run> run;
  agree(options.comm ? *options.comm : single_process(), [&] { run = std::make_unique<Run>(config, options); });
  return run->train();
}

}  // namespace liegrad::train
