// Per-position classification metrics for group word tasks (data/group_words.hpp):
// the model reads a word x_1 .. x_L and at every position t predicts the class of
// the running product y_t (argmax of its logits; ties go to the lowest class id).
//   loss          mean over all positions of -ln softmax(logits)[y_t]   (nats)
//   position_acc  fraction of positions predicted right
//   sequence_acc  fraction of words with every position right
//   final_acc     fraction of words whose last position is right (the product of
//                 the whole word: "accuracy at length L" in the narrow sense)
// Every word is read from the model's initial state in one forward pass, so
// recurrent models never carry state from one word to the next.
#pragma once
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/batcher.hpp"
#include "data/group_words.hpp"
#include "models/model.hpp"

namespace liegrad::tasks {

struct WordScores {
  int64_t length = 0, sequences = 0;
  double loss = 0, position_acc = 0, sequence_acc = 0, final_acc = 0;
  // {"length", "sequences", "loss", "position_acc", "sequence_acc", "final_acc"}
  nlohmann::json to_json() const;
};

// Scores logits (B,T,C) against targets (B*T) class ids in [0, C).
WordScores score_words(const Array<float>& logits, const std::vector<int32_t>& targets, int64_t B, int64_t T);
// Positions whose argmax over logits (R,C) rows equals targets (R).
int64_t count_correct(const Array<float>& logits, const std::vector<int32_t>& targets);

// The model's scores on `words` (B words of length T), in evaluation mode without
// the tape, at most max(1, max_positions / T) words per forward pass.
WordScores evaluate_words(models::Model<float>& model, const data::Batch& words, int64_t max_positions = 4096);

// Scores on the fixed evaluation words of a split (data::word_eval_set) at each
// length, `count` words per length. ValueError for a length outside
// [1, data::kMaxWordLength].
std::vector<WordScores> evaluate_word_lengths(models::Model<float>& model, const data::WordTask& task,
                                              uint64_t run_seed, data::WordSplit split,
                                              const std::vector<int64_t>& lengths, int64_t count);

}  // namespace liegrad::tasks
