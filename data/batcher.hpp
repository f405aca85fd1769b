// Batches of (input, target) windows over a symbol stream, targets = inputs
// shifted by one symbol:
//   - RandomWindowBatcher: B windows of T drawn uniformly among all valid starts,
//     from its own seeded Rng; state() / set_state() resume it exactly.
//   - SequentialBatcher: truncated BPTT; the stream is cut into B contiguous lanes
//     and window k+1 of a lane continues window k, wrapping to the lanes' start
//     after a full pass (the batch then says starts_new_pass, so recurrent state
//     can be reset).
//   - EvalWindows: the evaluation windows of docs/models.md §7, x[s .. s+T-1] ->
//     x[s+1 .. s+T] for s = 0, T, 2T, ..., the last one shorter, so each of the
//     N - 1 symbols after the first is predicted exactly once.
// The batchers and EvalWindows keep a view of the stream, which must outlive them
// (temporaries are refused at compile time).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/rng.hpp"

namespace liegrad::data {

struct Batch {
  int64_t B = 0, T = 0;
  std::vector<int32_t> inputs;   // (B,T) row-major
  std::vector<int32_t> targets;  // (B,T): targets[b][t] is the symbol after inputs[b][t]
                                 // (group words: the running product, a class id)
  // Tasks with real-valued inputs and targets (rotation tracking) leave inputs and
  // targets empty and fill these, row-major over (B,T) like them:
  std::vector<float> features;   // (B,T,F): each position's input features
  std::vector<float> values;     // (B,T,K): each position's real target (a 3x3 rotation: K = 9)
  // False only when every row continues the matching row of the previous batch
  // (SequentialBatcher inside a pass); true for random windows, for the first
  // batch and after a wrap. Recurrent models reset their state when it is true.
  bool starts_new_pass = true;
  // Completed passes over the stream before this batch (SequentialBatcher; 0 for
  // random windows).
  int64_t epoch = 0;
};

class RandomWindowBatcher {
 public:
  // stream (N); needs batch >= 1, seq_len >= 1 and N >= seq_len + 1.
  RandomWindowBatcher(const std::vector<int32_t>& stream, int64_t batch, int64_t seq_len, uint64_t seed);
  RandomWindowBatcher(std::vector<int32_t>&&, int64_t, int64_t, uint64_t) = delete;

  // B windows with starts uniform in [0, N - T - 1].
  Batch next();

  int64_t batch() const { return B_; }
  int64_t seq_len() const { return T_; }
  int64_t batches_drawn() const { return drawn_; }
  // Text "random-window-v1 N B T batches_drawn <rng state>"; set_state throws
  // ValueError when the text is malformed or was saved for another N, B or T.
  std::string state() const;
  void set_state(const std::string& s);

 private:
  std::span<const int32_t> stream_;
  int64_t B_, T_;
  int64_t drawn_ = 0;
  Rng rng_;
};

class SequentialBatcher {
 public:
  // stream (N) is cut into B lanes of L = floor(N / B) symbols (the last N mod B
  // symbols are unused); each lane yields floor((L - 1) / T) windows of T per pass
  // (a lane tail too short for a full window is skipped). Needs batch >= 1,
  // seq_len >= 1 and L >= seq_len + 1.
  SequentialBatcher(const std::vector<int32_t>& stream, int64_t batch, int64_t seq_len);
  SequentialBatcher(std::vector<int32_t>&&, int64_t, int64_t) = delete;

  Batch next();

  int64_t batch() const { return B_; }
  int64_t seq_len() const { return T_; }
  int64_t lane_length() const { return L_; }
  int64_t windows_per_pass() const { return W_; }
  // Completed passes before the next batch.
  int64_t epoch() const { return position_ / W_; }
  // Batches yielded so far (window index in the pass = position % windows_per_pass).
  int64_t position() const { return position_; }
  void set_position(int64_t p);  // p >= 0, else ValueError

 private:
  std::span<const int32_t> stream_;
  int64_t B_, T_, L_, W_;
  int64_t position_ = 0;
};

class EvalWindows {
 public:
  struct Window {
    int64_t start = 0;                  // s: offset of inputs[0] in the stream
    int64_t length = 0;                 // n = min(T, N - 1 - s)
    std::span<const int32_t> inputs;    // (n) = x[s .. s+n-1]
    std::span<const int32_t> targets;   // (n) = x[s+1 .. s+n]
  };

  // stream (N), N >= 2; seq_len T >= 1.
  EvalWindows(const std::vector<int32_t>& stream, int64_t seq_len);
  EvalWindows(std::vector<int32_t>&&, int64_t) = delete;

  int64_t size() const { return count_; }            // ceil((N - 1) / T) windows
  int64_t predictions() const { return N_ - 1; }     // total targets over all windows
  int64_t seq_len() const { return T_; }
  Window operator[](int64_t i) const;                // 0 <= i < size(), else ValueError

  class iterator {
   public:
    iterator(const EvalWindows* w, int64_t i) : w_(w), i_(i) {}
    Window operator*() const { return (*w_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const iterator& o) const { return i_ == o.i_; }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }

   private:
    const EvalWindows* w_;
    int64_t i_;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, count_}; }

 private:
  std::span<const int32_t> stream_;
  int64_t N_, T_, count_;
};

}  // namespace liegrad::data
