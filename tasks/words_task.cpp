// The group word task (see words_task.hpp).
#include "tasks/words_task.hpp"

#include <cstdio>

#include "core/errors.hpp"
#include "tasks/word_diagnosis.hpp"
#include "tasks/word_eval.hpp"
#include "tasks/word_warm_start.hpp"

namespace liegrad::tasks {

namespace {

// The data section of a words run, resolved.
struct WordsData {
  std::string inputs = "all";
  // The generators of inputs "generators", the alphabet curriculum and the warm start:
  // "standard" or "coxeter" (S<n>'s adjacent transpositions; data/finite_group.hpp).
  std::string generating_set = "standard";
  int64_t min_len = 1, max_len = 64;
  // Over the first curriculum_steps batches the longest drawn length grows linearly
  // from min_len to max_len (data/group_words.hpp); 0 = off.
  int64_t curriculum_steps = 0;
  // An alphabet curriculum (inputs "all" only): the first generator_steps batches are
  // words in the standard generators, the rest words in every element; 0 = off.
  int64_t generator_steps = 0;
  // Then over generator_ramp batches the share of symbols drawn from every element
  // grows linearly to 1 (data/group_words.hpp); 0 = the change is at once.
  int64_t generator_ramp = 0;
  // And a second length curriculum of handover_curriculum_steps batches from the
  // alphabet phase's end, so the new elements are first met in short words; 0 = off.
  int64_t handover_curriculum_steps = 0;
  // At the alphabet phase's end, set every element's transition to the product of the
  // generators' along its word (tasks/word_warm_start.hpp); false = off.
  bool handover_warm_start = false;
  std::vector<int64_t> eval_lengths = {64, 128, 256, 512, 1024};
  int64_t val_sequences = 256;
  int64_t test_sequences = 100;

  explicit WordsData(const nlohmann::json& j)
      : inputs(j.at("inputs").get<std::string>()),
        generating_set(j.value("generating_set", std::string("standard"))),
        min_len(j.at("min_len").get<int64_t>()),
        max_len(j.at("max_len").get<int64_t>()),
        curriculum_steps(j.value("curriculum_steps", int64_t{0})),
        generator_steps(j.value("generator_steps", int64_t{0})),
        generator_ramp(j.value("generator_ramp", int64_t{0})),
        handover_curriculum_steps(j.value("handover_curriculum_steps", int64_t{0})),
        handover_warm_start(j.value("handover_warm_start", false)),
        eval_lengths(j.at("eval_lengths").get<std::vector<int64_t>>()),
        val_sequences(j.at("val_sequences").get<int64_t>()),
        test_sequences(j.at("test_sequences").get<int64_t>()) {}
  WordsData() = default;

