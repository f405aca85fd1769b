// Per-position classification for group word tasks (tasks/word_eval.hpp and the
// trainer's words path): the loss and the three accuracies against a hand
// computation, readouts sized by the class count for every model, configuration
// errors naming the key and value, a run that leaves its scores by length and
// resumes bit for bit, train.patience on validation loss, and the command line end
// to end (train, eval, plot, errors).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "autograd/ops.hpp"
#include "core/errors.hpp"
#include "data/group_words.hpp"
#include "groups/group.hpp"
#include "tests/model_test_utils.hpp"
#include "tests/resume_test_utils.hpp"
#include "tests/train_test_utils.hpp"
#include "train/checkpoint.hpp"
#include "train/run_config.hpp"
#include "train/trainer.hpp"
#include "autograd/tape.hpp"
#include "models/osm_rnn.hpp"
#include "tasks/word_diagnosis.hpp"
#include "tasks/words_task.hpp"
#include "tasks/word_eval.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {

// A tiny group word run: `model` on words:<group>, words of length 1..8.
json word_config(const std::string& group, const json& model, int64_t steps) {
  return {{"model", model},
          {"data",
           {{"dataset", "words:" + group},
            {"max_len", 8},
            {"eval_lengths", {8, 16}},
            {"val_sequences", 16},
            {"test_sequences", 8}}},
          {"train", test::tiny_train(steps, 8)}};
}

}  // namespace

TEST_CASE("word scores: loss and per-position, whole-word and last-position accuracy") {
  // Two words of length 3 over 4 classes.
  const std::vector<float> z = {2, 0, 0, 0,   0, 3, 0, 0,   0, 0, 1, 0,     // word 0: argmax 0, 1, 2
                                0, 0, 0, 5,   1, 1, 0, 0,   0, 2, 0, 0};    // word 1: argmax 3, 0 (tie), 1
  Array<float> logits(Shape{2, 3, 4});
  for (int64_t i = 0; i < 24; ++i) logits[i] = z[static_cast<size_t>(i)];
  const std::vector<int32_t> targets = {0, 1, 2, 3, 1, 1};  // word 1 misses its middle position (tie goes to 0)
  const tasks::WordScores s = tasks::score_words(logits, targets, 2, 3);
  CHECK(s.position_acc == doctest::Approx(5.0 / 6.0));
  CHECK(s.sequence_acc == doctest::Approx(0.5));
  CHECK(s.final_acc == doctest::Approx(1.0));
  CHECK(tasks::count_correct(logits, targets) == 5);
  double nll = 0;  // -log softmax, by hand
  for (int64_t r = 0; r < 6; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < 4; ++c) sum += std::exp(z[static_cast<size_t>(r * 4 + c)]);
    nll += std::log(sum) - z[static_cast<size_t>(r * 4 + targets[static_cast<size_t>(r)])];
  }
  CHECK(s.loss == doctest::Approx(nll / 6).epsilon(1e-6));
  // The training loss is the same per-position mean.
  CHECK(ag::cross_entropy(ag::Varf::constant(logits), targets).value().item() == doctest::Approx(s.loss).epsilon(1e-5));
  const std::vector<int32_t> last_wrong = {0, 1, 3, 3, 0, 2};
  const tasks::WordScores w = tasks::score_words(logits, last_wrong, 2, 3);
  CHECK(w.position_acc == doctest::Approx(4.0 / 6.0));
  CHECK(w.sequence_acc == doctest::Approx(0.0));
  CHECK(w.final_acc == doctest::Approx(0.0));
  CHECK_THROWS_AS(tasks::score_words(logits, {0, 1, 2, 3, 4, 0}, 2, 3), ValueError);  // class 4 of 4
  CHECK_THROWS_AS(tasks::score_words(logits, {0, 1, 2}, 1, 3), ShapeError);
}

