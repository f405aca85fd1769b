// The rotation-tracking task (data/rotation_walks.hpp, tasks/rotations_task.hpp,
// tasks/rotation_eval.hpp) and the models' real-valued inputs and rotation outputs
// (models/continuous.hpp): the walks' targets against an independent quaternion
// composition, reproducibility and the noise's own stream; the geodesic angle on known
// rotations; the OSM-RNN in SO(3) with the hat map as its input map integrating exactly;
// gradients of every model's feature path against finite differences; a one-hot feature
// giving the token's output; a short training run, its resume, and one-line errors.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "autograd/ops.hpp"
#include "autograd/tape.hpp"
#include "core/errors.hpp"
#include "data/rotation_walks.hpp"
#include "groups/group.hpp"
#include "models/capabilities.hpp"
#include "models/osm_rnn.hpp"
#include "report/plot_rotations.hpp"
#include "tasks/registry.hpp"
#include "tasks/rotation_eval.hpp"
#include "tests/model_test_utils.hpp"
#include "tests/resume_test_utils.hpp"
#include "tests/train_test_utils.hpp"
#include "train/checkpoint.hpp"
#include "train/run_config.hpp"
#include "train/trainer.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {

using Quat = std::array<double, 4>;  // (w, x, y, z)

Quat quat_mul(const Quat& a, const Quat& b) {
  return {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3], a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
          a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1], a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
}

// The rotation of a rotation vector as a unit quaternion (cos(t/2), sin(t/2) w/t).
Quat quat_of(const double* w) {
  const double t = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  const double s = t > 0 ? std::sin(t / 2) / t : 0.5;
  return {std::cos(t / 2), s * w[0], s * w[1], s * w[2]};
}

data::Mat3 matrix_of(const Quat& q) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  return {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
          2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
          2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
}

// A rotations run config: `model` on walks of length 1..max_len.
json rotation_config(const json& model, int64_t steps, int64_t max_len = 8) {
  json train = test::tiny_train(steps, 8);
  return {{"model", model},
          {"data",
           {{"dataset", "rotations:SO3"},
            {"max_len", max_len},
            {"eval_lengths", {8, 32}},
            {"val_sequences", 8},
            {"test_sequences", 4}}},
          {"train", train}};
}

const json kOsmSo3 = {{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", "element"}, {"mixing", "identity"},
                      {"readout", "rotation"}};

// Sets the OSM-RNN's input map to the hat map: hat(b_f) = [e_f]x for f = 0, 1, 2, found
// from the group's own hat of its basis (an orthogonal basis of so(3)).
template <class T>
void set_hat_map(models::Model<T>& model) {
  auto* rnn = dynamic_cast<models::OsmRnn<T>*>(&model);
  REQUIRE(rnn);
  const groups::Group& g = rnn->group();
  REQUIRE(g.dim() == 3);
  Array<double> basis(Shape{3, 3, 3});
  for (int k = 0; k < 3; ++k) {
    double u[3] = {0, 0, 0};
    u[k] = 1;
    g.hat_kernel(u, basis.data() + k * 9, 3);
  }
  const double cross[3][9] = {{0, 0, 0, 0, 0, -1, 0, 1, 0}, {0, 0, 1, 0, 0, 0, -1, 0, 0}, {0, -1, 0, 1, 0, 0, 0, 0, 0}};
  Array<T>& b = model.find_parameter("embed")->var.value();
  for (int f = 0; f < 3; ++f)
    for (int k = 0; k < 3; ++k) {
      double dot = 0, norm = 0;
      for (int i = 0; i < 9; ++i) dot += basis[k * 9 + i] * cross[f][i], norm += basis[k * 9 + i] * basis[k * 9 + i];
      b[f * 3 + k] = static_cast<T>(dot / norm);
    }
}

// Features (B,T,3) of a chunk as an array.
template <class T>
Array<T> features_of(const data::RotationWalkChunk& c) {
  Array<T> x(Shape{c.rows, c.length, 3});
  for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(c.inputs[static_cast<size_t>(i)]);
  return x;
}

double val_angle(const std::string& dir, bool last) {
  const auto lines = test::metrics_lines(dir, "val_angle_deg");
  REQUIRE_FALSE(lines.empty());
  return (last ? lines.back() : lines.front())["val_angle_deg"].get<double>();
}

}  // namespace