  nlohmann::json resolved(const std::string& dataset) const {
    nlohmann::json j = {{"dataset", dataset},         {"inputs", inputs},
                        {"min_len", min_len},         {"max_len", max_len},
                        {"eval_lengths", eval_lengths}, {"val_sequences", val_sequences},
                        {"test_sequences", test_sequences}};
    if (generating_set != "standard") j["generating_set"] = generating_set;  // only when set: older runs resolve as before
    if (curriculum_steps > 0) j["curriculum_steps"] = curriculum_steps;
    if (generator_steps > 0) j["generator_steps"] = generator_steps;
    if (generator_ramp > 0) j["generator_ramp"] = generator_ramp;
    if (handover_curriculum_steps > 0) j["handover_curriculum_steps"] = handover_curriculum_steps;
    if (handover_warm_start) j["handover_warm_start"] = true;
    return j;
  }
};

nlohmann::json parse_words_data(ConfigReader& d, const std::string& dataset) {
  WordsData c;
  c.inputs = d.get_string("inputs", c.inputs, {"all", "generators"});
  c.generating_set = d.get_string("generating_set", c.generating_set, {"standard", "coxeter", "no_involutions"});
  std::string group;
  try {
    group = data::word_group_of(dataset);
    data::WordTask(group, c.inputs);
  } catch (const ValueError& e) {
    throw ConfigError("data.dataset: " + std::string(e.what()));
  }
  try {
    data::WordTask(group, c.inputs, c.generating_set);
  } catch (const ValueError& e) {
    throw ConfigError("data.generating_set: " + std::string(e.what()));
  }
  c.min_len = d.get_int("min_len", c.min_len, 1, data::kMaxWordLength);
  c.max_len = d.get_int("max_len", c.max_len, 1, data::kMaxWordLength);
  if (c.min_len > c.max_len)
    throw ConfigError("data.min_len: " + std::to_string(c.min_len) + " is above data.max_len = " +
                      std::to_string(c.max_len));
  if (d.has("eval_lengths")) {
    const nlohmann::json& v = d.json().at("eval_lengths");
    if (!v.is_array() || v.empty())
      throw ConfigError("data.eval_lengths: expected a non-empty array of word lengths, e.g. [64, 128], got " + v.dump());
    c.eval_lengths.clear();
    for (const auto& x : v) {
      if (!x.is_number_integer()) throw ConfigError("data.eval_lengths: expected integer lengths, got " + x.dump());
      try {
        data::check_eval_word_length(x.get<int64_t>(), "data.eval_lengths");
      } catch (const ValueError& e) {
        throw ConfigError(e.what());
      }
      c.eval_lengths.push_back(x.get<int64_t>());
    }
  }
  d.allow({"eval_lengths"});
  c.curriculum_steps = d.get_int("curriculum_steps", c.curriculum_steps, 0);
  c.generator_steps = d.get_int("generator_steps", c.generator_steps, 0);
  if (c.generator_steps > 0 && c.inputs != "all")
    throw ConfigError("data.generator_steps: an alphabet curriculum needs data.inputs = \"all\" (the words are "
                      "already in the generators with \"" + c.inputs + "\")");
  if (c.generating_set != "standard" && c.inputs == "all" && c.generator_steps == 0)
    throw ConfigError("data.generating_set: \"" + c.generating_set + "\" has no effect with data.inputs \"all\" "
                      "unless data.generator_steps > 0 (the alphabet curriculum draws from it)");
  c.generator_ramp = d.get_int("generator_ramp", c.generator_ramp, 0);
  if (c.generator_ramp > 0 && c.generator_steps == 0)
    throw ConfigError("data.generator_ramp: a ramp out of the alphabet curriculum needs data.generator_steps > 0");
  c.handover_curriculum_steps = d.get_int("handover_curriculum_steps", c.handover_curriculum_steps, 0);
  if (c.handover_curriculum_steps > 0 && c.generator_steps == 0)
    throw ConfigError("data.handover_curriculum_steps: a length curriculum from the alphabet curriculum's end needs "
                      "data.generator_steps > 0");
  c.handover_warm_start = d.get_bool("handover_warm_start", c.handover_warm_start);
  if (c.handover_warm_start && c.generator_steps == 0)
    throw ConfigError("data.handover_warm_start: a warm start at the alphabet curriculum's end needs "
                      "data.generator_steps > 0");
  c.val_sequences = d.get_int("val_sequences", c.val_sequences, 1, 1000000);
  c.test_sequences = d.get_int("test_sequences", c.test_sequences, 1, 1000000);
  return c.resolved(dataset);
}

// --lengths "64,128,256" -> {64, 128, 256}; each length checked against the generator's limit.
std::vector<int64_t> parse_word_lengths(const std::string& text) {
  return parse_length_list(text, "--lengths expects integers separated by commas, got '" + text + "'",
                           "--lengths expects at least one length",
                           [](int64_t v) { data::check_eval_word_length(v, "--lengths"); });
}

class WordsTraining : public TaskTraining {
 public:
  WordsTraining(const data::WordTask& task, const WordsData& d, const RunSettings& run)
      : task_(task),
        data_(d),
        run_(run),
        batcher_(task, run.batch, d.min_len, d.max_len, data::word_split_seed(run.seed, data::WordSplit::Train),
                 data::WordSchedule{d.curriculum_steps, d.generator_steps, d.generator_ramp,
                                    d.handover_curriculum_steps}) {}