TEST_CASE("every model reads out one logit per class when classes differ from inputs") {
  const int64_t V = 3, C = 7, B = 2, T = 5;
  for (const json& model : {json{{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", "token"}},
                           json{{"type", "osmformer"}, {"group", "SO(3)"}, {"layers", 1}, {"heads", 2}},
                           json{{"type", "transformer"}, {"D", 8}, {"layers", 1}, {"heads", 2}},
                           json{{"type", "lstm"}, {"hidden", 6}}, json{{"type", "exprnn"}, {"hidden", 6}}}) {
    CAPTURE(model.dump());
    auto m = models::make_model<float>(model, V, 1, C);
    CHECK(m->vocab_size() == V);
    CHECK(m->num_classes() == C);
    const std::vector<int32_t> in = {0, 1, 2, 1, 0, 2, 2, 1, 0, 0};
    const ag::Varf logits = m->forward(in, B, T, nullptr);
    CHECK(logits.shape() == Shape{B, T, C});
    // Evaluating the same words in one or several passes gives the same scores.
    data::Batch words;
    words.B = B;
    words.T = T;
    words.inputs = in;
    words.targets = {6, 5, 4, 3, 2, 1, 0, 6, 5, 4};
    const tasks::WordScores one = tasks::evaluate_words(*m, words, 1000), split = tasks::evaluate_words(*m, words, T);
    CHECK(one.loss == doctest::Approx(split.loss).epsilon(1e-6));
    CHECK(one.position_acc == doctest::Approx(split.position_acc));
    // A language model keeps C = V.
    CHECK(models::make_model<float>(model, V, 1)->num_classes() == V);
  }
}

TEST_CASE("word task configurations: bad values name the key and the value") {
  const json good = word_config("S5", {{"type", "lstm"}, {"hidden", 8}}, 4);
  const train::RunConfig rc = train::parse_run_config(good);
  CHECK(tasks::find_task_spec(rc.data.dataset).name == "words");
  CHECK(rc.data.section["eval_lengths"] == json{8, 16});
  CHECK_FALSE(rc.resolved()["train"].contains("seq_len"));
  CHECK(train::parse_run_config(rc.resolved()).resolved() == rc.resolved());
  CHECK_FALSE(rc.resolved()["data"].contains("curriculum_steps"));  // off: resolved as before it existed
  {
    json cur = good;
    cur["data"]["curriculum_steps"] = 500;
    const train::RunConfig rcc = train::parse_run_config(cur);
    CHECK(rcc.data.section["curriculum_steps"] == 500);
    CHECK(rcc.resolved()["data"]["max_len"] == rc.resolved()["data"]["max_len"]);
    CHECK(rcc.resolved()["data"]["curriculum_steps"] == 500);
    CHECK(train::parse_run_config(rcc.resolved()).resolved() == rcc.resolved());
  }
  auto expect = [&](const std::string& key, const json& value, std::initializer_list<std::string> needles) {
    json c = good;
    c["data"][key] = value;
    CAPTURE(c["data"].dump());
    test::check_config_error([&] { train::parse_run_config(c); }, needles);
  };
  expect("dataset", "words:Q8", {"data.dataset", "Q8"});
  expect("dataset", "words:", {"data.dataset", "words:<group>"});
  expect("min_len", 0, {"data.min_len", "0"});
  expect("max_len", 0, {"data.max_len", "0"});
  expect("eval_lengths", json{64, 65537}, {"data.eval_lengths", "65537", "over the limit"});
  expect("eval_lengths", json{0}, {"data.eval_lengths", "got 0"});
  expect("eval_lengths", json::array(), {"data.eval_lengths"});
  expect("inputs", "odd", {"data.inputs", "odd"});
  expect("curriculum_steps", -1, {"data.curriculum_steps", "-1"});
  expect("generator_steps", -2, {"data.generator_steps", "-2"});
  // A key of the alphabet phase's end: refused without generator batches, kept through
  // the resolved config with them, and refused when negative.
  auto check_phase_key = [&](const std::string& key, int value, int negative) {
    CAPTURE(key);
    expect(key, 100, {"data." + key, "data.generator_steps > 0"});
    json c = good;
    c["data"]["generator_steps"] = 20;
    c["data"][key] = value;
    const train::RunConfig r = train::parse_run_config(c);
    CHECK(r.resolved()["data"][key] == value);
    CHECK(train::parse_run_config(r.resolved()).resolved() == r.resolved());
    c["data"][key] = negative;
    CHECK_THROWS_WITH_AS(train::parse_run_config(c), doctest::Contains(("data." + key).c_str()), ConfigError);
  };
  check_phase_key("generator_ramp", 30, -1);
  check_phase_key("handover_curriculum_steps", 40, -3);
  // The generating set: S<n>'s Coxeter generators, refused elsewhere and where nothing draws from it.
  expect("generating_set", "odd", {"data.generating_set", "odd"});
  expect("generating_set", "coxeter", {"data.generating_set", "no effect", "data.generator_steps > 0"});
  {
    json c = good;
    c["data"]["generator_steps"] = 20;
    c["data"]["generating_set"] = "coxeter";
    const train::RunConfig r = train::parse_run_config(c);
    CHECK(r.resolved()["data"]["generating_set"] == "coxeter");
    CHECK(train::parse_run_config(r.resolved()).resolved() == r.resolved());
    c["data"]["dataset"] = "words:A5";
    test::check_config_error([&] { train::parse_run_config(c); }, {"data.generating_set", "S<n>", "A5"});
    CHECK_FALSE(rc.resolved()["data"].contains("generating_set"));  // standard: resolved as before it existed
    c["data"]["generating_set"] = "no_involutions";  // A5's 3-cycles
    CHECK(train::parse_run_config(c).resolved()["data"]["generating_set"] == "no_involutions");
    c["data"]["dataset"] = "words:Z2";
    test::check_config_error([&] { train::parse_run_config(c); }, {"data.generating_set", "Z2", "involution"});
  }
  expect("val_frac", 0.1, {"val_frac"});  // a text-corpus key: unknown here
  json c = good;
  c["train"]["seq_len"] = 64;
  CHECK_THROWS_WITH_AS(train::parse_run_config(c), doctest::Contains("train.seq_len"), ConfigError);
}

TEST_CASE("a words:Z2 run leaves accuracies by length, reloads, and resumes bit for bit") {
  test::TempDir tmp("words_run");
  const json cfg = word_config("Z2", {{"type", "transformer"}, {"D", 8}, {"layers", 1}, {"heads", 2}}, 12);
  train::TrainOptions a;
  a.out_dir = tmp / "full";
  const train::TrainResult r = train::run_training(cfg, a);
  REQUIRE(r.scores.is_object());
  CHECK(r.headline.find("test_acc@16") != std::string::npos);
  const json result = json::parse(test::read_text(tmp / "full/result.json"));
  CHECK(result["classes"] == 2);
  CHECK(result["input_vocab"] == 2);
  CHECK(result["stopped_early"] == false);
  REQUIRE(result["test"].size() == 2);
  CHECK(result["test"][0]["length"] == 8);
  CHECK(result["test"][1]["length"] == 16);
  for (const auto& s : result["test"]) {
    CHECK(s["position_acc"].get<double>() >= 0.0);
    CHECK(s["position_acc"].get<double>() <= 1.0);
    CHECK(s["sequences"] == 8);
  }
  CHECK(test::metrics_lines(tmp / "full", "acc").size() == 12);
  CHECK(test::metrics_lines(tmp / "full", "val_acc").size() == 3);  // steps 5, 10 and the end
  CHECK(test::metrics_lines(tmp / "full", "bpc").empty());
  // The checkpoint rebuilds a 2-class model whose scores match result.json.
  const train::LoadedModel m = train::load_model(tmp / "full/last.json");
  const data::WordTask* words = tasks::word_task_of(*m.task);
  REQUIRE(words);
  CHECK(m.model->num_classes() == 2);
  const auto again = tasks::evaluate_word_lengths(*m.model, *words, 3, data::WordSplit::Test, {8, 16}, 8);
  CHECK(again[1].position_acc == result["test"][1]["position_acc"].get<double>());
  // A "vocab" that disagrees with the config is refused.
  json ckpt = train::read_checkpoint(tmp / "full/last.json");
  ckpt["vocab"]["classes"] = 3;
  test::write_text(tmp / "bad.json", ckpt.dump());
  CHECK_THROWS_WITH_AS(train::load_model(tmp / "bad.json"), doctest::Contains("does not match"), IoError);

  CHECK(test::train_cut_and_resumed(cfg, tmp / "split", 7).steps_done == 12);
  test::check_same_losses(tmp / "full", tmp / "split");
  const json rb = json::parse(test::read_text(tmp / "split/result.json"));
  CHECK(rb["test"] == result["test"]);
  CHECK(rb["tokens_seen"] == result["tokens_seen"]);
}

TEST_CASE("train.pin holds a parameter at its value from a step on, resumes exactly, and names bad input") {
  test::TempDir tmp("words_pin");
  json cfg = word_config("Z2", {{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", "token"}}, 8);
  cfg["train"]["pin"] = json::array({{{"param", "log_tau"}, {"value", 0.25}, {"from_step", 3}}});
  auto log_tau_after = [&](const char* dir, int64_t stop_at, bool resume) {
    train::TrainOptions o;
    o.out_dir = tmp / dir;
    o.stop_at = stop_at;
    o.resume = resume;
    train::run_training(resume ? json() : cfg, o);
    return train::load_model(tmp / (std::string(dir) + "/last.json")).model->find_parameter("log_tau")->var.value()[0];
  };
  CHECK(log_tau_after("early", 2, false) != 0.25f);  // before from_step it trains as usual
  CHECK(log_tau_after("early", 0, true) == 0.25f);   // resumed past from_step: pinned
  CHECK(log_tau_after("full", 0, false) == 0.25f);
  // The resumed run is the uninterrupted one, step for step.
  const auto la = test::metrics_lines(tmp / "full", "loss"), lb = test::metrics_lines(tmp / "early", "loss");
  REQUIRE(la.size() == lb.size());
  for (size_t i = 0; i < la.size(); ++i) CHECK(la[i]["loss"].get<double>() == lb[i]["loss"].get<double>());
  CHECK(json::parse(test::read_text(tmp / "full/config.json"))["train"]["pin"][0]["from_step"] == 3);
  // Pinned from the start at log_tau = 0, the run is the run with model.tau = 1 (no log_tau
  // at all), loss and gradient norm alike: a pinned parameter's gradient is not clipped with.
  json pinned = cfg, fixed = cfg;
  pinned["train"]["pin"][0] = {{"param", "log_tau"}, {"value", 0.0}, {"from_step", 0}};
  fixed["train"].erase("pin");
  fixed["model"]["tau"] = 1.0;
  auto train_into = [&](const char* name, const json& c) {
    train::TrainOptions o;
    o.out_dir = tmp / name;
    train::run_training(c, o);
  };
  train_into("pinned", pinned);
  train_into("fixed", fixed);
  const auto lp = test::metrics_lines(tmp / "pinned", "loss"), lf = test::metrics_lines(tmp / "fixed", "loss");
  REQUIRE(lp.size() == lf.size());
  for (size_t i = 0; i < lp.size(); ++i) {
    CHECK(lp[i]["loss"].get<double>() == lf[i]["loss"].get<double>());
    CHECK(lp[i]["grad_norm"].get<double>() == lf[i]["grad_norm"].get<double>());
  }
  // Bad input: one line naming the key.
  json bad = cfg;
  bad["train"]["pin"][0]["param"] = "log_taux";
  train::TrainOptions o;
  o.out_dir = tmp / "bad";
  CHECK_THROWS_WITH_AS(train::run_training(bad, o), doctest::Contains("did you mean 'log_tau'"), ConfigError);
  bad["train"]["pin"] = json{{"param", "log_tau"}};
  CHECK_THROWS_WITH_AS(train::run_training(bad, o), doctest::Contains("train.pin: expected an array"), ConfigError);
  bad["train"]["pin"] = json::array({{{"param", "log_tau"}, {"from_step", 3}}});
  CHECK_THROWS_WITH_AS(train::run_training(bad, o), doctest::Contains("train.pin[0].value"), ConfigError);
  bad["train"]["pin"] = json::array({{{"param", "log_tau"}, {"value", 0}, {"from", 3}}});
  CHECK_THROWS_WITH_AS(train::run_training(bad, o), doctest::Contains("unknown key 'from'"), ConfigError);
}

TEST_CASE("train.patience stops a words run whose validation loss stops improving, and result.json says so") {
  test::TempDir tmp("words_patience");
  // lr 1e-30 leaves every float weight unchanged and the validation words are fixed, so
  // every evaluation gives the same loss: only the first (step 5) is a new best, and
  // patience 2 stops the run at the second evaluation after it, step 15 of 40.
  json cfg = word_config("Z2", {{"type", "transformer"}, {"D", 8}, {"layers", 1}, {"heads", 2}}, 40);
  cfg["train"]["lr"] = 1e-30;
  cfg["train"]["patience"] = 2;
  train::TrainOptions opt;
  opt.out_dir = tmp / "run";
  const train::TrainResult r = train::run_training(cfg, opt);
  CHECK(r.stopped_early);
  CHECK(r.steps_done == 15);
  CHECK(r.best_step == 5);
  const json result = json::parse(test::read_text(tmp / "run/result.json"));
  CHECK(result["stopped_early"] == true);
  CHECK(result["steps"] == 15);
  CHECK(result["best_step"] == 5);
}

TEST_CASE("the OSM-RNN with token drive learns parity at its training length") {
  // (Whether it keeps it at longer lengths is what docs/state_tracking.md's table measures.)
  test::TempDir tmp("words_parity");
  json cfg = word_config("Z2", {{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", "token"}}, 300);
  cfg["data"]["max_len"] = 16;
  cfg["data"]["eval_lengths"] = {16};
  cfg["train"]["lr"] = 0.05;
  cfg["train"]["eval_interval"] = 100;
  train::TrainOptions opt;
  opt.out_dir = tmp / "run";
  const train::TrainResult r = train::run_training(cfg, opt);
  CHECK(r.scores["val"]["position_acc"].get<double>() > 0.99);
  CHECK(r.scores["test"][0]["position_acc"].get<double>() > 0.99);
  CHECK(r.scores["steps_to_99"].is_number_integer());
}

namespace {

// The skew logarithm L (3x3, row-major) of a rotation Q in SO(3): L = theta [n]_x with
// Q = exp(L) (Rodrigues), theta in [0, pi].
std::array<double, 9> so3_log(const std::array<double, 9>& Q) {
  const double c = std::clamp((Q[0] + Q[4] + Q[8] - 1) / 2, -1.0, 1.0), theta = std::acos(c);
  std::array<double, 3> n{};
  if (theta < 1e-9) return {};
  if (theta > M_PI - 1e-6) {  // n n^T = (Q + I) / 2
    const int k = Q[0] >= Q[4] && Q[0] >= Q[8] ? 0 : Q[4] >= Q[8] ? 1 : 2;
    const double nk = std::sqrt((Q[static_cast<size_t>(4 * k)] + 1) / 2);
    for (int i = 0; i < 3; ++i) n[static_cast<size_t>(i)] = i == k ? nk : Q[static_cast<size_t>(3 * i + k)] / 2 / nk;
  } else {
    const double s = 2 * std::sin(theta);
    n = {(Q[7] - Q[5]) / s, (Q[2] - Q[6]) / s, (Q[3] - Q[1]) / s};
  }
  return {0, -theta * n[2], theta * n[1], theta * n[2], 0, -theta * n[0], -theta * n[1], theta * n[0], 0};
}

}  // namespace

TEST_CASE("the token-drive OSM-RNN holds S3 exactly at any length with the solution of docs/state_tracking.md") {
  // rho(sigma) = sgn(sigma) P_sigma, (P_sigma)_{i, sigma(i)} = 1, is a faithful map of S3 into SO(3) with
  // rho(a . b) = rho(a) rho(b) for the library's "a then b". With Gamma = pi I and token elements M_x whose
  // skew part is log(rho(x)) / pi, the update multiplies the state by rho(x); prototypes P_v = rho(v).
  const data::WordTask task("S3");
  const data::FiniteGroup& G = task.group();
  auto group = groups::make_group("SO(3)");
  auto m = models::make_model<float>(
      json{{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", "token"}, {"mixing", "linear"}}, 6, 1, 6);
  Array<float>& embed = m->find_parameter("embed")->var.value();
  Array<float>& proto = m->find_parameter("proto")->var.value();
  for (int32_t v = 0; v < 6; ++v) {
    const std::vector<int32_t>& p = G.element(v);
    const double sign = data::permutation_sign(p);
    std::array<double, 9> Q{};
    for (size_t i = 0; i < 3; ++i) Q[3 * i + static_cast<size_t>(p[i])] = sign;
    const std::array<double, 9> L = so3_log(Q);
    const double theta = std::sqrt((L[1] * L[1] + L[2] * L[2] + L[5] * L[5]));
    Array<double> A(Shape{1, 3, 3}), B(Shape{1, 3, 3});
    for (int64_t k = 0; k < 9; ++k) {
      A[k] = L[static_cast<size_t>(k)];  // log rho(v): the prototype
      // M_v rotates about the same axis by phi with sin(phi) = theta / pi, so Pi(M_v) = L / pi.
      B[k] = theta > 0 ? L[static_cast<size_t>(k)] * std::asin(theta / M_PI) / theta : 0.0;
    }
    const Array<double> a = group->vee(A), b = group->vee(B);
    for (int64_t k = 0; k < 3; ++k) {
      proto.at(v, k) = static_cast<float>(a[k]);
      embed.at(v, k) = static_cast<float>(b[k]);
    }
  }
  Array<float>& mix = m->find_parameter("mix")->var.value();
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t k = 0; k < 3; ++k) mix.at(i, k) = i == k ? static_cast<float>(M_PI) : 0.0f;
  m->find_parameter("log_tau")->var.value()[0] = 3.0f;
  const auto scores = tasks::evaluate_word_lengths(*m, task, 5, data::WordSplit::Test, {64, 4096, 65536}, 4);
  for (const auto& s : scores) {
    CAPTURE(s.length);
    CHECK(s.position_acc == 1.0);
    CHECK(s.sequence_acc == 1.0);
  }
}

TEST_CASE("command line: train, eval and plot a words:Z2 run, and one-line errors for bad input") {
  test::TempDir tmp("words_cli");
  const json cfg = word_config("Z2", {{"type", "lstm"}, {"hidden", 8}}, 10);
  test::write_text(tmp / "c.json", cfg.dump(2));
  const test::Proc t = test::run_liegrad({"train", "--config", tmp / "c.json", "--out", tmp / "run", "--quiet"}, tmp.path.string());
  INFO("stderr: " << t.err);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("test_acc@16") != std::string::npos);
  const test::Proc e = test::run_liegrad({"eval", "--checkpoint", tmp / "run/last.json", "--json"}, tmp.path.string());
  REQUIRE(e.exit_code == 0);
  const json ev = json::parse(e.out);
  const json result = json::parse(test::read_text(tmp / "run/result.json"));
  REQUIRE(ev["lengths"].size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(ev["lengths"][i]["length"] == result["test"][i]["length"]);
    CHECK(ev["lengths"][i]["position_acc"].get<double>() == doctest::Approx(result["test"][i]["position_acc"].get<double>()));
    CHECK(ev["lengths"][i]["final_acc"].get<double>() == doctest::Approx(result["test"][i]["final_acc"].get<double>()));
  }
  const test::Proc e2 = test::run_liegrad({"eval", "--checkpoint", tmp / "run/last.json", "--lengths", "4,32"}, tmp.path.string());
  CHECK(e2.exit_code == 0);
  CHECK(e2.out.find("position_acc") != std::string::npos);
  const test::Proc p = test::run_liegrad({"plot", tmp / "run", tmp / "run", "--out", tmp / "acc.svg"}, tmp.path.string());
  CHECK(p.exit_code == 0);
  CHECK(test::read_text(tmp / "acc.svg").find("against length") != std::string::npos);

  auto expect_error = [&](const test::Proc& q, std::initializer_list<std::string> needles) {
    INFO("exit " << q.exit_code << " stderr: " << q.err);
    CHECK(q.exit_code != 0);
    CHECK(q.exit_code < 128);
    CHECK(std::count(q.err.begin(), q.err.end(), '\n') == 1);
    for (const auto& n : needles) CHECK(q.err.find(n) != std::string::npos);
  };
  expect_error(test::run_liegrad({"eval", "--checkpoint", tmp / "run/last.json", "--lengths", "65537"}, tmp.path.string()),
               {"--lengths", "65537", "limit"});
  expect_error(test::run_liegrad({"train", "--config", tmp / "c.json", "--out", tmp / "r2", "--set", "data.dataset=words:Q8"},
                                 tmp.path.string()),
               {"data.dataset", "Q8"});
  expect_error(test::run_liegrad({"train", "--config", tmp / "c.json", "--out", tmp / "r3", "--set", "data.min_len=0"},
                                 tmp.path.string()),
               {"data.min_len", "0"});
  expect_error(test::run_liegrad({"train", "--config", tmp / "c.json", "--out", tmp / "r4", "--set",
                                  "data.eval_lengths=[64,100000]"},
                                 tmp.path.string()),
               {"data.eval_lengths", "100000"});
  expect_error(test::run_liegrad({"sample", "--checkpoint", tmp / "run/last.json"}, tmp.path.string()), {"generates no text"});
}

namespace {

// An element-drive OSM-RNN on words:S3 holding the exact solution: rho(sigma) =
// sgn(sigma) P_sigma in SO(3) (see the test above), token coordinates b_v = vee(log
// rho(v)) so that with identity mixing N_v = exp(hat(b_v)) = rho(v), prototypes P_v =
// rho(v). `nudge` is added to the first coordinate of symbol 1's b.
std::unique_ptr<models::Model<float>> s3_element_solution(const data::WordTask& task, double nudge) {
  const data::FiniteGroup& G = task.group();
  auto group = groups::make_group("SO(3)");
  auto m = models::make_model<float>(
      json{{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", "element"}, {"mixing", "identity"}}, 6, 1, 6);
  Array<float>& embed = m->find_parameter("embed")->var.value();
  Array<float>& proto = m->find_parameter("proto")->var.value();
  // coordinates of log rho(c) for each element id c
  auto log_rho = [&](int32_t c) {
    const std::vector<int32_t>& p = G.element(c);
    const double sign = data::permutation_sign(p);
    std::array<double, 9> Q{};
    for (size_t i = 0; i < 3; ++i) Q[3 * i + static_cast<size_t>(p[i])] = sign;
    const std::array<double, 9> L = so3_log(Q);
    Array<double> A(Shape{1, 3, 3});
    for (int64_t k = 0; k < 9; ++k) A[k] = L[static_cast<size_t>(k)];
    return group->vee(A);
  };
  for (int32_t c = 0; c < 6; ++c) {
    const Array<double> e = log_rho(task.element_of(c)), p = log_rho(c);  // symbol c's element; class c
    for (int64_t k = 0; k < 3; ++k) {
      embed.at(c, k) = static_cast<float>(e[k] + (c == 1 && k == 0 ? nudge : 0.0));
      proto.at(c, k) = static_cast<float>(p[k]);
    }
  }
  m->find_parameter("log_tau")->var.value()[0] = 3.0f;
  return m;
}

}  // namespace

TEST_CASE("element drive: one step from the identity is the token's own element") {
  auto m = models::make_model<double>(
      json{{"type", "osm_rnn"}, {"group", "SO(4)"}, {"rnn_drive", "element"}, {"mixing", "identity"}}, 5, 3);
  auto* rnn = dynamic_cast<models::OsmRnn<double>*>(m.get());
  REQUIRE(rnn);
  {
    ag::NoGrad ng;
    const Array<double> H = rnn->encode({2}, 1, 1, nullptr).value();
    const Array<double> N = rnn->transitions();  // exp(hat(b_v)) = M_v for identity mixing
    for (int64_t k = 0; k < 16; ++k) CHECK(H[k] == doctest::Approx(N[2 * 16 + k]).epsilon(1e-12));
  }
  SUBCASE("gradients") {
    auto g = models::make_model<double>(
        json{{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", "element"}, {"init_scale", 2.0}}, 7, 5);
    test::model_gradcheck(*g, 2, 5, 27);
  }
  SUBCASE("one-line errors") {
    CHECK_THROWS_WITH_AS(models::make_model<float>(json{{"type", "osm_rnn"}, {"rnn_drive", "element"},
                                                        {"group_param", "manifold"}},
                                                   5, 1),
                         doctest::Contains("group_param"), ConfigError);
    auto rel = models::make_model<float>(json{{"type", "osm_rnn"}, {"group", "SO(3)"}}, 5, 1);
    CHECK_THROWS_AS(dynamic_cast<models::OsmRnn<float>&>(*rel).transitions(), ValueError);
  }
}

TEST_CASE("tied readout: the prototypes are the transitions, and a representation reads out exactly") {
  SUBCASE("the prototypes are N_c, no proto parameter, and the count drops by C m") {
    for (const char* drive : {"token", "element"}) {
      CAPTURE(drive);
      const json cfg{{"type", "osm_rnn"}, {"group", "SO(4)"}, {"rnn_drive", drive}};
      json tied = cfg;
      tied["readout"] = "tied";
      auto a = models::make_model<double>(cfg, 5, 3);
      auto b = models::make_model<double>(tied, 5, 3);
      CHECK(b->find_parameter("proto") == nullptr);
      CHECK(a->parameter_count() - b->parameter_count() == 5 * 6);  // C m, m = dim so(4) = 6
      auto& rnn = dynamic_cast<models::OsmRnn<double>&>(*b);
      CHECK(rnn.tied_readout());
      const Array<double> N = rnn.transitions(), P = rnn.prototypes();
      REQUIRE(N.shape() == P.shape());
      for (int64_t k = 0; k < N.size(); ++k) CHECK(N[k] == P[k]);
    }
  }
  SUBCASE("full-loss gradients through both uses of N (scan and readout)") {
    for (const char* drive : {"token", "element"}) {
      CAPTURE(drive);
      auto g = models::make_model<double>(json{{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", drive},
                                               {"readout", "tied"}, {"init_scale", 2.0}},
                                          6, 5);
      test::model_gradcheck(*g, 2, 5, 31);
    }
  }
  SUBCASE("the exact S3 solution with tied prototypes is right at every position of a long word") {
    const data::WordTask task("S3");
    auto exact = s3_element_solution(task, 0.0);  // untied; copy its coordinates into a tied model
    auto tied = models::make_model<float>(
        json{{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", "element"}, {"mixing", "identity"},
             {"readout", "tied"}},
        6, 1, 6);
    tied->find_parameter("embed")->var.value() = exact->find_parameter("embed")->var.value();
    tied->find_parameter("log_tau")->var.value()[0] = 3.0f;
    const auto d = tasks::diagnose_word_model(*tied, task, 5, {64, 4096}, 4);
    REQUIRE(d.has_value());
    for (const auto& p : d->drift) {
      CAPTURE(p.length);
      CHECK(p.to_true_prototype < 1e-3);
      CHECK(p.accuracy == 1.0);
    }
  }
  SUBCASE("one-line errors") {
    CHECK_THROWS_WITH_AS(models::make_model<float>(json{{"type", "osm_rnn"}, {"readout", "tied"}}, 5, 1),
                         doctest::Contains("rnn_drive"), ConfigError);
    CHECK_THROWS_WITH_AS(
        models::make_model<float>(json{{"type", "osm_rnn"}, {"rnn_drive", "token"}, {"readout", "tied"}}, 5, 1, 3),
        doctest::Contains("one class per input symbol"), ConfigError);
    CHECK_THROWS_WITH_AS(models::make_model<float>(json{{"type", "osm_rnn"}, {"readout", "tide"}}, 5, 1),
                         doctest::Contains("readout"), ConfigError);
  }
}

TEST_CASE("defect spectrum: a representation on three directions and arbitrary rotations on two") {
  // N_g = diag(rho(g), R_g) in SO(5): rho(g) = sgn(g) P_g is S3 in SO(3) (see above), R_g a
  // rotation of the last two coordinates by an angle that is no homomorphism.
  const data::WordTask task("S3");
  const data::FiniteGroup& G = task.group();
  Array<float> N(Shape{6, 5, 5});
  for (int32_t v = 0; v < 6; ++v) {
    const std::vector<int32_t>& p = G.element(task.element_of(v));
    const float sign = static_cast<float>(data::permutation_sign(p));
    for (size_t i = 0; i < 3; ++i) N.at(v, static_cast<int64_t>(i), p[i]) = sign;
    const double a = 0.3 + 0.7 * v;
    N.at(v, 3, 3) = static_cast<float>(std::cos(a));
    N.at(v, 3, 4) = static_cast<float>(-std::sin(a));
    N.at(v, 4, 3) = static_cast<float>(std::sin(a));
    N.at(v, 4, 4) = static_cast<float>(std::cos(a));
  }
  const tasks::WordDiagnosis d = tasks::transition_defects(task, N);
  REQUIRE(d.defect_spectrum.size() == 5);
  CHECK(std::is_sorted(d.defect_spectrum.begin(), d.defect_spectrum.end()));
  CHECK(d.exact_dims == 3);
  CHECK(d.exact_rms_defect < 1e-6);
  CHECK(d.rest_rms_defect > tasks::kExactDirection);
  CHECK(d.homomorphism_defect_max > 0.5);  // the whole-matrix defect cannot tell the two parts apart
  REQUIRE(d.exact_basis.size() == 15);
  for (int64_t i = 3; i < 5; ++i)
    for (int64_t c = 0; c < 3; ++c) CHECK(std::abs(d.exact_basis[static_cast<size_t>(i * 3 + c)]) < 1e-6);
  const nlohmann::json j = d.to_json();
  CHECK(j.at("exact_dims") == 3);
  CHECK(j.at("defect_spectrum").size() == 5);
}

TEST_CASE("model.tau fixes the readout temperature: no log_tau parameter, logits scale with it") {
  for (const char* type : {"osm_rnn", "osmformer"}) {
    CAPTURE(type);
    json learned{{"type", type}, {"group", "SO(3)"}};
    if (std::string(type) == "osmformer") learned.update(json{{"layers", 1}, {"heads", 1}});
    json fixed = learned;
    fixed["tau"] = 2.5;
    auto a = models::make_model<double>(learned, 5, 3);
    auto b = models::make_model<double>(fixed, 5, 3);
    CHECK(b->find_parameter("log_tau") == nullptr);
    CHECK(a->parameter_count() - b->parameter_count() == 1);
    CHECK(b->config().at("tau").get<double>() == 2.5);
    CHECK_FALSE(a->config().contains("tau"));  // absent = learned: older runs resolve as before
    // Same weights, log_tau = log 2.5 in the learned model: the same logits.
    for (const auto& p : b->parameters()) a->find_parameter(p.name)->var.value() = p.var.value();
    a->find_parameter("log_tau")->var.value()[0] = std::log(2.5);
    const std::vector<int32_t> x{0, 3, 1, 4, 2, 2};
    const Array<double> la = a->forward(x, 2, 3).value(), lb = b->forward(x, 2, 3).value();
    for (int64_t k = 0; k < la.size(); ++k) CHECK(la[k] == doctest::Approx(lb[k]).epsilon(1e-12));
    test::model_gradcheck(*b, 2, 3, 7);
  }
  CHECK_THROWS_WITH_AS(models::make_model<float>(json{{"type", "osm_rnn"}, {"tau", 0}}, 5, 1),
                       doctest::Contains("model.tau"), ConfigError);
  CHECK_THROWS_WITH_AS(models::make_model<float>(json{{"type", "osm_rnn"}, {"tau", "fixed"}}, 5, 1),
                       doctest::Contains("learned"), ConfigError);
  CHECK_NOTHROW(models::make_model<float>(json{{"type", "osm_rnn"}, {"tau", "learned"}}, 5, 1));
}

TEST_CASE("word diagnosis: an exact solution has no defect and no drift; a perturbed one shows both") {
  const data::WordTask task("S3");
  const std::vector<int64_t> lengths = {64, 4096};
  auto exact = s3_element_solution(task, 0.0);
  const auto d = tasks::diagnose_word_model(*exact, task, 5, lengths, 4);
  REQUIRE(d.has_value());
  CHECK(d->state_independent);
  CHECK(d->pairs == 36);  // inputs are all 6 elements: every product is an input
  CHECK(d->homomorphism_defect_max < 1e-5);
  CHECK(d->order_defect_max < 1e-5);
  REQUIRE(d->drift.size() == 2);
  for (const auto& p : d->drift) {
    CAPTURE(p.length);
    CHECK(p.to_true_prototype < 1e-3);
    CHECK(p.to_nearest_prototype == doctest::Approx(p.to_true_prototype).epsilon(1e-6));
    CHECK(p.accuracy == 1.0);
  }
  CHECK(d->exact_dims == 3);  // exact on the whole of R^3
  CHECK(d->exact_rms_defect < 1e-5);
  for (const auto& p : d->drift) CHECK(p.on_exact_subspace < 1e-3);
  auto off = s3_element_solution(task, 0.05);
  const auto e = tasks::diagnose_word_model(*off, task, 5, lengths, 4);
  REQUIRE(e.has_value());
  CHECK(e->homomorphism_defect_max > 0.02);
  CHECK(e->order_defect_max > 0.02);
  CHECK(e->drift[1].to_true_prototype > e->drift[0].to_true_prototype);  // the error compounds with length
  CHECK(e->drift[1].to_true_prototype > 0.1);
  CHECK(e->exact_rms_defect > 0.01);  // still below kExactDirection, but no longer zero
  CHECK(e->drift[1].on_exact_subspace > e->drift[0].on_exact_subspace);
  // A relative-drive model has no transitions: drift only.
  auto rel = models::make_model<float>(json{{"type", "osm_rnn"}, {"group", "SO(3)"}}, 6, 1, 6);
  const auto r = tasks::diagnose_word_model(*rel, task, 5, lengths, 2);
  REQUIRE(r.has_value());
  CHECK_FALSE(r->state_independent);
  CHECK(r->drift.size() == 2);
  // Not an OSM-RNN: no diagnosis.
  auto lstm = models::make_model<float>(json{{"type", "lstm"}, {"hidden", 4}}, 6, 1, 6);
  CHECK_FALSE(tasks::diagnose_word_model(*lstm, task, 5, lengths, 2).has_value());
}
