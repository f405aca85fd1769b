// The rotation-tracking task (see rotations_task.hpp).
#include "tasks/rotations_task.hpp"

#include <cstdio>
#include <numbers>

#include "autograd/ops.hpp"
#include "core/errors.hpp"
#include "data/rotation_walks.hpp"
#include "models/capabilities.hpp"
#include "tasks/rotation_eval.hpp"

namespace liegrad::tasks {

namespace {

constexpr const char* kDataset = "rotations:SO3";
constexpr int64_t kFeatures = 3, kOutputs = 9;

enum class Split : uint64_t { Train = 0, Val = 1, Test = 2 };

// Distinct generators for (run seed, split): 3 is invertible mod 2^64, so 3 seed + split
// is injective, and Rng's seeding (splitmix64) decorrelates neighbours.
uint64_t split_seed(uint64_t run_seed, Split split) {
  return 0xA0761D6478BD642FULL + 3 * run_seed + static_cast<uint64_t>(split);
}

// The data section of a rotations run, resolved.
struct RotationsData {
  data::RotationWalkSpec walk;
  int64_t min_len = 1, max_len = 64, curriculum_steps = 0;
  std::vector<int64_t> eval_lengths = {64, 256, 1024, 4096};
  int64_t val_sequences = 64, test_sequences = 64;

  RotationsData() = default;
  explicit RotationsData(const nlohmann::json& j)
      : min_len(j.at("min_len").get<int64_t>()),
        max_len(j.at("max_len").get<int64_t>()),
        curriculum_steps(j.at("curriculum_steps").get<int64_t>()),
        eval_lengths(j.at("eval_lengths").get<std::vector<int64_t>>()),
        val_sequences(j.at("val_sequences").get<int64_t>()),
        test_sequences(j.at("test_sequences").get<int64_t>()) {
    walk.distribution = data::parse_angle_distribution(j.at("angle_distribution").get<std::string>(),
                                                       "data.angle_distribution");
    walk.angle_scale = j.at("angle_scale").get<double>();
    walk.noise = j.at("noise").get<double>();
  }