  data::Batch next() override {
    data::Batch b = batcher_.next();
    positions_ += b.B * b.T;  // word lengths vary, so the positions trained on are counted
    return b;
  }
  bool carries_state() const override { return false; }  // words are independent
  // The warm start (data.handover_warm_start) before the first step after the alphabet
  // phase; at the first call of a run, whether the model can take it (ConfigError early).
  std::string before_step(models::Model<float>& model, int64_t step) override {
    if (!data_.handover_warm_start) return "";
    models::GroupStateReadout<float>* readout = model.group_state_readout();
    if (!readout || !readout->state_independent())
      throw ConfigError("data.handover_warm_start: needs a model whose step multiplies the state by one transition "
                        "per symbol (the OSM-RNN with rnn_drive \"element\"), not " + model.type());
    if (!warm_start_checked_) {
      readout->set_transitions({}, Array<float>(Shape{0}));  // throws ConfigError when they cannot be set
      warm_start_checked_ = true;
    }
    if (step != data_.generator_steps) return "";
    return warm_start_from_generators(task_, *readout);
  }
  double count(const Array<float>& logits, const data::Batch& batch) const override {
    return static_cast<double>(count_correct(logits, batch.targets));
  }
  // The training accuracy over the window's positions.
  WindowMetric window_metric(double, double count, int64_t positions) const override {
    return {"acc", count / static_cast<double>(std::max<int64_t>(positions, 1))};
  }

  Scores validate(models::Model<float>& model, int64_t step) override {
    const WordScores v = evaluate_words(
        model, data::word_eval_set(task_, run_.seed, data::WordSplit::Val, data_.max_len, data_.val_sequences));
    if (reach_99_step_ < 0 && v.position_acc >= 0.99) reach_99_step_ = step;
    val_ = v;
    return {v.loss,
            {{"val_loss", v.loss}, {"val_acc", v.position_acc}, {"val_seq_acc", v.sequence_acc}},
            "validation loss " + fixed4(v.loss) + ", accuracy " + fixed4(v.position_acc) + " at length " +
                std::to_string(data_.max_len)};
  }

  Scores final_scores(models::Model<float>& model, int64_t step) override {
    Scores s = validate(model, step);
    test_ = evaluate_word_lengths(model, task_, run_.seed, data::WordSplit::Test, data_.eval_lengths,
                                  data_.test_sequences);
    return s;
  }

  Report report(models::Model<float>& model, const BestModel&, double best_criterion) override {
    nlohmann::json tests = nlohmann::json::array();
    std::string summary, headline = "val_acc " + fixed4(val_.position_acc);
    for (const auto& s : test_) {
      tests.push_back(s.to_json());
      summary += (summary.empty() ? "" : ", ") + std::to_string(s.length) + ": " + fixed4(s.position_acc);
      headline += " test_acc@" + std::to_string(s.length) + " " + fixed4(s.position_acc);
    }
    const nlohmann::json reach = reach_99_step_ >= 0 ? nlohmann::json(reach_99_step_) : nlohmann::json();
    Report r;
    r.result = {{"task", "words:" + task_.group().name()},
                {"input_vocab", task_.input_vocab()},
                {"classes", task_.classes()},
                {"val", val_.to_json()},
                {"test", tests},
                {"steps_to_99", reach},
                {"best_val_loss", best_criterion}};
    // The group-structure diagnosis (tasks/word_diagnosis.hpp) for models with group-valued states.
    if (const auto diagnosis =
            diagnose_word_model(model, task_, run_.seed, drift_lengths(data_.eval_lengths), kDriftWords))
      r.result["diagnosis"] = diagnosis->to_json();
    r.summary = "validation accuracy " + fixed4(val_.position_acc) + " at length " + std::to_string(val_.length) +
                "; test accuracy by length: " + summary;
    r.headline = headline;
    return r;
  }

