// Random-window, sequential (truncated BPTT) and evaluation batching of symbol
// streams. Evaluation windows follow docs/models.md §7.
#include "data/batcher.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "data/batcher_state.hpp"

namespace liegrad::data {

namespace {

void check_positive(const char* who, const char* what, int64_t v) {
  if (v < 1) throw ValueError(std::string(who) + ": " + what + " must be >= 1, got " + std::to_string(v));
}

// Copies the window of T symbols at start into row b of the batch.
void fill_row(Batch& out, std::span<const int32_t> stream, int64_t b, int64_t start) {
  const auto row = static_cast<size_t>(b * out.T);
  for (int64_t t = 0; t < out.T; ++t) {
    out.inputs[row + static_cast<size_t>(t)] = stream[static_cast<size_t>(start + t)];
    out.targets[row + static_cast<size_t>(t)] = stream[static_cast<size_t>(start + t + 1)];
  }
}

Batch empty_batch(int64_t B, int64_t T) {
  Batch out;
  out.B = B;
  out.T = T;
  out.inputs.resize(static_cast<size_t>(B * T));
  out.targets.resize(static_cast<size_t>(B * T));
  return out;
}

}  // namespace

// ---- RandomWindowBatcher ----

RandomWindowBatcher::RandomWindowBatcher(const std::vector<int32_t>& stream, int64_t batch, int64_t seq_len,
                                         uint64_t seed)
    : stream_(stream), B_(batch), T_(seq_len), rng_(seed) {
  check_positive("RandomWindowBatcher", "batch", batch);
  check_positive("RandomWindowBatcher", "seq_len", seq_len);
  const auto n = static_cast<int64_t>(stream.size());
  if (n < seq_len + 1)
    throw ValueError("RandomWindowBatcher: the stream has " + std::to_string(n) + " symbols; seq_len " +
                     std::to_string(seq_len) + " needs at least " + std::to_string(seq_len + 1));
}

Batch RandomWindowBatcher::next() {
  Batch out = empty_batch(B_, T_);
  const int64_t n_starts = static_cast<int64_t>(stream_.size()) - T_;  // starts 0 .. N-T-1
  for (int64_t b = 0; b < B_; ++b) fill_row(out, stream_, b, rng_.integer(n_starts));
  ++drawn_;
  return out;
}

std::string RandomWindowBatcher::state() const {
  return write_batcher_state("random-window-v1", {static_cast<int64_t>(stream_.size()), B_, T_}, drawn_, rng_);
}

void RandomWindowBatcher::set_state(const std::string& s) {
  auto describe = [](const std::vector<int64_t>& x) {
    return "N=" + std::to_string(x[0]) + ", B=" + std::to_string(x[1]) + ", T=" + std::to_string(x[2]);
  };
  read_batcher_state(s, "random-window-v1", {static_cast<int64_t>(stream_.size()), B_, T_}, "RandomWindowBatcher",
                     describe, drawn_, rng_);
}

// ---- SequentialBatcher ----

SequentialBatcher::SequentialBatcher(const std::vector<int32_t>& stream, int64_t batch, int64_t seq_len)
    : stream_(stream), B_(batch), T_(seq_len), L_(0), W_(0) {
  check_positive("SequentialBatcher", "batch", batch);
  check_positive("SequentialBatcher", "seq_len", seq_len);
  L_ = static_cast<int64_t>(stream.size()) / B_;
  if (L_ < T_ + 1)
    throw ValueError("SequentialBatcher: a stream of " + std::to_string(stream.size()) + " symbols in " +
                     std::to_string(B_) + " lanes gives lanes of " + std::to_string(L_) + " symbols; seq_len " +
                     std::to_string(T_) + " needs lanes of at least " + std::to_string(T_ + 1) +
                     " (a stream of at least " + std::to_string(B_ * (T_ + 1)) + ")");
  W_ = (L_ - 1) / T_;
}

Batch SequentialBatcher::next() {
  Batch out = empty_batch(B_, T_);
  const int64_t k = position_ % W_;
  out.epoch = position_ / W_;
  out.starts_new_pass = k == 0;
  for (int64_t b = 0; b < B_; ++b) fill_row(out, stream_, b, b * L_ + k * T_);
  ++position_;
  return out;
}

void SequentialBatcher::set_position(int64_t p) {
  if (p < 0) throw ValueError("SequentialBatcher::set_position: position must be >= 0, got " + std::to_string(p));
  position_ = p;
}

// ---- EvalWindows ----

EvalWindows::EvalWindows(const std::vector<int32_t>& stream, int64_t seq_len)
    : stream_(stream), N_(static_cast<int64_t>(stream.size())), T_(seq_len), count_(0) {
  check_positive("EvalWindows", "seq_len", seq_len);
  if (N_ < 2)
    throw ValueError("EvalWindows: the stream has " + std::to_string(N_) +
                     " symbol(s); at least 2 are needed (one input and one target)");
  count_ = (N_ - 1 + T_ - 1) / T_;
}

EvalWindows::Window EvalWindows::operator[](int64_t i) const {
  if (i < 0 || i >= count_)
    throw ValueError("EvalWindows: window " + std::to_string(i) + " is outside [0, " + std::to_string(count_) + ")");
  Window w;
  w.start = i * T_;
  w.length = std::min(T_, N_ - 1 - w.start);
  w.inputs = stream_.subspan(static_cast<size_t>(w.start), static_cast<size_t>(w.length));
  w.targets = stream_.subspan(static_cast<size_t>(w.start + 1), static_cast<size_t>(w.length));
  return w;
}

}  // namespace liegrad::data
