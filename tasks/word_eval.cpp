// Group word metrics (see word_eval.hpp). Log-likelihoods are summed in double.
#include "tasks/word_eval.hpp"

#include <algorithm>

#include "autograd/ops.hpp"
#include "core/errors.hpp"

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

WordScores score_words(const Array<float>& logits, const std::vector<int32_t>& targets, int64_t B, int64_t T) {
  check_targets(logits, targets, "score_words");
  if (B < 1 || T < 1 || static_cast<int64_t>(targets.size()) != B * T)
    throw ShapeError("score_words: " + std::to_string(targets.size()) + " targets for a (" + std::to_string(B) + "," +
                     std::to_string(T) + ") batch");
  const int64_t C = logits.shape()[logits.ndim() - 1];
  const std::vector<double> nll = ag::row_nll(logits, targets);
  double total = 0;
  int64_t right = 0, whole = 0, last = 0;
  for (int64_t b = 0; b < B; ++b) {
    bool all = true;
    for (int64_t t = 0; t < T; ++t) {
      const int64_t r = b * T + t;
      total += nll[static_cast<size_t>(r)];
      const bool ok = row_argmax(logits.data() + r * C, C) == targets[static_cast<size_t>(r)];
      right += ok;
      all = all && ok;
      if (t == T - 1) last += ok;
    }
    whole += all;
  }
  WordScores s;
  s.length = T;
  s.sequences = B;
  s.loss = total / static_cast<double>(B * T);
  s.position_acc = static_cast<double>(right) / static_cast<double>(B * T);
  s.sequence_acc = static_cast<double>(whole) / static_cast<double>(B);
  s.final_acc = static_cast<double>(last) / static_cast<double>(B);
  return s;
}

WordScores evaluate_words(models::Model<float>& model, const data::Batch& words, int64_t max_positions) {
  ag::NoGrad no_grad;
  struct ModeGuard {  // evaluation mode (no dropout) for the duration of the call
    models::Model<float>& m;
    bool was;
    ~ModeGuard() { m.set_training(was); }
  } guard{model, model.training()};
  model.set_training(false);
  const int64_t B = words.B, T = words.T;
  const int64_t rows = std::max<int64_t>(1, std::min(B, max_positions / T));
  double loss = 0, right = 0, whole = 0, last = 0;
  for (int64_t b0 = 0; b0 < B; b0 += rows) {
    const int64_t n = std::min(rows, B - b0);
    const auto from = static_cast<std::ptrdiff_t>(b0 * T), to = static_cast<std::ptrdiff_t>((b0 + n) * T);
    const std::vector<int32_t> in(words.inputs.begin() + from, words.inputs.begin() + to);
    const std::vector<int32_t> tg(words.targets.begin() + from, words.targets.begin() + to);
    const WordScores s = score_words(model.forward(in, n, T, nullptr).value(), tg, n, T);
    const auto w = static_cast<double>(n);
    loss += s.loss * w;
    right += s.position_acc * w;
    whole += s.sequence_acc * w;
    last += s.final_acc * w;
  }
  WordScores s;
  s.length = T;
  s.sequences = B;
  s.loss = loss / static_cast<double>(B);
  s.position_acc = right / static_cast<double>(B);
  s.sequence_acc = whole / static_cast<double>(B);
  s.final_acc = last / static_cast<double>(B);
  return s;
}

std::vector<WordScores> evaluate_word_lengths(models::Model<float>& model, const data::WordTask& task,
                                              uint64_t run_seed, data::WordSplit split,
                                              const std::vector<int64_t>& lengths, int64_t count) {
  for (int64_t L : lengths) data::check_word_length(L, "evaluation length");
  std::vector<WordScores> out;
  for (int64_t L : lengths) out.push_back(evaluate_words(model, data::word_eval_set(task, run_seed, split, L, count)));
  return out;
}

}  // namespace liegrad::tasks
