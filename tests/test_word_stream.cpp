// Streamed evaluation of long words (data::WordStream, tasks::evaluate_word_stream):
// the stream yields exactly the fixed evaluation words of data::word_eval_set, in
// any chunking; past the one-pass limit its targets are still the running products;
// a recurrent model scored chunk by chunk with its state carried gives the scores of
// the one-pass evaluation (the same argmax at every position, the loss to double
// rounding); and lengths over the limits, for recurrent models and for the
// transformers, end in one-line errors that name the value and the limit, from the
// library, the configuration and the trainer.
#include <doctest/doctest.h>

#include <functional>

#include "core/errors.hpp"
#include "data/group_words.hpp"
#include "models/model.hpp"
#include "tests/temp_dir.hpp"
#include "tests/train_test_utils.hpp"
#include "train/run_config.hpp"
#include "train/trainer.hpp"
#include "tasks/word_eval.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {

// Reads every word of `stream` in chunks of `chunk`, `rows` words at a time, into one
// (count, length) batch.
data::Batch read_all(data::WordStream& stream, int64_t rows, int64_t chunk) {
  const int64_t words = stream.count(), L = stream.length();
  data::Batch out;
  out.B = words;
  out.T = L;
  out.inputs.assign(static_cast<size_t>(words * L), -1);
  out.targets.assign(static_cast<size_t>(words * L), -1);
  for (int64_t b0 = 0; b0 < words; b0 += rows) {
    const int64_t n = std::min(rows, words - b0);
    stream.start(b0, n);
    while (!stream.finished()) {
      const int64_t t0 = stream.position();
      const data::Batch c = stream.next(chunk);
      CHECK(c.B == n);
      CHECK(c.starts_new_pass == (t0 == 0));
      for (int64_t b = 0; b < n; ++b)
        for (int64_t t = 0; t < c.T; ++t) {
          const auto from = static_cast<size_t>(b * c.T + t), to = static_cast<size_t>((b0 + b) * L + t0 + t);
          out.inputs[to] = c.inputs[from];
          out.targets[to] = c.targets[from];
        }
    }
  }
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

void check_message(const std::string& m, std::initializer_list<std::string> needles) {
  CAPTURE(m);
  CHECK(m.find('\n') == std::string::npos);
  for (const auto& n : needles) CHECK(m.find(n) != std::string::npos);
}

}  // namespace

TEST_CASE("word stream: the fixed evaluation words, chunk by chunk, in any chunking") {
  const data::WordTask task("S5");
  const data::Batch whole = data::word_eval_set(task, 4, data::WordSplit::Test, 300, 7);
  for (const auto& [rows, chunk] : std::vector<std::pair<int64_t, int64_t>>{{7, 300}, {3, 64}, {1, 1}, {2, 7}, {7, 1000}}) {
    CAPTURE(rows);
    CAPTURE(chunk);
    data::WordStream stream(task, 4, data::WordSplit::Test, 300, 7);
    const data::Batch got = read_all(stream, rows, chunk);
    CHECK(got.inputs == whole.inputs);
    CHECK(got.targets == whole.targets);
  }
  // Another split or seed gives other words, as word_eval_set does.
  data::WordStream val(task, 4, data::WordSplit::Val, 300, 7);
  CHECK(read_all(val, 7, 300).inputs != whole.inputs);

  // Past the one-pass limit the targets still continue the running products across chunks.
  const int64_t L = data::kMaxWordLength + 1000;
  data::WordStream longer(task, 4, data::WordSplit::Test, L, 2);
  const data::Batch w = read_all(longer, 2, 1024);
  for (int64_t b = 0; b < 2; ++b) {
    const std::vector<int32_t> row(w.inputs.begin() + b * L, w.inputs.begin() + (b + 1) * L);
    const std::vector<int32_t> tg(w.targets.begin() + b * L, w.targets.begin() + (b + 1) * L);
    CHECK(task.running_products(row) == tg);
  }
  // Bad use names what is wrong.
  check_message(error_of([&] { longer.start(1, 2); }), {"[1, 3)", "2 words"});
  check_message(error_of([&] { data::WordStream(task, 4, data::WordSplit::Test, 16, 2).next(4); }), {"no started words"});
  check_message(error_of([&] {
                  data::WordStream s(task, 4, data::WordSplit::Test, 16, 2);
                  s.start(0, 1);
                  s.next(0);
                }),
                {"chunk", "got 0"});
}