  int64_t positions_trained(int64_t) const override { return positions_; }
  nlohmann::json data_position() const override { return {{"word_batcher", batcher_.state()}}; }
  void set_data_position(const nlohmann::json& d) override {
    if (d.contains("word_batcher")) batcher_.set_state(d.at("word_batcher").get<std::string>());
  }
  nlohmann::json progress() const override { return {{"steps_to_99", reach_99_step_}, {"tokens_seen", positions_}}; }
  void restore_progress(const nlohmann::json& p) override {
    reach_99_step_ = p.value("steps_to_99", int64_t{-1});
    positions_ = p.value("tokens_seen", int64_t{0});
  }

 private:
  const data::WordTask& task_;
  WordsData data_;
  RunSettings run_;
  data::WordBatcher batcher_;
  int64_t positions_ = 0;       // positions trained on, all segments of the run
  int64_t reach_99_step_ = -1;  // first evaluation step with validation accuracy >= 0.99
  bool warm_start_checked_ = false;  // the model was asked whether its transitions can be set
  WordScores val_;              // the last validation's
  std::vector<WordScores> test_;  // the final evaluation's, by length
};

class WordsTask : public Task {
 public:
  explicit WordsTask(const TaskSource& s)
      : Task(s.data.at("dataset").get<std::string>()),
        data_(s.data),
        words_(data::word_group_of(dataset()), data_.inputs, data_.generating_set) {
    if (s.vocab_record && *s.vocab_record != vocab_record())
      throw IoError(s.source + ": \"vocab\" " + s.vocab_record->dump() + " does not match the word task of its config (" +
                    vocab_record().dump() + ")");
  }

  const data::WordTask& words() const { return words_; }

  int64_t input_vocab() const override { return words_.input_vocab(); }
  int64_t classes() const override { return words_.classes(); }
  int64_t window(const RunSettings&) const override { return data_.max_len; }
  std::string describe() const override {
    return dataset() + " (words of length " + std::to_string(data_.min_len) + ".." + std::to_string(data_.max_len) +
           ", " + std::to_string(words_.input_vocab()) + " input symbols, " + std::to_string(words_.classes()) +
           " classes)";
  }
  nlohmann::json vocab_record() const override {
    nlohmann::json j = {{"task", "words:" + words_.group().name()},
                        {"inputs", words_.inputs()},
                        {"input_vocab", words_.input_vocab()},
                        {"classes", words_.classes()}};
    // Only when set (older checkpoints' records are unchanged): the symbols of inputs
    // "generators" depend on it.
    if (words_.generating_set() != "standard") j["generating_set"] = words_.generating_set();
    return j;
  }
  std::string criterion_name() const override { return "val_loss"; }

  std::unique_ptr<TaskTraining> start_training(const RunSettings& run, const models::Model<float>& model) override {
    try {  // before training: a transformer cannot read data.eval_lengths past its one-pass limit
      check_word_eval_lengths(model, data_.eval_lengths, "data.eval_lengths");
    } catch (const ValueError& e) {
      throw ConfigError(e.what());
    }
    return std::make_unique<WordsTraining>(words_, data_, run);
  }

  nlohmann::json evaluate(models::Model<float>& model, const RunSettings& run, const EvalRequest& request) override {
    const std::vector<int64_t> lengths =
        request.option("lengths").empty() ? data_.eval_lengths : parse_word_lengths(request.option("lengths"));
    const int64_t sequences = request.sequences_option(data_.test_sequences);
    const auto scores = evaluate_word_lengths(model, words_, run.seed,
                                              request.split == "val" ? data::WordSplit::Val : data::WordSplit::Test,
                                              lengths, sequences);
    nlohmann::json j = {{"source", dataset() + ":" + request.split}, {"sequences", sequences},
                        {"lengths", nlohmann::json::array()}};
    for (const auto& s : scores) j["lengths"].push_back(s.to_json());
    if (const auto d = diagnose_word_model(model, words_, run.seed, drift_lengths(lengths), kDriftWords))
      j["diagnosis"] = d->to_json();
    return j;
  }

  void print_evaluation(const nlohmann::json& j, std::ostream& out) const override;

