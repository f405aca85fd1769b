// Group word problems, the task family "words:G" (state tracking; Liu et al. 2023,
// "Transformers Learn Shortcuts to Automata"; Merrill, Petty & Sabharwal 2024,
// "The Illusion of State in State-Space Models"): a word is a sequence of
// elements x_1 .. x_L of a finite group G (data/finite_group.hpp) and the target
// at position t is the running product y_t = x_1 . x_2 . ... . x_t, a class id in
// 0 .. |G|-1. Unlike a language model, the output vocabulary (|G| classes) is not
// the input vocabulary and the target is not the next input symbol.
//
// Input symbols are either every element ("all": symbol i is element i, V = |G|)
// or a generating set ("generators": symbol i is generator i, V = number of
// generators). The generating set is the group's standard one unless another is
// named (FiniteGroup::generating_set: "coxeter" for S<n>); with "all" it is the
// alphabet of the alphabet curriculum and the warm start.
//
// Nothing is stored on disk: words are drawn from seeded generators. Each split
// has its own seed, word_split_seed(run seed, split), distinct for every (run
// seed, split) pair, so train, validation and test streams never share a
// generator (for any two run seeds either). Training batches draw one length L
// uniform in [min_len, max_len] per batch and B words of that length (rows of a
// batch share L, so no padding or masking is needed). Evaluation sets are fixed
// per (run seed, split, length): the same words whatever else is evaluated.
//
// Words longer than kMaxWordLength are only evaluated, and only streamed: WordStream
// yields the same words as word_eval_set, chunk by chunk, so a recurrent model can
// read words of up to kMaxStreamedWordLength positions carrying its state, in memory
// that does not grow with the length (one Rng per word and one chunk of symbols).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/rng.hpp"
#include "data/batcher.hpp"
#include "data/finite_group.hpp"

namespace liegrad::data {

// The longest word liegrad generates as one batch: training words, and evaluation
// words read in one pass (the transformers, which carry no recurrent state).
inline constexpr int64_t kMaxWordLength = 4096;
// The longest evaluation word, read by recurrent models in chunks (WordStream):
// 1,024 times the usual training length of 64.
inline constexpr int64_t kMaxStreamedWordLength = 65536;

// True for "words:<group>" dataset names.
bool is_word_dataset(std::string_view dataset);
// "words:S5" -> "S5"; ValueError when the name is not "words:" followed by a group.
std::string word_group_of(const std::string& dataset);
// Throws ValueError "<what>: ..." unless 1 <= length <= kMaxWordLength.
void check_word_length(int64_t length, const std::string& what);
// Throws ValueError "<what>: ..." unless 1 <= length <= kMaxStreamedWordLength.
void check_eval_word_length(int64_t length, const std::string& what);

enum class WordSplit { Train = 0, Val = 1, Test = 2 };
// The seed of a split's stream: 0x9E3779B97F4A7C15 + 3 * run_seed + split (mod 2^64),
// injective in (run_seed, split) because 3 is invertible mod 2^64.
uint64_t word_split_seed(uint64_t run_seed, WordSplit split);

class WordTask {
 public:
  // group: a FiniteGroup name ("S5"); inputs: "all" or "generators"; generating_set:
  // a FiniteGroup::generating_set name. ValueError for an unknown group, inputs
  // value or generating set.
  explicit WordTask(const std::string& group, const std::string& inputs = "all",
                    const std::string& generating_set = "standard");

  const FiniteGroup& group() const { return *group_; }
  const std::string& inputs() const { return inputs_; }
  const std::string& generating_set() const { return generating_set_; }
  int64_t input_vocab() const { return static_cast<int64_t>(symbols_.size()); }  // V
  int64_t classes() const { return group_->order(); }                             // C = |G|
  // The group element (id) of input symbol s; ValueError outside [0, V).
  int32_t element_of(int32_t symbol) const;
  // inputs (n) symbol ids -> (n) running products: out[t] = id of g(x_0) . ... . g(x_t).
  std::vector<int32_t> running_products(std::span<const int32_t> inputs) const;
  // The input symbols that stand for the generating set's generators: every symbol
  // with inputs "generators", the generators' element ids with "all".
  std::vector<int32_t> generator_symbols() const;
  // B words of length L, symbols uniform over the input vocabulary (or over
  // `alphabet`, a subset of it, when given), drawn from rng: inputs (B,L) and
  // targets (B,L), every row's products starting at the identity. With an alphabet
  // and 0 < full_share < 1, each symbol is drawn from the whole vocabulary with
  // probability full_share and from the alphabet otherwise (full_share = 0 draws
  // nothing extra, so the words of earlier runs are unchanged).
  Batch sample(Rng& rng, int64_t B, int64_t L, std::span<const int32_t> alphabet = {}, double full_share = 0.0) const;

