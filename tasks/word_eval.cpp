// Group word metrics (see word_eval.hpp). Log-likelihoods are summed in double.
#include "tasks/word_eval.hpp"

#include <algorithm>

#include "autograd/ops.hpp"
#include "core/errors.hpp"
#include "tasks/eval_scope.hpp"

namespace liegrad::tasks {

namespace {

// The argmax of row r of logits (R,C), ties to the lowest id.
int32_t row_argmax(const float* row, int64_t C) {
  int64_t best = 0;
  for (int64_t c = 1; c < C; ++c)
    if (row[c] > row[best]) best = c;
  return static_cast<int32_t>(best);
}

void check_targets(const Array<float>& logits, const std::vector<int32_t>& targets, const char* who) {
  const int64_t C = logits.shape()[logits.ndim() - 1];
  if (logits.size() != static_cast<int64_t>(targets.size()) * C)
    throw ShapeError(std::string(who) + ": logits " + logits.shape().str() + " do not hold " +
                     std::to_string(targets.size()) + " rows");
  for (int32_t y : targets)
    if (y < 0 || y >= C)
      throw ValueError(std::string(who) + ": target " + std::to_string(y) + " is outside [0, " + std::to_string(C) + ")");
}

}  // namespace

nlohmann::json WordScores::to_json() const {
  return {{"length", length},           {"sequences", sequences},       {"loss", loss},
          {"position_acc", position_acc}, {"sequence_acc", sequence_acc}, {"final_acc", final_acc}};
}

int64_t count_correct(const Array<float>& logits, const std::vector<int32_t>& targets) {
  check_targets(logits, targets, "count_correct");
  const int64_t C = logits.shape()[logits.ndim() - 1];
  int64_t n = 0;
  for (size_t r = 0; r < targets.size(); ++r)
    n += row_argmax(logits.data() + static_cast<int64_t>(r) * C, C) == targets[r];
  return n;
}

namespace {

// Running sums of the word metrics over words read chunk by chunk: rows (B) words,
// each chunk a (B, len) block of logits (B*len, C) and targets.
class ScoreSums {
 public:
  explicit ScoreSums(int64_t rows) : whole_(static_cast<size_t>(rows), 1) {}
  // Adds a chunk; `last_chunk` when it ends the words.
  void add(const Array<float>& logits, const std::vector<int32_t>& targets, int64_t len, bool last_chunk) {
    const int64_t B = static_cast<int64_t>(whole_.size()), C = logits.shape()[logits.ndim() - 1];
    const std::vector<double> nll = ag::row_nll(logits, targets);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < len; ++t) {
        const int64_t r = b * len + t;
        loss_ += nll[static_cast<size_t>(r)];
        const bool ok = row_argmax(logits.data() + r * C, C) == targets[static_cast<size_t>(r)];
        right_ += ok;
        if (!ok) whole_[static_cast<size_t>(b)] = 0;
        if (last_chunk && t == len - 1) last_ += ok;
      }
    positions_ += B * len;
  }
  // Adds these sums to `into` (sums, not yet means).
  void merge_into(WordScores& into) const {
    into.loss += loss_;
    into.position_acc += static_cast<double>(right_);
    for (char w : whole_) into.sequence_acc += w;
    into.final_acc += static_cast<double>(last_);
  }

 private:
  double loss_ = 0;
  int64_t right_ = 0, last_ = 0, positions_ = 0;
  std::vector<char> whole_;  // (B): 1 while every position of word b is right
};

// Sums -> means over B words of length T.
WordScores to_means(WordScores s, int64_t B, int64_t T) {
  s.length = T;
  s.sequences = B;
  s.loss /= static_cast<double>(B * T);
  s.position_acc /= static_cast<double>(B * T);
  s.sequence_acc /= static_cast<double>(B);
  s.final_acc /= static_cast<double>(B);
  return s;
}

}  // namespace