TEST_CASE("rotation walks: the targets are the running products, reproducible, streamed in chunks") {
  data::RotationWalkSpec spec;
  spec.distribution = data::AngleDistribution::HalfNormal;
  spec.angle_scale = 0.7;
  data::RotationBatcher a(spec, 3, 5, 40, 11), b(spec, 3, 5, 40, 11);
  const data::RotationWalkChunk c = a.next();
  CHECK(c.length >= 5);
  CHECK(c.length <= 40);
  // An independent composition: unit quaternions, q_t = q_{t-1} (x) q(w_t).
  double worst = 0;
  for (int64_t r = 0; r < c.rows; ++r) {
    Quat q{1, 0, 0, 0};
    for (int64_t t = 0; t < c.length; ++t) {
      double w[3];
      for (int i = 0; i < 3; ++i) w[i] = c.inputs[static_cast<size_t>((r * c.length + t) * 3 + i)];
      q = quat_mul(q, quat_of(w));
      const data::Mat3 R = matrix_of(q);
      for (int i = 0; i < 9; ++i)
        worst = std::max(worst, std::abs(R[i] - c.truth[static_cast<size_t>((r * c.length + t) * 9 + i)]));
    }
  }
  CHECK(worst < 1e-12);
  // Reproducible by seed, and resumable from its state.
  const data::RotationWalkChunk c2 = b.next();
  CHECK(c2.inputs == c.inputs);
  CHECK(c2.truth == c.truth);
  data::RotationBatcher d(spec, 3, 5, 40, 99);
  d.set_state(a.state());
  const data::RotationWalkChunk next_a = a.next(), next_d = d.next();
  CHECK(next_a.inputs == next_d.inputs);
  CHECK_THROWS_WITH_AS(data::RotationBatcher(spec, 4, 5, 40, 1).set_state(a.state()), doctest::Contains("B=3"),
                       ValueError);
  // Angles from the stated distribution: uniform in [0, scale).
  spec.distribution = data::AngleDistribution::Uniform;
  spec.angle_scale = 0.3;
  data::RotationWalkStream s(spec, 5, 500, 2);
  s.start(0, 2);
  const data::RotationWalkChunk whole = s.next(500);
  double largest = 0, sum = 0;
  for (size_t i = 0; i < whole.inputs.size(); i += 3) {
    const double t = std::hypot(whole.inputs[i], whole.inputs[i + 1], whole.inputs[i + 2]);
    largest = std::max(largest, t), sum += t;
  }
  CHECK(largest <= 0.3 + 1e-6);
  CHECK(sum / 1000 == doctest::Approx(0.15).epsilon(0.05));
  // The stream yields the same walks in chunks of any size.
  s.start(1, 1);
  std::vector<float> pieces;
  std::vector<double> truth;
  while (!s.finished()) {
    const data::RotationWalkChunk p = s.next(77);
    pieces.insert(pieces.end(), p.inputs.begin(), p.inputs.end());
    truth.insert(truth.end(), p.truth.begin(), p.truth.end());
  }
  CHECK(std::equal(pieces.begin(), pieces.end(), whole.inputs.begin() + 1500));
  CHECK(std::equal(truth.begin(), truth.end(), whole.truth.begin() + 4500));
  // Noise moves the inputs, never the truth.
  data::RotationWalkSpec noisy = spec;
  noisy.noise = 0.01;
  data::RotationWalkStream n(noisy, 5, 500, 2);
  n.start(0, 2);
  const data::RotationWalkChunk with_noise = n.next(500);
  CHECK(with_noise.truth == whole.truth);
  double sq = 0;
  for (size_t i = 0; i < whole.inputs.size(); ++i) sq += std::pow(with_noise.inputs[i] - whole.inputs[i], 2);
  CHECK(std::sqrt(sq / static_cast<double>(whole.inputs.size())) == doctest::Approx(0.01).epsilon(0.1));
}