 private:
  std::shared_ptr<const FiniteGroup> group_;
  std::string inputs_;
  std::string generating_set_;
  std::vector<int32_t> generators_;  // (number of generators): element ids
  std::vector<int32_t> symbols_;     // (V): element id of each input symbol
};

// When a WordBatcher changes what it draws, in batches (all 0 = words in every
// element, every length up to max_len, from the first batch).
struct WordSchedule {
  // A length curriculum: over the first K batches the longest drawn length grows
  // linearly from min_len to max_len.
  int64_t curriculum_batches = 0;
  // An alphabet curriculum: the first G batches draw their symbols from the
  // generating set only (WordTask::generator_symbols), so a model first meets the group
  // through words in its generators, whose products reach every element, and then
  // reads every element as an input symbol.
  int64_t generator_batches = 0;
  // With R > 0 (needs G > 0) the change is gradual: batch G + i, i < R, draws each
  // symbol from every element with probability (i + 1) / (R + 1), else from the generators.
  int64_t generator_ramp = 0;
  // With H > 0 (needs G > 0) a second length curriculum starts at the hand-over: batch
  // G + j, j < H, is at most min_len + ceil((max_len - min_len) (j + 1) / H) long, so the
  // new elements' transitions are first met in short words (the shorter of the two
  // curricula's lengths while both run).
  int64_t handover_curriculum = 0;
};

// Training batches of words (the task must outlive the batcher).
class WordBatcher {
 public:
  // Needs batch >= 1, 1 <= min_len <= max_len <= kMaxWordLength and a schedule of
  // counts >= 0 whose ramp and hand-over curriculum are 0 without generator batches
  // (ValueError).
  WordBatcher(const WordTask& task, int64_t batch, int64_t min_len, int64_t max_len, uint64_t seed,
              WordSchedule schedule = {});
  WordBatcher(WordTask&&, int64_t, int64_t, int64_t, uint64_t, WordSchedule = {}) = delete;

  // B words of one length L uniform in [min_len, longest()]; starts_new_pass is
  // always true (words are independent: recurrent state never carries over).
  Batch next();
  // The longest length the next batch may have: max_len, or what the schedule's
  // length curricula allow (see WordSchedule).
  int64_t longest() const;

  int64_t batches_drawn() const { return drawn_; }
  // Text "words-vN B min_len max_len [schedule] batches_drawn <rng state>" (N grows with
  // the schedule entries in use, so older checkpoints read as before); set_state throws
  // ValueError when the text is malformed or was saved for another B, lengths or schedule.
  std::string state() const;
  void set_state(const std::string& s);

 private:
  const WordTask* task_;
  // The tag and the numbers state() writes and set_state() expects back.
  std::pair<std::string, std::vector<int64_t>> state_shape() const;

  int64_t B_, min_len_, max_len_;
  WordSchedule schedule_;
  std::vector<int32_t> generator_symbols_;
  int64_t drawn_ = 0;
  Rng rng_;
};

// The fixed evaluation words of a split at one length: `count` words (count, length)
// from a generator seeded by the split's seed and the length. ValueError when the
// length is outside [1, kMaxWordLength] or count < 1.
Batch word_eval_set(const WordTask& task, uint64_t run_seed, WordSplit split, int64_t length, int64_t count);

// The same fixed evaluation words as word_eval_set, for lengths up to
// kMaxStreamedWordLength, read chunk by chunk: start(first, rows) begins words
// [first, first + rows) at position 0, and each next(chunk) returns their next
// min(chunk, length - position()) positions as inputs and targets (rows, len), the
// targets continuing the running products. Holds one generator state per word
// (found once by drawing every word through, without storing it) and the current
// chunk, never a whole word. The task must outlive the stream.
class WordStream {
 public:
  // ValueError when the length is outside [1, kMaxStreamedWordLength] or count < 1.
  WordStream(const WordTask& task, uint64_t run_seed, WordSplit split, int64_t length, int64_t count);
  WordStream(WordTask&&, uint64_t, WordSplit, int64_t, int64_t) = delete;

  int64_t length() const { return length_; }
  int64_t count() const { return static_cast<int64_t>(starts_.size()); }
  // ValueError unless 0 <= first, rows >= 1 and first + rows <= count().
  void start(int64_t first, int64_t rows);
  // The next chunk of the started words; starts_new_pass is true for the first chunk.
  // ValueError when no words are started, when they are finished or chunk < 1.
  Batch next(int64_t chunk);
  int64_t position() const { return position_; }
  bool finished() const { return position_ >= length_; }

 private:
  const WordTask* task_;
  int64_t length_ = 0;
  std::vector<Rng> starts_;       // (count): each word's generator at its first symbol
  std::vector<Rng> cursors_;      // (rows): the started words' generators
  std::vector<int32_t> products_; // (rows): their running products so far
  int64_t position_ = 0;
};

}  // namespace liegrad::data
