// A task: what a model reads, what it predicts and how it is scored, as one object the
// trainer, checkpoints and `liegrad eval` use without knowing which task it is.
// Every task kind is an entry of the task registry (tasks/registry.hpp), as every
// model type is an entry of the model registry: text language modelling
// (tasks/text_task.hpp) and group word problems (tasks/words_task.hpp) are built in;
// a new kind is its file plus one registration line.
//
// A Task is the definition (input symbols, output classes, the checkpoint's "vocab"
// record, evaluation); a TaskTraining is one training run's side of it: its batches and
// their position, its per-step counts, its interim and final evaluations and what it
// keeps in a checkpoint to resume exactly.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/var.hpp"
#include "core/array.hpp"
#include "data/batcher.hpp"
#include "data/vocab.hpp"
#include "models/model.hpp"

namespace liegrad::tasks {

// What a training run tells its task (the train section's keys a task may use).
struct RunSettings {
  int64_t batch = 32;
  int64_t seq_len = 128;    // the training window of text tasks
  uint64_t seed = 1;        // the run's seed: batches, evaluation sets
  int64_t eval_tokens = 0;  // validation symbols at interim evaluations; 0 = the whole split
};

// One evaluation as the trainer books it.
struct Scores {
  double criterion = 0;  // the selection measure of best.json, lower is better
  nlohmann::json log = nlohmann::json::object();  // the metrics.jsonl line's fields (the trainer adds "step")
  std::string message;   // a line for the progress log; "" = none
};

// The task's part of the run's end.
struct Report {
  nlohmann::json result = nlohmann::json::object();  // its fields of result.json
  std::string summary;   // one line for the progress log
  std::string headline;  // the short line `liegrad train` prints last ("val_bpc 1.52 test_bpc 1.50")
};

// The training metric of a log window besides the loss ("bpc", "acc").
struct WindowMetric {
  std::string name;
  double value = 0;
};

// The best checkpoint's model, loaded on demand (null when the final model is the best).
using BestModel = std::function<models::Model<float>*()>;

// "%.4f", for the tasks' log lines.
std::string fixed4(double v);

class TaskTraining {
 public:
  virtual ~TaskTraining() = default;

  // The next global batch (every rank draws it; each trains on its rows).
  virtual data::Batch next() = 0;
  // Called before every step with the step's index (a resumed run's first call has the
  // step it resumes at), on every rank: a task may change the model here at a step it
  // chooses (the words task's warm start). Returns a line for the log, "" for none.
  virtual std::string before_step(models::Model<float>& model, int64_t step) {
    (void)model, (void)step;
    return "";
  }
  // True when a recurrent model carries its state from one batch to the next (reset
  // when a batch starts_new_pass); false when every sequence starts from the initial state.
  virtual bool carries_state() const = 0;
  // The model's outputs (B,T,C) on this rank's `batch`, carrying `state` when given: by
  // default forward() on the batch's symbols; a task with real-valued inputs reads
  // batch.features through the model's ContinuousInput (models/capabilities.hpp).
  virtual ag::Varf forward(models::Model<float>& model, const data::Batch& batch,
                           models::RecurrentState<float>* state) const;
  // The step's loss from the model's outputs `logits` (B*T rows) on this rank's `batch`,
  // the mean over every position in nats; its gradient trains the model. The default is
  // the cross-entropy of batch.targets (the next symbol, the running product's class).
  virtual ag::Varf loss(const ag::Varf& logits, const data::Batch& batch) const;
  // A per-step count the trainer sums over the ranks and the log window (for example
  // correct predictions); logits (R,C) of this rank's rows, batch its rows.
  virtual double count(const Array<float>& logits, const data::Batch& batch) const { return 0; }
  // The metric logged for a window from its mean loss (nats), summed count and positions.
  virtual WindowMetric window_metric(double mean_loss, double count, int64_t positions) const = 0;

