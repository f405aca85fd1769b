// Per-position classification metrics for group word tasks (data/group_words.hpp):
// the model reads a word x_1 .. x_L and at every position t predicts the class of
// the running product y_t (argmax of its logits; ties go to the lowest class id).
//   loss          mean over all positions of -ln softmax(logits)[y_t]   (nats)
//   position_acc  fraction of positions predicted right
//   sequence_acc  fraction of words with every position right
//   final_acc     fraction of words whose last position is right (the product of
//                 the whole word: "accuracy at length L" in the narrow sense)
// Every word is read from the model's initial state, so recurrent models never
// carry state from one word to the next. Words of up to kWordChunk positions are
// read in one forward pass. Longer words (up to data::kMaxStreamedWordLength) are
// streamed: the words are generated chunk by chunk (data::WordStream) and a recurrent
// model carries its state (models::RecurrentState) from chunk to chunk, so memory
// is that of one chunk whatever the length and time grows linearly with it. Models
// without a recurrent state (transformer, OSMFormer) read a word in one pass, whose
// attention grows with the square of the length: they stop at data::kMaxWordLength
// (check_word_eval_lengths says so in one line).
#pragma once
#include <cstdint>
#include <string>
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

// Positions per forward pass when a recurrent model streams a word: the longest word
// read in one pass, so every word up to it is evaluated exactly as without streaming.
inline constexpr int64_t kWordChunk = data::kMaxWordLength;

// Scores logits (B,T,C) against targets (B*T) class ids in [0, C).
WordScores score_words(const Array<float>& logits, const std::vector<int32_t>& targets, int64_t B, int64_t T);
// Positions whose argmax over logits (R,C) rows equals targets (R).
int64_t count_correct(const Array<float>& logits, const std::vector<int32_t>& targets);

// The model's scores on `words` (B words of length T), in evaluation mode without
// the tape, at most max(1, max_positions / T) words per forward pass.
WordScores evaluate_words(models::Model<float>& model, const data::Batch& words, int64_t max_positions = 4096);

// The model's scores on the words of `words` (all of them, started here), read
// `chunk` positions at a time with the recurrent state carried between chunks, at
// most max(1, max_positions / min(chunk, length)) words per forward pass. ValueError
// for a model that is not recurrent when the words are longer than one chunk, or
// chunk < 1.
WordScores evaluate_word_stream(models::Model<float>& model, data::WordStream& words, int64_t chunk = kWordChunk,
                                int64_t max_positions = 4096);

// ValueError "<what>: ..." (one line) unless every length is in [1, L_max] with L_max
// data::kMaxStreamedWordLength for a recurrent model, data::kMaxWordLength otherwise.
void check_word_eval_lengths(const models::Model<float>& model, const std::vector<int64_t>& lengths,
                             const std::string& what);

// Scores on the fixed evaluation words of a split (data::word_eval_set, the same
// words streamed by data::WordStream) at each length, `count` words per length;
// recurrent models stream words longer than kWordChunk. ValueError (before any
// evaluation) when check_word_eval_lengths rejects a length.
std::vector<WordScores> evaluate_word_lengths(models::Model<float>& model, const data::WordTask& task,
                                              uint64_t run_seed, data::WordSplit split,
                                              const std::vector<int64_t>& lengths, int64_t count);

}  // namespace liegrad::tasks