TEST_CASE("geodesic angle: known rotations, small angles kept, malformed rotations refused in one line") {
  const data::Vec3 u{0.3, -1.1, 0.4};
  const data::Mat3 P = data::so3_exp(u);
  for (double theta : {1e-7, 1e-3, 0.1, 1.0, 3.0}) {
    CAPTURE(theta);
    const double n = std::sqrt(2.0 * 2.0 + 1.0 + 0.5 * 0.5);
    const data::Mat3 R = data::mat3_mul(P, data::so3_exp({theta * 2.0 / n, theta * -1.0 / n, theta * 0.5 / n}));
    CHECK(tasks::geodesic_angle(P.data(), R.data(), "t") == doctest::Approx(theta).epsilon(1e-9));
    CHECK(tasks::geodesic_angle(R.data(), P.data(), "t") == doctest::Approx(theta).epsilon(1e-9));
  }
  CHECK(tasks::geodesic_angle(P.data(), P.data(), "t") == 0.0);
  const tasks::AngleStats s = tasks::AngleStats::of({5, 1, 4, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20});
  CHECK(s.mean == doctest::Approx(10.5));
  CHECK(s.p95 == 19.0);  // nearest rank: the 19th of 20
  data::Mat3 bad = P;
  for (double& x : bad) x *= 1.1;
  CHECK_THROWS_WITH_AS(tasks::geodesic_angle(bad.data(), P.data(), "evaluation"),
                       doctest::Contains("evaluation: a predicted matrix is not a rotation"), ValueError);
  data::Mat3 reflection = data::mat3_identity();
  reflection[8] = -1;
  CHECK_THROWS_WITH_AS(tasks::geodesic_angle(reflection.data(), P.data(), "e"), doctest::Contains("det P = -1"),
                       ValueError);
  bad = P;
  bad[4] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(tasks::geodesic_angle(bad.data(), P.data(), "e"), doctest::Contains("non-finite"), ValueError);
}

TEST_CASE("the OSM-RNN in SO(3) with the hat map as its input map integrates the increments exactly") {
  auto model = models::make_model<float>(kOsmSo3, 3, 1, 9);
  set_hat_map(*model);
  data::RotationWalkSpec spec;  // uniform angles up to 0.5 rad
  data::RotationWalkStream walks(spec, 7, 1024, 4);
  const tasks::RotationScores s = tasks::evaluate_rotation_stream(*model, walks);
  CHECK(s.floor.mean == 0.0);  // no noise: the exact integration is the truth
  MESSAGE("hat map in float: mean " << s.model.mean << " deg, p95 " << s.model.p95 << " deg at 1024");
  // Float rounding alone: 2e-4 degrees (3.5e-6 rad) after 1,024 products.
  CHECK(s.model.p95 < 2e-4);
  // In double, to double's precision.
  auto exact = models::make_model<double>(kOsmSo3, 3, 1, 9);
  set_hat_map(*exact);
  walks.start(0, 4);
  const data::RotationWalkChunk c = walks.next(200);
  ag::NoGrad ng;
  const Array<double> out =
      exact->continuous_input()->forward_features(features_of<double>(c), c.rows, c.length, nullptr).value();
  double worst = 0;
  for (int64_t r = 0; r < c.rows * c.length; ++r)
    worst = std::max(worst, tasks::geodesic_angle(out.data() + r * 9, &c.truth[static_cast<size_t>(r * 9)], "t"));
  CHECK(worst < 1e-7);  // the float rounding of the inputs is in the truth too; left: the exponential's rounding
  // With noise, the floor is the noise's accumulated error, and the hat map reaches it.
  spec.noise = 0.01;
  data::RotationWalkStream noisy(spec, 7, 256, 4);
  const tasks::RotationScores sn = tasks::evaluate_rotation_stream(*model, noisy);
  CHECK(sn.floor.mean > 0.1);  // ~0.01 rad * sqrt(3 t) per position
  CHECK(sn.model.mean == doctest::Approx(sn.floor.mean).epsilon(1e-3));
}