  // An interim evaluation after `step` steps.
  virtual Scores validate(models::Model<float>& model, int64_t step) = 0;
  // The final model's evaluation over the whole splits; its criterion competes for best.json.
  virtual Scores final_scores(models::Model<float>& model, int64_t step) = 0;
  // After final_scores and the checkpoints: result.json's task fields and the closing lines.
  // best_model() loads the best checkpoint's model on first call when it is not the final
  // one, else returns null (a task that does not score it never loads it);
  // best_criterion: its criterion.
  virtual Report report(models::Model<float>& model, const BestModel& best_model, double best_criterion) = 0;

  // Positions trained on after `steps` steps (result.json's tokens_seen).
  virtual int64_t positions_trained(int64_t steps) const = 0;
  // The checkpoint's "data_position" and the task's fields of its "progress", and back.
  virtual nlohmann::json data_position() const = 0;
  virtual void set_data_position(const nlohmann::json& position) = 0;
  virtual nlohmann::json progress() const { return nlohmann::json::object(); }
  virtual void restore_progress(const nlohmann::json& progress) {}
};

// What `liegrad eval` asks of a task.
struct EvalRequest {
  std::string split = "test";                   // "val" or "test"
  std::map<std::string, std::string> options;  // the task's own options given (TaskSpec::eval_options)

  // The task's own option `name` as given; "" when it was not.
  std::string option(const std::string& name) const;
  // The "sequences" option (--sequences, per length), a whole number >= 1; `fallback` when
  // not given. ValueError naming the text otherwise.
  int64_t sequences_option(int64_t fallback) const;
};

// "64,128,256" -> {64, 128, 256}: the comma-separated whole numbers of an option such as
// --lengths. An empty or non-integer item throws ValueError(bad_item), no item at all
// ValueError(no_item); check(v) sees each number and throws for one out of its range.
std::vector<int64_t> parse_length_list(const std::string& text, const std::string& bad_item,
                                       const std::string& no_item, const std::function<void(int64_t)>& check);

class Task {
 public:
  virtual ~Task() = default;

  const std::string& dataset() const { return dataset_; }
  // V: input symbols.
  virtual int64_t input_vocab() const = 0;
  // C: output classes of a classification task; 0 when the model predicts the next input
  // symbol (models::make_model's convention).
  virtual int64_t classes() const { return 0; }
  // The longest sequence of a training batch (`liegrad bench` draws batches of it).
  virtual int64_t window(const RunSettings& run) const = 0;
  // One phrase for the log: "tinyshakespeare (1003854 train symbols, vocabulary 65)".
  virtual std::string describe() const = 0;
  // The checkpoint's "vocab" record (docs/checkpoint.md).
  virtual nlohmann::json vocab_record() const = 0;
  // The text vocabulary when inputs are text (`liegrad sample`), else null.
  virtual const data::Vocab* text_vocab() const { return nullptr; }
  // A split ("train", "val", "test") of the text as symbol ids when inputs are text
  // (`liegrad probe`; a text task loads its corpus here), else null.
  virtual const std::vector<int32_t>* text_split(const std::string& split) { return nullptr; }
  // The name of the selection criterion: the checkpoint's progress key is "best_" + it.
  virtual std::string criterion_name() const = 0;

  // A training run of this task for `model` (loads the data it needs; ConfigError when
  // the run cannot be made, naming the key, e.g. a test length the model cannot read).
  virtual std::unique_ptr<TaskTraining> start_training(const RunSettings& run, const models::Model<float>& model) = 0;

  // `liegrad eval`: the scores of `model` as JSON, and their table for people.
  virtual nlohmann::json evaluate(models::Model<float>& model, const RunSettings& run, const EvalRequest& request) = 0;
  virtual void print_evaluation(const nlohmann::json& scores, std::ostream& out) const = 0;

 protected:
  explicit Task(std::string dataset) : dataset_(std::move(dataset)) {}

 private:
  std::string dataset_;
};

}  // namespace liegrad::tasks
