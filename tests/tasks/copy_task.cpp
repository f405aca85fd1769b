// The copy task (see copy_task.hpp).
#include "copy_task.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "autograd/ops.hpp"
#include "core/errors.hpp"
#include "core/rng.hpp"

namespace liegrad::test {

namespace {

int64_t symbols_of(const std::string& dataset) {
  char* end = nullptr;
  const long long k = std::strtoll(dataset.c_str() + 5, &end, 10);
  if (dataset.size() <= 5 || *end != '\0' || k < 2 || k > 256)
    throw ConfigError("data.dataset: '" + printable(dataset) + "' is not copy:<K> with 2 <= K <= 256");
  return k;
}

// B words of length L, uniform symbols; the target is the input.
data::Batch draw(Rng& rng, int64_t K, int64_t B, int64_t L) {
  data::Batch b;
  b.B = B;
  b.T = L;
  for (int64_t i = 0; i < B * L; ++i) b.inputs.push_back(static_cast<int32_t>(rng.integer(K)));
  b.targets = b.inputs;
  return b;
}

// The fixed validation words of a run.
data::Batch validation_words(int64_t K, int64_t count, int64_t L, uint64_t seed) {
  Rng rng(seed + 1000);
  return draw(rng, K, count, L);
}

// Mean cross-entropy and accuracy of the model on `words` (no tape, evaluation mode).
std::pair<double, double> score(models::Model<float>& model, const data::Batch& words) {
  ag::NoGrad no_grad;
  const bool was = model.training();
  model.set_training(false);
  const Array<float> logits = model.forward(words.inputs, words.B, words.T, nullptr).value();
  model.set_training(was);
  const int64_t R = words.B * words.T, C = logits.size() / R;
  double nll = 0, right = 0;
  const std::vector<double> rows = ag::row_nll(logits, words.targets);
  for (int64_t r = 0; r < R; ++r) {
    nll += rows[static_cast<size_t>(r)];
    int64_t best = 0;
    for (int64_t c = 1; c < C; ++c)
      if (logits.data()[r * C + c] > logits.data()[r * C + best]) best = c;
    right += best == words.targets[static_cast<size_t>(r)];
  }
  return {nll / static_cast<double>(R), right / static_cast<double>(R)};
}

class CopyTraining : public tasks::TaskTraining {
 public:
  CopyTraining(int64_t K, int64_t length, int64_t val_sequences, double loss_scale, const tasks::RunSettings& run)
      : K_(K), L_(length), loss_scale_(loss_scale), val_(validation_words(K, val_sequences, length, run.seed)), run_(run),
        rng_(run.seed) {}

  data::Batch next() override {
    ++drawn_;
    return draw(rng_, K_, run_.batch, L_);
  }
  bool carries_state() const override { return false; }
  // The task's own loss: the cross-entropy times data.loss_scale.
  ag::Varf loss(const ag::Varf& logits, const data::Batch& batch) const override {
    return ag::scale(ag::cross_entropy(logits, batch.targets), static_cast<float>(loss_scale_));
  }
  double count(const Array<float>& logits, const data::Batch& batch) const override {
    const int64_t R = batch.B * batch.T, C = logits.size() / R;
    double right = 0;
    for (int64_t r = 0; r < R; ++r) {
      int64_t best = 0;
      for (int64_t c = 1; c < C; ++c)
        if (logits.data()[r * C + c] > logits.data()[r * C + best]) best = c;
      right += best == batch.targets[static_cast<size_t>(r)];
    }
    return right;
  }
  tasks::WindowMetric window_metric(double, double count, int64_t positions) const override {
    return {"acc", count / static_cast<double>(positions)};
  }
  tasks::Scores validate(models::Model<float>& model, int64_t) override {
    const auto [loss, acc] = score(model, val_);
    last_acc_ = acc;
    return {loss, {{"val_loss", loss}, {"val_acc", acc}}, "copy accuracy " + std::to_string(acc)};
  }
  tasks::Scores final_scores(models::Model<float>& model, int64_t step) override { return validate(model, step); }
  tasks::Report report(models::Model<float>&, const tasks::BestModel&, double best) override {
    tasks::Report r;
    r.result = {{"val_acc", last_acc_}, {"best_val_loss", best}};
    r.summary = "copy accuracy " + std::to_string(last_acc_);
    r.headline = "copy_acc " + std::to_string(last_acc_);
    return r;
  }
  int64_t positions_trained(int64_t steps) const override { return steps * run_.batch * L_; }
  nlohmann::json data_position() const override { return {{"copy_rng", rng_.state()}, {"copy_drawn", drawn_}}; }
  void set_data_position(const nlohmann::json& d) override {
    rng_.set_state(d.at("copy_rng").get<std::string>());
    drawn_ = d.at("copy_drawn").get<int64_t>();
  }

