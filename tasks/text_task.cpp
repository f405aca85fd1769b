// The text language-modelling task (see text_task.hpp).
#include "tasks/text_task.hpp"

#include <cmath>
#include <cstdio>
#include <optional>

#include "core/errors.hpp"
#include "data/datasets.hpp"
#include "tasks/evaluate.hpp"
#include "tasks/vocab_record.hpp"

namespace liegrad::tasks {

namespace {

// The built-in corpora's vocabulary sizes, so that sizing a model (`liegrad params`,
// `liegrad bench`) needs no data on disk.
int64_t known_vocab_size(const std::string& dataset) {
  if (dataset == "tinyshakespeare") return 65;
  if (dataset == "ptb_char") return 50;
  return 0;
}

class TextTraining : public TaskTraining {
 public:
  TextTraining(const data::Corpus& corpus, const RunSettings& run, bool recurrent)
      : corpus_(corpus), run_(run), recurrent_(recurrent) {
    if (static_cast<int64_t>(corpus.train.size()) < run.seq_len + 2)
      throw ConfigError("train.seq_len: " + std::to_string(run.seq_len) + " is longer than the training split (" +
                        std::to_string(corpus.train.size()) + " symbols)");
    if (recurrent)
      sequential_.emplace(corpus_.train, run.batch, run.seq_len);
    else
      random_.emplace(corpus_.train, run.batch, run.seq_len, run.seed);
  }

  data::Batch next() override { return recurrent_ ? sequential_->next() : random_->next(); }
  bool carries_state() const override { return recurrent_; }

  WindowMetric window_metric(double mean_loss, double, int64_t) const override {
    return {"bpc", mean_loss / std::log(2.0)};
  }

  Scores validate(models::Model<float>& model, int64_t) override {
    const EvalResult val = evaluate_bpc(model, corpus_.val, run_.seq_len, run_.eval_tokens);
    return {val.bpc, {{"val_bpc", val.bpc}}, "validation BPC " + fixed4(val.bpc)};
  }

  Scores final_scores(models::Model<float>& model, int64_t) override {
    val_ = evaluate_bpc(model, corpus_.val, run_.seq_len);
    test_ = has_test() ? evaluate_bpc(model, corpus_.test, run_.seq_len) : EvalResult{};
    // The final model competes for best.json on the interim evaluations' measure.
    const double selection =
        run_.eval_tokens > 0 ? evaluate_bpc(model, corpus_.val, run_.seq_len, run_.eval_tokens).bpc : val_.bpc;
    return {selection, {{"val_bpc", val_.bpc}, {"test_bpc", test_.bpc}}, ""};
  }

  Report report(models::Model<float>&, const BestModel& best_model, double) override {
    // The best checkpoint over the whole splits (the final model's numbers when it is the best).
    EvalResult best_val = val_, best_test = test_;
    if (models::Model<float>* best = best_model()) {
      best_val = evaluate_bpc(*best, corpus_.val, run_.seq_len);
      if (has_test()) best_test = evaluate_bpc(*best, corpus_.test, run_.seq_len);
    }
    Report r;
    r.result = {{"val_bpc", val_.bpc},
                {"test_bpc", test_.bpc},
                {"best_val_bpc", best_val.bpc},
                {"test_bpc_at_best", best_test.bpc}};
    r.summary = "final model: validation BPC " + fixed4(val_.bpc) + ", test " + fixed4(test_.bpc) +
                "; best checkpoint: validation " + fixed4(best_val.bpc) + ", test " + fixed4(best_test.bpc);
    char line[96];
    std::snprintf(line, sizeof line, "val_bpc %.4f test_bpc %.4f", val_.bpc, test_.bpc);
    r.headline = line;
    return r;
  }

  int64_t positions_trained(int64_t steps) const override { return steps * run_.batch * run_.seq_len; }

  nlohmann::json data_position() const override {
    if (random_) return {{"random_batcher", random_->state()}};
    return {{"sequential_position", sequential_->position()}};
  }

  void set_data_position(const nlohmann::json& d) override {
    if (random_ && d.contains("random_batcher")) random_->set_state(d.at("random_batcher").get<std::string>());
    if (sequential_ && d.contains("sequential_position"))
      sequential_->set_position(d.at("sequential_position").get<int64_t>());
  }

 private:
  bool has_test() const { return corpus_.test.size() >= 2; }

  const data::Corpus& corpus_;
  RunSettings run_;
  bool recurrent_;
  std::optional<data::RandomWindowBatcher> random_;
  std::optional<data::SequentialBatcher> sequential_;
  EvalResult val_, test_;  // the final model's, for the report
};

class TextTask : public Task {
 public:
  explicit TextTask(const TaskSource& s)
      : Task(s.data.at("dataset").get<std::string>()),
        val_frac_(s.data.at("val_frac").get<double>()),
        test_frac_(s.data.at("test_frac").get<double>()),
        data_dir_(s.data_dir),
        source_(s.source) {
    if (s.vocab_record) {
      vocab_ = vocab_from_json(*s.vocab_record, s.source);
      vocab_known_ = true;
    }
  }

