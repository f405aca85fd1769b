// Cheap scoped timers per op family, for `liegrad bench`'s time breakdown.
//
// Off by default; when off a Scope costs one predictable branch. When on, time is
// *exclusive*: opening a Scope pauses the enclosing one, so a family's total is the
// time spent in it and not in a nested family (an expm inside a region tagged
// "small products" counts as exp). Scopes opened on worker threads (inside an OpenMP
// region) are ignored: ops are timed from the serial code that launches them.
//
// Backward passes run later, from the tape: an op records the family that was tagged
// (prof::Tag) when it ran, and the tape times its backward step under that family
// (autograd/tape.hpp). Ops with a family of their own (expm, compose, vee, ...) open
// their own Scope in both passes.
//
// Fused ops do several families' work inside one parallel region (e.g. the OSM update:
// products, mixing and exponentials per token). There, prof::Sub timers (any thread)
// add up thread time per family; when the op's serial Scope ends, its wall time is
// split over the families in proportion to that thread time.
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace liegrad::prof {

enum class Family : int {
  ExpForward,     // the matrix exponential (groups::expm, forward)
  ExpPullback,    // its pullback
  Attention,      // scores, softmax, attention-weighted sums (both models' attention)
  SmallProducts,  // compose: batched small matrix products H*M, H E (forward and backward)
  Tangent,        // project / vee / hat and the tangent mixing u Gamma^T
  Dense,          // dense layers of the baselines (linear maps, LayerNorm, GELU, LSTM cell)
  Readout,        // logits (prototype head or linear head) and the cross-entropy loss
  Optimizer,      // zero_grad, gradient clipping and the optimizer step
  kCount          // "other" is the total minus the families above
};
inline constexpr int kFamilies = static_cast<int>(Family::kCount);
// "exp_forward", "exp_pullback", "attention", "small_products", "tangent", "dense",
// "readout", "optimizer".
const char* family_name(Family f);

namespace detail {
extern bool g_enabled;
void open(int family, int& saved);
void close(int saved);
int& tag();
void sub_open(int family, int& saved);
void sub_close(int saved);
}  // namespace detail

inline bool enabled() { return detail::g_enabled; }
// Turns timing on or off (call from serial code, between steps).
void set_enabled(bool on);
// Zeroes every family's total.
void reset();
// Seconds accumulated per family since the last reset.
std::array<double, kFamilies> totals();

// Times its lifetime under `family` (a negative int is a no-op).
class Scope {
 public:
  explicit Scope(Family f) : Scope(static_cast<int>(f)) {}
  explicit Scope(int family) {
    if (family >= 0 && detail::g_enabled) {
      detail::open(family, saved_);
      active_ = true;
    }
  }
  ~Scope() {
    if (active_) detail::close(saved_);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  int saved_ = -1;
  bool active_ = false;
};

// Thread time of a piece of a fused op (callable inside parallel regions); see above.
class Sub {
 public:
  explicit Sub(Family f) {
    if (detail::g_enabled) {
      detail::sub_open(static_cast<int>(f), saved_);
      active_ = true;
    }
  }
  ~Sub() {
    if (active_) detail::sub_close(saved_);
  }
  Sub(const Sub&) = delete;
  Sub& operator=(const Sub&) = delete;

 private:
  int saved_ = -1;
  bool active_ = false;
};

// A Scope that also tags the ops recorded during its lifetime, so their backward
// steps are timed under the same family.
class Tag {
 public:
  explicit Tag(Family f) : scope_(f), prev_(detail::tag()) { detail::tag() = static_cast<int>(f); }
  ~Tag() { detail::tag() = prev_; }
  Tag(const Tag&) = delete;
  Tag& operator=(const Tag&) = delete;

 private:
  Scope scope_;
  int prev_;
};

// Work counters, kept while timing is on (any thread): the matrix exponentials run and
// the n x n products their forward programs take (degree products plus squarings), so
// `liegrad bench` can count the FLOPs of models whose exponentials' cost depends on the
// data (the OSM models). Exponentials of one step all have the same n in every model.
enum class Counter : int { Exponentials, ExpForwardProducts, kCount };
inline constexpr int kCounters = static_cast<int>(Counter::kCount);
namespace detail {
void add_count(int counter, int64_t value);
}
inline void count(Counter c, int64_t value) {
  if (detail::g_enabled) detail::add_count(static_cast<int>(c), value);
}
// Counts since the last reset.
std::array<int64_t, kCounters> counts();

// The family tagged now (-1 = none, or timing off): what record_op captures.
inline int current_tag() { return detail::g_enabled ? detail::tag() : -1; }

}  // namespace liegrad::prof