 private:
  int64_t K_, L_;
  double loss_scale_;
  data::Batch val_;
  tasks::RunSettings run_;
  Rng rng_;
  int64_t drawn_ = 0;
  double last_acc_ = 0;
};

class CopyTask : public tasks::Task {
 public:
  explicit CopyTask(const tasks::TaskSource& s)
      : Task(s.data.at("dataset").get<std::string>()),
        K_(symbols_of(dataset())),
        L_(s.data.at("length").get<int64_t>()),
        val_sequences_(s.data.at("val_sequences").get<int64_t>()),
        loss_scale_(s.data.at("loss_scale").get<double>()) {
    if (s.vocab_record && *s.vocab_record != vocab_record())
      throw IoError(s.source + ": \"vocab\" does not match the copy task");
  }
  int64_t input_vocab() const override { return K_; }
  int64_t classes() const override { return K_; }
  int64_t window(const tasks::RunSettings&) const override { return L_; }
  std::string describe() const override { return dataset() + " (words of length " + std::to_string(L_) + ")"; }
  nlohmann::json vocab_record() const override { return {{"task", dataset()}, {"symbols", K_}}; }
  std::string criterion_name() const override { return "val_loss"; }
  std::unique_ptr<tasks::TaskTraining> start_training(const tasks::RunSettings& run, const models::Model<float>&) override {
    return std::make_unique<CopyTraining>(K_, L_, val_sequences_, loss_scale_, run);
  }
  nlohmann::json evaluate(models::Model<float>& model, const tasks::RunSettings& run,
                          const tasks::EvalRequest& request) override {
    const auto it = request.options.find("length");
    const int64_t L = it == request.options.end() ? L_ : std::atoll(it->second.c_str());
    if (L < 1) throw ValueError("--length must be >= 1");
    const auto [loss, acc] = score(model, validation_words(K_, val_sequences_, L, run.seed));
    return {{"length", L}, {"loss", loss}, {"accuracy", acc}};
  }
  void print_evaluation(const nlohmann::json& s, std::ostream& out) const override {
    out << "copy at length " << s.at("length") << ": accuracy " << s.at("accuracy") << "\n";
  }

 private:
  int64_t K_, L_, val_sequences_;
  double loss_scale_;
};

}  // namespace

tasks::TaskSpec copy_task_spec() {
  tasks::TaskSpec s;
  s.name = "copy";
  s.claims = [](const std::string& d) { return d.rfind("copy:", 0) == 0; };
  s.datasets = "\"copy:<K>\"";
  s.parse_data = [](ConfigReader& d, const std::string& dataset) -> nlohmann::json {
    symbols_of(dataset);
    return {{"dataset", dataset},
            {"length", d.get_int("length", 16, 1, 4096)},
            {"val_sequences", d.get_int("val_sequences", 32, 1, 100000)},
            {"loss_scale", d.get_double("loss_scale", 1.0, 0.0)}};
  };
  s.unused_train_keys = {{"seq_len", "the copy task's words have data.length symbols"}};
  s.make = [](const tasks::TaskSource& src) -> std::unique_ptr<tasks::Task> { return std::make_unique<CopyTask>(src); };
  s.eval_options = {{"length", "N  word length to score (copy task)"}};
  return s;
}

}  // namespace liegrad::test
