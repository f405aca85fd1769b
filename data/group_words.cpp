// Group word generation, training batches and evaluation sets (see group_words.hpp).
#include "data/group_words.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "data/batcher_state.hpp"

namespace liegrad::data {

namespace {

constexpr std::string_view kPrefix = "words:";

// splitmix64's finaliser (Steele, Lea & Flood 2014): mixes a seed and a length
// into the seed of one evaluation set.
uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

bool is_word_dataset(std::string_view dataset) { return dataset.starts_with(kPrefix); }

std::string word_group_of(const std::string& dataset) {
  if (!is_word_dataset(dataset) || dataset.size() == kPrefix.size())
    throw ValueError("'" + printable(dataset) + "' is not a group word task; expected words:<group>, e.g. words:S5 (groups: " +
                     finite_group_families() + ")");
  return dataset.substr(kPrefix.size());
}

void check_word_length(int64_t length, const std::string& what) {
  if (length < 1) throw ValueError(what + ": a word length must be >= 1, got " + std::to_string(length));
  if (length > kMaxWordLength)
    throw ValueError(what + ": length " + std::to_string(length) + " is over the limit of " +
                     std::to_string(kMaxWordLength));
}

void check_eval_word_length(int64_t length, const std::string& what) {
  if (length < 1) throw ValueError(what + ": a word length must be >= 1, got " + std::to_string(length));
  if (length > kMaxStreamedWordLength)
    throw ValueError(what + ": length " + std::to_string(length) + " is over the limit of " +
                     std::to_string(kMaxStreamedWordLength) + " for evaluation words");
}

uint64_t word_split_seed(uint64_t run_seed, WordSplit split) {
  return 0x9E3779B97F4A7C15ULL + 3 * run_seed + static_cast<uint64_t>(split);
}

WordTask::WordTask(const std::string& group, const std::string& inputs, const std::string& generating_set)
    : inputs_(inputs), generating_set_(generating_set) {
  if (inputs != "all" && inputs != "generators")
    throw ValueError("group word inputs: unknown value '" + inputs + "' (expected \"all\" or \"generators\")");
  group_ = std::make_shared<const FiniteGroup>(group);
  generators_ = group_->generating_set(generating_set);
  if (inputs == "all") {
    for (int32_t i = 0; i < group_->order(); ++i) symbols_.push_back(i);
  } else {
    symbols_ = generators_;
  }
}

int32_t WordTask::element_of(int32_t symbol) const {
  if (symbol < 0 || symbol >= input_vocab())
    throw ValueError("words:" + group_->name() + ": input symbol " + std::to_string(symbol) + " is outside [0, " +
                     std::to_string(input_vocab()) + ")");
  return symbols_[static_cast<size_t>(symbol)];
}

std::vector<int32_t> WordTask::running_products(std::span<const int32_t> inputs) const {
  std::vector<int32_t> out(inputs.size());
  int32_t y = group_->identity();
  for (size_t t = 0; t < inputs.size(); ++t) {
    y = group_->multiply(y, element_of(inputs[t]));
    out[t] = y;
  }
  return out;
}

std::vector<int32_t> WordTask::generator_symbols() const {
  if (inputs_ == "generators") {
    std::vector<int32_t> all(symbols_.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int32_t>(i);
    return all;
  }
  return generators_;  // with "all", symbol i is element i
}

Batch WordTask::sample(Rng& rng, int64_t B, int64_t L, std::span<const int32_t> alphabet, double full_share) const {
  if (B < 1) throw ValueError("group words: batch must be >= 1, got " + std::to_string(B));
  check_word_length(L, "group words");
  if (!(full_share >= 0.0 && full_share < 1.0))
    throw ValueError("group words: full_share must be in [0, 1), got " + std::to_string(full_share));
  for (int32_t s : alphabet) element_of(s);  // throws for a symbol outside the vocabulary
  Batch out;
  out.B = B;
  out.T = L;
  out.inputs.resize(static_cast<size_t>(B * L));
  out.targets.resize(static_cast<size_t>(B * L));
  for (int64_t b = 0; b < B; ++b) {
    int32_t y = group_->identity();
    for (int64_t t = 0; t < L; ++t) {
      const auto i = static_cast<size_t>(b * L + t);
      const bool from_all = alphabet.empty() || (full_share > 0.0 && rng.uniform() < full_share);
      const auto s = from_all ? static_cast<int32_t>(rng.integer(input_vocab()))
                              : alphabet[static_cast<size_t>(rng.integer(static_cast<int64_t>(alphabet.size())))];
      y = group_->multiply(y, symbols_[static_cast<size_t>(s)]);
      out.inputs[i] = s;
      out.targets[i] = y;
    }
  }
  return out;
}

WordBatcher::WordBatcher(const WordTask& task, int64_t batch, int64_t min_len, int64_t max_len, uint64_t seed,
                         WordSchedule schedule)
    : task_(&task),
      B_(batch),
      min_len_(min_len),
      max_len_(max_len),
      schedule_(schedule),
      generator_symbols_(task.generator_symbols()),
      rng_(seed) {
  const WordSchedule& w = schedule;
  if (w.curriculum_batches < 0)
    throw ValueError("WordBatcher: curriculum_batches must be >= 0, got " + std::to_string(w.curriculum_batches));
  if (w.generator_batches < 0)
    throw ValueError("WordBatcher: generator_batches must be >= 0, got " + std::to_string(w.generator_batches));
  if (w.generator_ramp < 0 || (w.generator_ramp > 0 && w.generator_batches == 0))
    throw ValueError("WordBatcher: generator_ramp must be >= 0, and 0 without generator batches, got " +
                     std::to_string(w.generator_ramp) + " with " + std::to_string(w.generator_batches));
  if (w.handover_curriculum < 0 || (w.handover_curriculum > 0 && w.generator_batches == 0))
    throw ValueError("WordBatcher: handover_curriculum must be >= 0, and 0 without generator batches, got " +
                     std::to_string(w.handover_curriculum) + " with " + std::to_string(w.generator_batches));
  if (batch < 1) throw ValueError("WordBatcher: batch must be >= 1, got " + std::to_string(batch));
  check_word_length(min_len, "WordBatcher: min_len");
  check_word_length(max_len, "WordBatcher: max_len");
  if (min_len > max_len)
    throw ValueError("WordBatcher: min_len " + std::to_string(min_len) + " is above max_len " + std::to_string(max_len));
}

namespace {

// The longest length of batch i of a length curriculum of K batches from min_len to
// max_len: min_len + ceil((max_len - min_len) (i + 1) / K), max_len once i >= K or K = 0.
int64_t curriculum_length(int64_t i, int64_t K, int64_t min_len, int64_t max_len) {
  if (K == 0 || i >= K) return max_len;
  return min_len + ((max_len - min_len) * (i + 1) + K - 1) / K;  // ceil, exact in integers
}

}  // namespace

int64_t WordBatcher::longest() const {
  int64_t L = curriculum_length(drawn_, schedule_.curriculum_batches, min_len_, max_len_);
  if (schedule_.handover_curriculum > 0 && drawn_ >= schedule_.generator_batches)
    L = std::min(L, curriculum_length(drawn_ - schedule_.generator_batches, schedule_.handover_curriculum, min_len_,
                                      max_len_));
  return L;
}

Batch WordBatcher::next() {
  const int64_t L = min_len_ + rng_.integer(longest() - min_len_ + 1);
  const int64_t G = schedule_.generator_batches, R = schedule_.generator_ramp;
  Batch out;
  if (drawn_ < G) {
    out = task_->sample(rng_, B_, L, generator_symbols_);
  } else if (drawn_ < G + R) {
    const double share = static_cast<double>(drawn_ - G + 1) / static_cast<double>(R + 1);
    out = task_->sample(rng_, B_, L, generator_symbols_, share);
  } else {
    out = task_->sample(rng_, B_, L);
  }
  out.starts_new_pass = true;
  ++drawn_;
  return out;
}

// The tag and shape of state(): "words-v1 B min max ..." without a curriculum (as before
// it existed), "words-v2 B min max K ..." with a length curriculum, "words-v3 B min max K G
// ..." with an alphabet curriculum of G batches, "words-v4 B min max K G R ..." when that
// curriculum ends in a ramp of R batches, "words-v5 B min max K G R H ..." with a
// hand-over length curriculum of H batches.
std::pair<std::string, std::vector<int64_t>> WordBatcher::state_shape() const {
  const WordSchedule& w = schedule_;
  if (w.handover_curriculum > 0)
    return {"words-v5", {B_, min_len_, max_len_, w.curriculum_batches, w.generator_batches, w.generator_ramp,
                         w.handover_curriculum}};
  if (w.generator_ramp > 0)
    return {"words-v4", {B_, min_len_, max_len_, w.curriculum_batches, w.generator_batches, w.generator_ramp}};
  if (w.generator_batches > 0)
    return {"words-v3", {B_, min_len_, max_len_, w.curriculum_batches, w.generator_batches}};
  if (w.curriculum_batches > 0) return {"words-v2", {B_, min_len_, max_len_, w.curriculum_batches}};
  return {"words-v1", {B_, min_len_, max_len_}};
}

std::string WordBatcher::state() const {
  const auto [tag, shape] = state_shape();
  return write_batcher_state(tag, shape, drawn_, rng_);
}

void WordBatcher::set_state(const std::string& s) {
  auto describe = [](const std::vector<int64_t>& x) {
    return "B=" + std::to_string(x[0]) + ", lengths " + std::to_string(x[1]) + ".." + std::to_string(x[2]) +
           (x.size() > 3 ? ", curriculum " + std::to_string(x[3]) + " batches" : "") +
           (x.size() > 4 ? ", generators only for " + std::to_string(x[4]) + " batches" : "") +
           (x.size() > 5 ? ", a ramp of " + std::to_string(x[5]) + " batches" : "") +
           (x.size() > 6 ? ", a hand-over curriculum of " + std::to_string(x[6]) + " batches" : "");
  };
  const auto [tag, shape] = state_shape();
  read_batcher_state(s, tag, shape, "WordBatcher", describe, drawn_, rng_);
}

namespace {

// The generator of the evaluation words of (run seed, split, length): word_eval_set
// draws `count` words from it one after the other, as WordTask::sample does.
Rng eval_set_rng(uint64_t run_seed, WordSplit split, int64_t length) {
  return Rng(mix64(word_split_seed(run_seed, split) ^ mix64(static_cast<uint64_t>(length))));
}

}  // namespace

Batch word_eval_set(const WordTask& task, uint64_t run_seed, WordSplit split, int64_t length, int64_t count) {
  check_word_length(length, "evaluation length");
  if (count < 1) throw ValueError("evaluation words: count must be >= 1, got " + std::to_string(count));
  Rng rng = eval_set_rng(run_seed, split, length);
  return task.sample(rng, count, length);
}

WordStream::WordStream(const WordTask& task, uint64_t run_seed, WordSplit split, int64_t length, int64_t count)
    : task_(&task), length_(length) {
  check_eval_word_length(length, "evaluation length");
  if (count < 1) throw ValueError("evaluation words: count must be >= 1, got " + std::to_string(count));
  // The draws of WordTask::sample: one rng.integer(V) per symbol, word after word.
  Rng rng = eval_set_rng(run_seed, split, length);
  const int64_t V = task.input_vocab();
  starts_.reserve(static_cast<size_t>(count));
  for (int64_t b = 0; b < count; ++b) {
    starts_.push_back(rng);
    for (int64_t t = 0; t < length; ++t) rng.integer(V);
  }
  position_ = length_;  // nothing started
}

void WordStream::start(int64_t first, int64_t rows) {
  if (first < 0 || rows < 1 || first + rows > count())
    throw ValueError("WordStream: words [" + std::to_string(first) + ", " + std::to_string(first + rows) +
                     ") are not within the " + std::to_string(count()) + " words of the stream");
  cursors_.assign(starts_.begin() + first, starts_.begin() + first + rows);
  products_.assign(static_cast<size_t>(rows), task_->group().identity());
  position_ = 0;
}

Batch WordStream::next(int64_t chunk) {
  if (chunk < 1) throw ValueError("WordStream: chunk must be >= 1, got " + std::to_string(chunk));
  if (cursors_.empty() || finished())
    throw ValueError("WordStream: no started words left to read (position " + std::to_string(position_) + " of " +
                     std::to_string(length_) + ")");
  const int64_t rows = static_cast<int64_t>(cursors_.size()), len = std::min(chunk, length_ - position_);
  const int64_t V = task_->input_vocab();
  const FiniteGroup& G = task_->group();
  Batch out;
  out.B = rows;
  out.T = len;
  out.starts_new_pass = position_ == 0;
  out.inputs.resize(static_cast<size_t>(rows * len));
  out.targets.resize(static_cast<size_t>(rows * len));
  for (int64_t b = 0; b < rows; ++b) {
    Rng& rng = cursors_[static_cast<size_t>(b)];
    int32_t y = products_[static_cast<size_t>(b)];
    for (int64_t t = 0; t < len; ++t) {
      const auto i = static_cast<size_t>(b * len + t);
      const auto s = static_cast<int32_t>(rng.integer(V));
      y = G.multiply(y, task_->element_of(s));
      out.inputs[i] = s;
      out.targets[i] = y;
    }
    products_[static_cast<size_t>(b)] = y;
  }
  position_ += len;
  return out;
}

}  // namespace liegrad::data