 private:
  WordsData data_;
  data::WordTask words_;
};

// Prints with printf-style formats into `out`.
template <class... A>
void put(std::ostream& out, const char* format, A... args) {
  char line[512];
  std::snprintf(line, sizeof line, format, args...);
  out << line;
}

void WordsTask::print_evaluation(const nlohmann::json& j, std::ostream& out) const {
  put(out, "%s, %lld words per length (checkpoint step %lld)\n", j.at("source").get<std::string>().c_str(),
      static_cast<long long>(j.at("sequences").get<int64_t>()), static_cast<long long>(j.value("step", int64_t{0})));
  put(out, "%8s %10s %14s %14s %11s\n", "length", "loss", "position_acc", "sequence_acc", "final_acc");
  for (const auto& s : j.at("lengths"))
    put(out, "%8lld %10.4f %14.4f %14.4f %11.4f\n", static_cast<long long>(s.at("length").get<int64_t>()),
        s.at("loss").get<double>(), s.at("position_acc").get<double>(), s.at("sequence_acc").get<double>(),
        s.at("final_acc").get<double>());
  if (!j.contains("diagnosis")) return;
  // The group-structure diagnosis (tasks/word_diagnosis.hpp).
  const nlohmann::json& d = j.at("diagnosis");
  const bool independent = d.at("state_independent").get<bool>();
  if (independent) {
    put(out, "transitions: homomorphism defect max %.3g, mean %.3g over %lld pairs; order defect max %.3g\n",
        d.at("homomorphism_defect_max").get<double>(), d.at("homomorphism_defect_mean").get<double>(),
        static_cast<long long>(d.at("homomorphism_pairs").get<int64_t>()), d.at("order_defect_max").get<double>());
    out << "defect spectrum (RMS defect per direction, ascending):";
    for (const auto& r : d.at("defect_spectrum")) put(out, " %.3g", r.get<double>());
    put(out, "\nexact subspace: %lld of %zu directions below %.2f, RMS defect %.3g there, %.3g elsewhere\n",
        static_cast<long long>(d.at("exact_dims").get<int64_t>()), d.at("defect_spectrum").size(), kExactDirection,
        d.at("exact_rms_defect").get<double>(), d.at("rest_rms_defect").get<double>());
  } else {
    out << "transitions: the drive's step depends on the state (no homomorphism defect)\n";
  }
  put(out, "drift over %lld test words: %8s %18s %21s %18s %9s\n", static_cast<long long>(kDriftWords), "length",
      "to_true_prototype", "to_nearest_prototype", "on_exact_subspace", "accuracy");
  for (const auto& p : d.at("drift")) {
    char exact[32] = "-";
    if (p.contains("on_exact_subspace"))
      std::snprintf(exact, sizeof exact, "%.4f", p.at("on_exact_subspace").get<double>());
    put(out, "%29s %8lld %18.4f %21.4f %18s %9.4f\n", "", static_cast<long long>(p.at("length").get<int64_t>()),
        p.at("to_true_prototype").get<double>(), p.at("to_nearest_prototype").get<double>(), exact,
        p.at("accuracy").get<double>());
  }
}

}  // namespace

TaskSpec words_task_spec() {
  TaskSpec s;
  s.name = "words";
  s.claims = [](const std::string& d) { return data::is_word_dataset(d); };
  s.datasets = "\"words:<group>\"";
  s.parse_data = parse_words_data;
  s.unused_train_keys = {{"seq_len", "set the word lengths with data.min_len and data.max_len"}};
  s.make = [](const TaskSource& src) -> std::unique_ptr<Task> { return std::make_unique<WordsTask>(src); };
  s.eval_options = {{"lengths", "64,128,...  word lengths to score (default: data.eval_lengths)"},
                    {"sequences", "N  words per length (default: data.test_sequences)"}};
  return s;
}

const data::WordTask* word_task_of(const Task& task) {
  const auto* w = dynamic_cast<const WordsTask*>(&task);
  return w ? &w->words() : nullptr;
}

}  // namespace liegrad::tasks