WordScores score_words(const Array<float>& logits, const std::vector<int32_t>& targets, int64_t B, int64_t T) {
  check_targets(logits, targets, "score_words");
  if (B < 1 || T < 1 || static_cast<int64_t>(targets.size()) != B * T)
    throw ShapeError("score_words: " + std::to_string(targets.size()) + " targets for a (" + std::to_string(B) + "," +
                     std::to_string(T) + ") batch");
  ScoreSums sums(B);
  sums.add(logits, targets, T, true);
  WordScores s;
  sums.merge_into(s);
  return to_means(s, B, T);
}

WordScores evaluate_words(models::Model<float>& model, const data::Batch& words, int64_t max_positions) {
  const EvaluationScope<float> evaluating(model);
  const int64_t B = words.B, T = words.T;
  const int64_t rows = std::max<int64_t>(1, std::min(B, max_positions / T));
  WordScores s;
  for (int64_t b0 = 0; b0 < B; b0 += rows) {
    const int64_t n = std::min(rows, B - b0);
    const auto from = static_cast<std::ptrdiff_t>(b0 * T), to = static_cast<std::ptrdiff_t>((b0 + n) * T);
    const std::vector<int32_t> in(words.inputs.begin() + from, words.inputs.begin() + to);
    const std::vector<int32_t> tg(words.targets.begin() + from, words.targets.begin() + to);
    const Array<float> logits = model.forward(in, n, T, nullptr).value();
    check_targets(logits, tg, "evaluate_words");
    ScoreSums sums(n);
    sums.add(logits, tg, T, true);
    sums.merge_into(s);
  }
  return to_means(s, B, T);
}

WordScores evaluate_word_stream(models::Model<float>& model, data::WordStream& words, int64_t chunk,
                                int64_t max_positions) {
  if (chunk < 1) throw ValueError("evaluate_word_stream: chunk must be >= 1, got " + std::to_string(chunk));
  const int64_t B = words.count(), T = words.length();
  if (T > chunk && !model.recurrent())
    throw ValueError("evaluation length " + std::to_string(T) + ": a " + model.type() +
                     " model has no recurrent state to carry between chunks of " + std::to_string(chunk) + " positions");
  const EvaluationScope<float> evaluating(model);
  const int64_t rows = std::max<int64_t>(1, std::min(B, max_positions / std::min(chunk, T)));
  WordScores s;
  for (int64_t b0 = 0; b0 < B; b0 += rows) {
    const int64_t n = std::min(rows, B - b0);
    words.start(b0, n);
    models::RecurrentState<float> state;
    ScoreSums sums(n);
    while (!words.finished()) {
      const data::Batch c = words.next(chunk);
      const Array<float> logits = model.forward(c.inputs, n, c.T, model.recurrent() ? &state : nullptr).value();
      check_targets(logits, c.targets, "evaluate_word_stream");
      sums.add(logits, c.targets, c.T, words.finished());
    }
    sums.merge_into(s);
  }
  return to_means(s, B, T);
}

void check_word_eval_lengths(const models::Model<float>& model, const std::vector<int64_t>& lengths,
                             const std::string& what) {
  for (int64_t L : lengths) {
    data::check_eval_word_length(L, what);
    if (L > data::kMaxWordLength && !model.recurrent())
      throw ValueError(what + ": length " + std::to_string(L) + " is over the limit of " +
                       std::to_string(data::kMaxWordLength) + " for a " + model.type() +
                       " model, which reads a word in one pass; recurrent models (osm_rnn, lstm, exprnn) stream "
                       "words up to " + std::to_string(data::kMaxStreamedWordLength));
  }
}

std::vector<WordScores> evaluate_word_lengths(models::Model<float>& model, const data::WordTask& task,
                                              uint64_t run_seed, data::WordSplit split,
                                              const std::vector<int64_t>& lengths, int64_t count) {
  check_word_eval_lengths(model, lengths, "evaluation length");
  std::vector<WordScores> out;
  for (int64_t L : lengths) {
    if (model.recurrent()) {
      data::WordStream words(task, run_seed, split, L, count);
      out.push_back(evaluate_word_stream(model, words));
    } else {
      out.push_back(evaluate_words(model, data::word_eval_set(task, run_seed, split, L, count)));
    }
  }
  return out;
}

}  // namespace liegrad::tasks