TEST_CASE("streamed evaluation: chunks of 64 with the state carried score 256-long words as one pass does") {
  const data::WordTask task("S3");
  const std::vector<json> models = {
      {{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", "token"}, {"mixing", "linear"}},
      {{"type", "osm_rnn"}, {"group", "SO(4)"}, {"rnn_drive", "relative"}},
      {{"type", "lstm"}, {"hidden", 16}},
      {{"type", "exprnn"}, {"hidden", 8}},
  };
  for (const json& cfg : models) {
    CAPTURE(cfg.dump());
    auto m = models::make_model<float>(cfg, task.input_vocab(), 9, task.classes());
    REQUIRE(m->recurrent());
    const tasks::WordScores one =
        tasks::evaluate_words(*m, data::word_eval_set(task, 2, data::WordSplit::Test, 256, 6), 512);
    data::WordStream stream(task, 2, data::WordSplit::Test, 256, 6);
    const tasks::WordScores chunked = tasks::evaluate_word_stream(*m, stream, 64, 128);
    CHECK(chunked.length == 256);
    CHECK(chunked.sequences == 6);
    CHECK(chunked.position_acc == one.position_acc);
    CHECK(chunked.sequence_acc == one.sequence_acc);
    CHECK(chunked.final_acc == one.final_acc);
    CHECK(chunked.loss == doctest::Approx(one.loss).epsilon(1e-6));
    // The stream restarts its words for every evaluation.
    CHECK(tasks::evaluate_word_stream(*m, stream, 64, 128).loss == chunked.loss);
    // Up to one chunk, the default path is the one-pass evaluation itself.
    const auto by_length = tasks::evaluate_word_lengths(*m, task, 2, data::WordSplit::Test, {256}, 6);
    CHECK(by_length[0].loss == doctest::Approx(one.loss).epsilon(1e-12));
    CHECK(by_length[0].position_acc == one.position_acc);
  }
}

TEST_CASE("streamed evaluation: lengths over the limits end in one-line errors naming the value and the limit") {
  const data::WordTask task("Z2");
  auto rnn = models::make_model<float>(json{{"type", "lstm"}, {"hidden", 4}}, 2, 1, 2);
  auto tf = models::make_model<float>(json{{"type", "transformer"}, {"D", 8}, {"layers", 1}, {"heads", 2}}, 2, 1, 2);
  const int64_t over = data::kMaxStreamedWordLength + 1;
  check_message(error_of([&] { tasks::check_word_eval_lengths(*rnn, {64, over}, "--lengths"); }),
                {"--lengths", std::to_string(over), "limit of 65536"});
  check_message(error_of([&] { tasks::check_word_eval_lengths(*rnn, {0}, "--lengths"); }), {"--lengths", "got 0"});
  CHECK_NOTHROW(tasks::check_word_eval_lengths(*rnn, {64, 65536}, "--lengths"));
  check_message(error_of([&] { tasks::check_word_eval_lengths(*tf, {16384}, "--lengths"); }),
                {"--lengths", "16384", "limit of 4096", "transformer", "recurrent models"});
  CHECK_NOTHROW(tasks::check_word_eval_lengths(*tf, {4096}, "--lengths"));
  check_message(error_of([&] { tasks::evaluate_word_lengths(*tf, task, 1, data::WordSplit::Test, {8, 8192}, 2); }),
                {"8192", "transformer"});
  check_message(error_of([&] { data::WordStream(task, 1, data::WordSplit::Test, over, 1); }),
                {std::to_string(over), "65536"});
  data::WordStream long_words(task, 1, data::WordSplit::Test, 8192, 1);
  check_message(error_of([&] { tasks::evaluate_word_stream(*tf, long_words, 4096); }), {"8192", "transformer"});

  // The configuration accepts data.eval_lengths up to 65,536 and names a longer one.
  const json cfg = {{"model", {{"type", "transformer"}, {"D", 8}, {"layers", 1}, {"heads", 2}}},
                    {"data", {{"dataset", "words:Z2"}, {"max_len", 8}, {"eval_lengths", {8, 65536}}}},
                    {"train", test::tiny_train(2, 4)}};
  CHECK(train::parse_run_config(cfg).data.section["eval_lengths"] == json{8, 65536});
  json bad = cfg;
  bad["data"]["eval_lengths"] = {8, over};
  check_message(error_of([&] { train::parse_run_config(bad); }), {"data.eval_lengths", std::to_string(over)});
  // The trainer refuses a transformer with lengths past its one-pass limit before training.
  test::TempDir tmp("word_stream_limits");
  train::TrainOptions o;
  o.out_dir = tmp / "run";
  const std::string m = error_of([&] { train::run_training(cfg, o); });
  check_message(m, {"data.eval_lengths", "65536", "transformer"});
  o.out_dir = tmp / "run2";
  CHECK_THROWS_AS(train::run_training(cfg, o), ConfigError);
}