TEST_CASE("real-valued inputs: a one-hot feature gives the token's output, and gradients match finite differences") {
  const std::vector<json> configs = {
      kOsmSo3,
      {{"type", "osm_rnn"}, {"group", "SO(4)"}, {"rnn_drive", "element"}, {"readout", "rotation"}},
      {{"type", "osm_rnn"}, {"group", "SO(4)"}, {"rnn_drive", "element"}},  // prototype logits from features
      {{"type", "lstm"}, {"hidden", 6}, {"head", "rotation"}},
      {{"type", "transformer"}, {"D", 8}, {"layers", 1}, {"heads", 2}, {"head", "rotation"}}};
  for (const json& cfg : configs) {
    CAPTURE(cfg.dump());
    auto m = models::make_model<double>(cfg, 3, 5, 9);
    models::ContinuousInput<double>* c = m->continuous_input();
    REQUIRE(c);
    CHECK(c->outputs_rotations() == (cfg.contains("readout") || cfg.contains("head")));
    const std::vector<int32_t> tokens = {2, 0, 1, 1, 2, 0};
    Array<double> onehot(Shape{2, 3, 3});
    for (size_t i = 0; i < tokens.size(); ++i) onehot[static_cast<int64_t>(i) * 3 + tokens[i]] = 1;
    {
      ag::NoGrad ng;
      const Array<double> a = m->forward(tokens, 2, 3).value(), b = c->forward_features(onehot, 2, 3, nullptr).value();
      REQUIRE(a.size() == b.size());
      for (int64_t i = 0; i < a.size(); ++i) CHECK(b[i] == doctest::Approx(a[i]).epsilon(1e-12));
    }
    // The chordal loss through the feature path, every parameter.
    data::RotationWalkSpec spec;
    data::RotationWalkStream walks(spec, 3, 4, 2);
    walks.start(0, 2);
    const data::RotationWalkChunk w = walks.next(4);
    Array<double> target(Shape{2, 4, 9});
    for (int64_t i = 0; i < target.size(); ++i) target[i] = w.truth[static_cast<size_t>(i)];
    const Array<double> x = features_of<double>(w);
    test::model_gradcheck_of(*m, [&] {
      const ag::Vard out = c->forward_features(x, 2, 4, nullptr);
      return ag::mean(ag::square(ag::sub(out, ag::Vard::constant(target))));
    }, 17);
  }
}

TEST_CASE("a rotations run lowers the angle error far below the untrained model's, and resumes bit for bit") {
  test::TempDir tmp("rotations_run");
  json cfg = rotation_config(kOsmSo3, 300, 16);
  cfg["train"]["lr"] = 0.03;
  cfg["train"]["eval_interval"] = 50;
  cfg["train"]["log_interval"] = 50;
  train::TrainOptions a;
  a.out_dir = tmp / "osm";
  const train::TrainResult r = train::run_training(cfg, a);
  const double first = val_angle(tmp / "osm", false), last = val_angle(tmp / "osm", true);
  MESSAGE("validation mean angle: " << first << " deg at step 50, " << last << " deg at the end");
  // The untrained model: the same config evaluated before any step.
  auto untrained = models::make_model<float>(kOsmSo3, 3, 3, 9);
  data::RotationWalkSpec spec;
  data::RotationWalkStream walks(spec, 1, 16, 8);
  const double before = tasks::evaluate_rotation_stream(*untrained, walks).model.mean;
  MESSAGE("untrained: " << before << " deg");
  CHECK(last < before / 20);
  const json result = json::parse(test::read_text(tmp / "osm/result.json"));
  REQUIRE(result["test"].size() == 2);
  CHECK(result["test"][1]["length"] == 32);
  CHECK(result["test"][1]["floor_mean_deg"] == 0.0);
  CHECK(r.headline.find("test_angle_deg@32") != std::string::npos);
  CHECK(!test::metrics_lines(tmp / "osm", "angle_deg").empty());
  // The checkpoint reloads and scores the same.
  const train::LoadedModel m = train::load_model(tmp / "osm/last.json");
  const json again = m.task->evaluate(*m.model, train::parse_run_config(m.config).task_settings(), {});
  CHECK(again["lengths"][1]["mean_deg"] == result["test"][1]["mean_deg"]);
  // `liegrad eval`'s options: bad ones in one line.
  const tasks::RunSettings run = train::parse_run_config(m.config).task_settings();
  CHECK_THROWS_WITH_AS(m.task->evaluate(*m.model, run, {"test", {{"lengths", "0"}}}), doctest::Contains("--lengths"),
                       ValueError);
  CHECK_THROWS_WITH_AS(m.task->evaluate(*m.model, run, {"test", {{"lengths", "8,65537"}}}),
                       doctest::Contains("65537"), ValueError);
  CHECK_THROWS_WITH_AS(m.task->evaluate(*m.model, run, {"test", {{"sequences", "-2"}}}),
                       doctest::Contains("--sequences"), ValueError);
  // The plot of angle error against length.
  CHECK(report::is_rotation_run(tmp / "osm"));
  const std::string svg = report::plot_rotation_error_svg({tmp / "osm"});
  CHECK(svg.find("<svg") == 0);
  CHECK(svg.find("geodesic angle error") != std::string::npos);
  CHECK(svg.find(">osm<") != std::string::npos);

  // Stopped and resumed: the same losses and scores as one go (an LSTM, two evaluations).
  const json lstm = rotation_config({{"type", "lstm"}, {"hidden", 8}, {"head", "rotation"}}, 12);
  train::TrainOptions full;
  full.out_dir = tmp / "full";
  train::run_training(lstm, full);
  CHECK(test::train_cut_and_resumed(lstm, tmp / "split", 7).steps_done == 12);
  test::check_same_losses(tmp / "full", tmp / "split");
  CHECK(json::parse(test::read_text(tmp / "split/result.json"))["test"] ==
        json::parse(test::read_text(tmp / "full/result.json"))["test"]);
}