  nlohmann::json resolved() const {
    return {{"dataset", kDataset},
            {"angle_distribution", data::angle_distribution_name(walk.distribution)},
            {"angle_scale", walk.angle_scale},
            {"noise", walk.noise},
            {"min_len", min_len},
            {"max_len", max_len},
            {"curriculum_steps", curriculum_steps},
            {"eval_lengths", eval_lengths},
            {"val_sequences", val_sequences},
            {"test_sequences", test_sequences}};
  }
};

// --lengths "64,128,256" -> {64, 128, 256}, each in [1, kMaxRotationLength].
std::vector<int64_t> parse_rotation_lengths(const std::string& text, const std::string& what) {
  const std::string bad = what + ": expected lengths in [1, " + std::to_string(kMaxRotationLength) +
                          "] separated by commas, got '" + text + "'";
  return parse_length_list(text, bad, what + ": expected at least one length", [&](int64_t v) {
    if (v < 1 || v > kMaxRotationLength) throw ValueError(bad);
  });
}

nlohmann::json parse_rotations_data(ConfigReader& d, const std::string& dataset) {
  if (dataset != kDataset)
    throw ConfigError("data.dataset: unknown rotation group in '" + printable(dataset) + "' (expected \"" +
                      kDataset + "\")");
  RotationsData c;
  try {
    c.walk.distribution = data::parse_angle_distribution(
        d.get_string("angle_distribution", "uniform", {"uniform", "halfnormal"}), "data.angle_distribution");
  } catch (const ValueError& e) {
    throw ConfigError(e.what());
  }
  c.walk.angle_scale = d.get_double("angle_scale", c.walk.angle_scale);
  c.walk.noise = d.get_double("noise", c.walk.noise);
  try {
    c.walk.check("data");
  } catch (const ValueError& e) {
    throw ConfigError(e.what());
  }
  c.min_len = d.get_int("min_len", c.min_len, 1, kRotationChunk);
  c.max_len = d.get_int("max_len", c.max_len, 1, kRotationChunk);
  if (c.min_len > c.max_len)
    throw ConfigError("data.min_len: " + std::to_string(c.min_len) + " is above data.max_len = " +
                      std::to_string(c.max_len));
  c.curriculum_steps = d.get_int("curriculum_steps", c.curriculum_steps, 0);
  if (d.has("eval_lengths")) {
    const nlohmann::json& v = d.json().at("eval_lengths");
    if (!v.is_array() || v.empty())
      throw ConfigError("data.eval_lengths: expected a non-empty array of walk lengths, e.g. [64, 4096], got " + v.dump());
    c.eval_lengths.clear();
    for (const auto& x : v) {
      if (!x.is_number_integer() || x.get<int64_t>() < 1 || x.get<int64_t>() > kMaxRotationLength)
        throw ConfigError("data.eval_lengths: expected integer lengths in [1, " + std::to_string(kMaxRotationLength) +
                          "], got " + x.dump());
      c.eval_lengths.push_back(x.get<int64_t>());
    }
  }
  d.allow({"eval_lengths"});
  c.val_sequences = d.get_int("val_sequences", c.val_sequences, 1, 100000);
  c.test_sequences = d.get_int("test_sequences", c.test_sequences, 1, 100000);
  return c.resolved();
}

// The chordal loss: the mean over positions of ||P - R||_F^2, outputs and targets (B,T,9).
ag::Varf chordal_loss(const ag::Varf& outputs, const std::vector<float>& values) {
  Array<float> target(outputs.shape());
  if (target.size() != static_cast<int64_t>(values.size()))
    throw ShapeError("rotations: outputs " + outputs.shape().str() + " for " + std::to_string(values.size()) +
                     " target values");
  std::copy(values.begin(), values.end(), target.data());
  const ag::Varf d = ag::sub(outputs, ag::Varf::constant(std::move(target)));
  return ag::scale(ag::mean(ag::square(d)), static_cast<float>(kOutputs));
}

data::Batch to_batch(const data::RotationWalkChunk& c) {
  data::Batch b;
  b.B = c.rows;
  b.T = c.length;
  b.features = c.inputs;
  b.values.assign(c.truth.begin(), c.truth.end());
  b.starts_new_pass = true;
  return b;
}

std::vector<RotationScores> evaluate_lengths(models::Model<float>& model, const RotationsData& d, uint64_t run_seed,
                                             Split split, const std::vector<int64_t>& lengths, int64_t count) {
  check_rotation_model(model);
  check_rotation_lengths(model, lengths, "evaluation length");
  std::vector<RotationScores> out;
  for (int64_t L : lengths) {
    data::RotationWalkStream stream(d.walk, split_seed(run_seed, split), L, count);
    out.push_back(evaluate_rotation_stream(model, stream));
  }
  return out;
}

std::string deg(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

class RotationsTraining : public TaskTraining {
 public:
  RotationsTraining(const RotationsData& d, const RunSettings& run)
      : data_(d), run_(run),
        batcher_(d.walk, run.batch, d.min_len, d.max_len, split_seed(run.seed, Split::Train), d.curriculum_steps) {}

  data::Batch next() override {
    data::Batch b = to_batch(batcher_.next());
    positions_ += b.B * b.T;
    return b;
  }
  bool carries_state() const override { return false; }  // walks are independent
  ag::Varf forward(models::Model<float>& model, const data::Batch& batch,
                   models::RecurrentState<float>* state) const override {
    Array<float> x(Shape{batch.B, batch.T, kFeatures});
    std::copy(batch.features.begin(), batch.features.end(), x.data());
    return model.continuous_input()->forward_features(x, batch.B, batch.T, state);
  }
  ag::Varf loss(const ag::Varf& outputs, const data::Batch& batch) const override {
    return chordal_loss(outputs, batch.values);
  }
  // The sum of the geodesic angles in degrees over this rank's positions.
  double count(const Array<float>& outputs, const data::Batch& batch) const override {
    double sum = 0;
    for (int64_t r = 0; r < batch.B * batch.T; ++r) {
      double P[9], R[9];
      for (int i = 0; i < 9; ++i) {
        P[i] = outputs.data()[r * 9 + i];
        R[i] = batch.values[static_cast<size_t>(r * 9 + i)];
      }
      sum += geodesic_angle(P, R, "training") * kDegrees;
    }
    return sum;
  }
  WindowMetric window_metric(double, double count, int64_t positions) const override {
    return {"angle_deg", count / static_cast<double>(std::max<int64_t>(positions, 1))};
  }

  Scores validate(models::Model<float>& model, int64_t) override {
    val_ = evaluate_lengths(model, data_, run_.seed, Split::Val, {data_.max_len}, data_.val_sequences).front();
    return {val_.model.mean,
            {{"val_angle_deg", val_.model.mean}, {"val_angle_p95_deg", val_.model.p95}},
            "validation angle error " + deg(val_.model.mean) + " deg (p95 " + deg(val_.model.p95) + ") at length " +
                std::to_string(data_.max_len)};
  }

  Scores final_scores(models::Model<float>& model, int64_t step) override {
    Scores s = validate(model, step);
    test_ = evaluate_lengths(model, data_, run_.seed, Split::Test, data_.eval_lengths, data_.test_sequences);
    return s;
  }

  Report report(models::Model<float>&, const BestModel&, double best_criterion) override {
    nlohmann::json tests = nlohmann::json::array();
    std::string summary, headline = "val_angle_deg " + deg(val_.model.mean);
    for (const auto& s : test_) {
      tests.push_back(s.to_json());
      summary += (summary.empty() ? "" : ", ") + std::to_string(s.length) + ": " + deg(s.model.mean) + " (p95 " +
                 deg(s.model.p95) + ", floor " + deg(s.floor.mean) + ")";
      headline += " test_angle_deg@" + std::to_string(s.length) + " " + deg(s.model.mean);
    }
    Report r;
    r.result = {{"task", kDataset}, {"val", val_.to_json()}, {"test", tests}, {"best_val_angle_deg", best_criterion}};
    r.summary = "mean angle error in degrees by length: " + summary;
    r.headline = headline;
    return r;
  }

  int64_t positions_trained(int64_t) const override { return positions_; }
  nlohmann::json data_position() const override { return {{"rotation_batcher", batcher_.state()}}; }
  void set_data_position(const nlohmann::json& d) override {
    if (d.contains("rotation_batcher")) batcher_.set_state(d.at("rotation_batcher").get<std::string>());
  }
  nlohmann::json progress() const override { return {{"tokens_seen", positions_}}; }
  void restore_progress(const nlohmann::json& p) override { positions_ = p.value("tokens_seen", int64_t{0}); }

 private:
  RotationsData data_;
  RunSettings run_;
  data::RotationBatcher batcher_;
  int64_t positions_ = 0;
  RotationScores val_;
  std::vector<RotationScores> test_;
};

class RotationsTask : public Task {
 public:
  explicit RotationsTask(const TaskSource& s) : Task(kDataset), data_(s.data) {
    if (s.vocab_record && *s.vocab_record != vocab_record())
      throw IoError(s.source + ": \"vocab\" " + s.vocab_record->dump() + " does not match the rotations task (" +
                    vocab_record().dump() + ")");
  }
  int64_t input_vocab() const override { return kFeatures; }  // features per position
  int64_t classes() const override { return kOutputs; }       // a 3x3 rotation per position
  int64_t window(const RunSettings&) const override { return data_.max_len; }
  std::string describe() const override {
    return std::string(kDataset) + " (walks of length " + std::to_string(data_.min_len) + ".." +
           std::to_string(data_.max_len) + ", angles " + data::angle_distribution_name(data_.walk.distribution) +
           " " + deg(data_.walk.angle_scale) + " rad, noise " + deg(data_.walk.noise) + " rad)";
  }
  nlohmann::json vocab_record() const override {
    return {{"task", kDataset}, {"features", kFeatures}, {"outputs", kOutputs}};
  }
  std::string criterion_name() const override { return "val_angle_deg"; }

  std::unique_ptr<TaskTraining> start_training(const RunSettings& run, const models::Model<float>& model) override {
    auto& m = const_cast<models::Model<float>&>(model);  // the capability accessors are not const
    check_rotation_model(m);
    try {
      check_rotation_lengths(model, data_.eval_lengths, "data.eval_lengths");
    } catch (const ValueError& e) {
      throw ConfigError(e.what());
    }
    return std::make_unique<RotationsTraining>(data_, run);
  }

  nlohmann::json evaluate(models::Model<float>& model, const RunSettings& run, const EvalRequest& request) override {
    const std::vector<int64_t> lengths = request.option("lengths").empty()
                                             ? data_.eval_lengths
                                             : parse_rotation_lengths(request.option("lengths"), "--lengths");
    const int64_t sequences = request.sequences_option(data_.test_sequences);
    const auto scores = evaluate_lengths(model, data_, run.seed, request.split == "val" ? Split::Val : Split::Test,
                                         lengths, sequences);
    nlohmann::json j = {{"source", std::string(kDataset) + ":" + request.split}, {"sequences", sequences},
                        {"lengths", nlohmann::json::array()}};
    for (const auto& s : scores) j["lengths"].push_back(s.to_json());
    return j;
  }

  void print_evaluation(const nlohmann::json& j, std::ostream& out) const override {
    char line[256];
    std::snprintf(line, sizeof line, "%s, %lld walks per length (checkpoint step %lld); angles in degrees\n",
                  j.at("source").get<std::string>().c_str(), static_cast<long long>(j.at("sequences").get<int64_t>()),
                  static_cast<long long>(j.value("step", int64_t{0})));
    out << line;
    std::snprintf(line, sizeof line, "%8s %12s %12s %12s %12s %12s\n", "length", "mean", "p95", "final_mean",
                  "floor_mean", "floor_p95");
    out << line;
    for (const auto& s : j.at("lengths")) {
      std::snprintf(line, sizeof line, "%8lld %12.4g %12.4g %12.4g %12.4g %12.4g\n",
                    static_cast<long long>(s.at("length").get<int64_t>()), s.at("mean_deg").get<double>(),
                    s.at("p95_deg").get<double>(), s.at("final_mean_deg").get<double>(),
                    s.at("floor_mean_deg").get<double>(), s.at("floor_p95_deg").get<double>());
      out << line;
    }
  }

 private:
  RotationsData data_;
};

}  // namespace

TaskSpec rotations_task_spec() {
  TaskSpec s;
  s.name = "rotations";
  s.claims = [](const std::string& d) { return d.rfind("rotations:", 0) == 0; };
  s.datasets = "\"rotations:SO3\"";
  s.suggestions = {kDataset};
  s.parse_data = parse_rotations_data;
  s.unused_train_keys = {{"seq_len", "set the walk lengths with data.min_len and data.max_len"}};
  s.make = [](const TaskSource& src) -> std::unique_ptr<Task> { return std::make_unique<RotationsTask>(src); };
  s.eval_options = {{"lengths", "64,4096,...  walk lengths to score (default: data.eval_lengths)"},
                    {"sequences", "N  walks per length (default: data.test_sequences)"}};
  return s;
}

}  // namespace liegrad::tasks