  int64_t input_vocab() const override {
    if (vocab_known_) return vocab_.size();
    if (const int64_t n = known_vocab_size(dataset())) return n;
    return corpus().vocab.size();
  }
  int64_t window(const RunSettings& run) const override { return run.seq_len; }
  std::string describe() const override {
    const data::Corpus& c = corpus();
    return c.name + " (" + std::to_string(c.train.size()) + " train symbols, vocabulary " +
           std::to_string(c.vocab.size()) + ")";
  }
  nlohmann::json vocab_record() const override { return vocab_to_json(vocab()); }
  const data::Vocab* text_vocab() const override { return &vocab(); }
  const std::vector<int32_t>* text_split(const std::string& split) override {
    const data::Corpus& c = corpus();
    return split == "train" ? &c.train : split == "val" ? &c.val : split == "test" ? &c.test : nullptr;
  }
  std::string criterion_name() const override { return "val_bpc"; }

  std::unique_ptr<TaskTraining> start_training(const RunSettings& run, const models::Model<float>& model) override {
    return std::make_unique<TextTraining>(corpus(), run, model.recurrent());
  }

  nlohmann::json evaluate(models::Model<float>& model, const RunSettings& run, const EvalRequest& request) override {
    std::vector<int32_t> stream;
    std::string source;
    if (const auto it = request.options.find("text"); it != request.options.end()) {
      source = it->second;
      const std::string text = data::read_file_bytes(source);
      try {
        stream = vocab().encode(text);
      } catch (const ValueError& e) {
        throw ValueError("'" + source + "' cannot be encoded with the checkpoint's vocabulary: " + e.what());
      }
    } else {
      stream = *text_split(request.split);
      source = dataset() + ":" + request.split;
    }
    const EvalResult r = evaluate_bpc(model, stream, run.seq_len);
    return {{"source", source}, {"bpc", r.bpc}, {"nats", r.nats_per_symbol}, {"predictions", r.predictions}};
  }

  void print_evaluation(const nlohmann::json& s, std::ostream& out) const override {
    char line[512];
    std::snprintf(line, sizeof line, "%s: %.4f BPC over %lld predictions\n", s.at("source").get<std::string>().c_str(),
                  s.at("bpc").get<double>(), static_cast<long long>(s.at("predictions").get<int64_t>()));
    out << line;
  }

 private:
  // The corpus, loaded on first use; its vocabulary must be the checkpoint's when the
  // task came from one.
  const data::Corpus& corpus() const {
    if (!corpus_) {
      corpus_ = data::load_corpus(dataset(), data_dir_, val_frac_, test_frac_);
      if (vocab_known_ && !(corpus_->vocab == vocab_))
        throw ValueError("the dataset's vocabulary differs from the checkpoint's; was it trained on " + dataset() + "?");
    }
    return *corpus_;
  }
  const data::Vocab& vocab() const { return vocab_known_ ? vocab_ : corpus().vocab; }

  double val_frac_, test_frac_;
  std::string data_dir_;
  std::string source_;
  data::Vocab vocab_;         // the checkpoint's, when vocab_known_
  bool vocab_known_ = false;
  mutable std::optional<data::Corpus> corpus_;
};

nlohmann::json parse_text_data(ConfigReader& d, const std::string& dataset) {
  const double val_frac = d.get_double("val_frac", 0.05, 0.0, 0.999);
  const double test_frac = d.get_double("test_frac", 0.05, 0.0, 0.999);
  if (val_frac <= 0) throw ConfigError("data.val_frac: must be > 0 (a validation split is needed)");
  return {{"dataset", dataset}, {"val_frac", val_frac}, {"test_frac", test_frac}};
}

}  // namespace

TaskSpec text_task_spec() {
  TaskSpec s;
  s.name = "text";
  s.claims = [](const std::string& d) { return d == "tinyshakespeare" || d == "ptb_char" || d.rfind("text:", 0) == 0; };
  s.datasets = "\"tinyshakespeare\", \"ptb_char\", \"text:<path>\"";
  s.suggestions = {"tinyshakespeare", "ptb_char"};
  s.parse_data = parse_text_data;
  s.make = [](const TaskSource& src) -> std::unique_ptr<Task> { return std::make_unique<TextTask>(src); };
  s.eval_options = {{"text", "FILE  score a text file instead of a split (every character in the vocabulary)"}};
  return s;
}

}  // namespace liegrad::tasks