TEST_CASE("rotations: bad configurations and models get one-line errors naming the key") {
  const json good = rotation_config(kOsmSo3, 4);
  CHECK(tasks::find_task_spec("rotations:SO3").name == "rotations");
  const train::RunConfig rc = train::parse_run_config(good);
  CHECK(rc.data.section["angle_distribution"] == "uniform");
  CHECK(train::parse_run_config(rc.resolved()).resolved() == rc.resolved());
  auto expect = [&](const std::string& key, const json& value, std::initializer_list<std::string> needles) {
    json c = good;
    c["data"][key] = value;
    CAPTURE(c["data"].dump());
    test::check_config_error([&] { train::parse_run_config(c); }, needles);
  };
  expect("dataset", "rotations:SO4", {"data.dataset", "rotations:SO3"});
  expect("angle_distribution", "gaussian", {"data.angle_distribution", "gaussian"});
  expect("angle_scale", -0.1, {"data.angle_scale", "-0.1"});
  expect("angle_scale", 4.0, {"data.angle_scale", "pi"});
  expect("angle_scale", "big", {"data.angle_scale"});
  expect("noise", std::numeric_limits<double>::infinity(), {"data.noise", "finite"});
  expect("noise", -1e-3, {"data.noise"});
  expect("eval_lengths", json{64, 65537}, {"data.eval_lengths", "65537"});
  expect("max_len", 0, {"data.max_len"});
  expect("inputs", "all", {"inputs"});  // a words key: unknown here
  // Models that cannot read rotation vectors or do not output rotations.
  auto refused = [&](const json& model, std::initializer_list<std::string> needles) {
    test::TempDir tmp("rotations_bad");
    json c = good;
    c["model"] = model;
    train::TrainOptions o;
    o.out_dir = tmp / "run";
    CAPTURE(model.dump());
    test::check_config_error([&] { train::run_training(c, o); }, needles);
  };
  refused({{"type", "exprnn"}, {"hidden", 8}}, {"model.type", "exprnn"});
  refused({{"type", "lstm"}, {"hidden", 8}}, {"model.head", "rotation"});
  refused({{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", "element"}}, {"model.readout", "rotation"});
  refused({{"type", "osm_rnn"}, {"group", "SO(3)"}, {"readout", "rotation"}}, {"model.readout", "element"});
  refused({{"type", "osm_rnn"}, {"group", "U(2)"}, {"rnn_drive", "element"}, {"readout", "rotation"}},
          {"model.readout", "U(2)"});
  json tf = good;
  tf["model"] = {{"type", "transformer"}, {"D", 8}, {"layers", 1}, {"heads", 2}, {"head", "rotation"}};
  tf["data"]["eval_lengths"] = {8, 8192};
  test::TempDir tmp("rotations_tf");
  train::TrainOptions o;
  o.out_dir = tmp / "run";
  CHECK_THROWS_WITH_AS(train::run_training(tf, o), doctest::Contains("data.eval_lengths: length 8192"), ConfigError);
  // A rotation head outside the rotations task.
  CHECK_THROWS_WITH_AS(models::make_model<float>(json{{"type", "lstm"}, {"head", "rotation"}}, 5, 1, 3),
                       doctest::Contains("model.head"), ConfigError);
  // Malformed features: non-finite, or not B*T*F of them.
  auto m = models::make_model<float>(kOsmSo3, 3, 1, 9);
  Array<float> x(Shape{1, 2, 3});
  x[4] = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH_AS(m->continuous_input()->forward_features(x, 1, 2, nullptr), doctest::Contains("not finite"),
                       ValueError);
  CHECK_THROWS_AS(m->continuous_input()->forward_features(Array<float>(Shape{1, 2, 3}), 1, 3, nullptr), ValueError);
}
