// Exclusive per-family timers (see profile.hpp): one "current family" per thread and
// the time it started; opening a scope charges the elapsed time to the enclosing
// family and switches, closing charges its own and switches back. Sub timers work the
// same way per thread, into counters that the next serial charge consumes.
#include "core/profile.hpp"

#include <omp.h>

#include <atomic>
#include <chrono>

namespace liegrad::prof {

namespace detail {

bool g_enabled = false;

namespace {
using Clock = std::chrono::steady_clock;
std::array<std::atomic<int64_t>, kFamilies> g_ns{};
std::array<std::atomic<int64_t>, kFamilies> g_sub_ns{};  // thread time of Sub timers not yet charged
std::array<std::atomic<int64_t>, kCounters> g_counts{};
thread_local int t_current = -1;
thread_local Clock::time_point t_start;
thread_local int t_tag = -1;
thread_local int t_sub = -1;
thread_local Clock::time_point t_sub_start;

int64_t ns(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

// Charges the time since t_start to `family`, split over the families of the Sub
// thread time collected meanwhile (if any) in proportion to it.
void charge(int family, Clock::time_point now) {
  if (family < 0) return;
  const int64_t wall = ns(t_start, now);
  std::array<int64_t, kFamilies> sub{};
  int64_t total = 0;
  for (int f = 0; f < kFamilies; ++f) {
    sub[static_cast<size_t>(f)] = g_sub_ns[static_cast<size_t>(f)].exchange(0, std::memory_order_relaxed);
    total += sub[static_cast<size_t>(f)];
  }
  if (total <= 0) {
    g_ns[static_cast<size_t>(family)].fetch_add(wall, std::memory_order_relaxed);
    return;
  }
  for (int f = 0; f < kFamilies; ++f) {
    const double share = static_cast<double>(sub[static_cast<size_t>(f)]) / static_cast<double>(total);
    g_ns[static_cast<size_t>(f)].fetch_add(static_cast<int64_t>(share * static_cast<double>(wall)), std::memory_order_relaxed);
  }
}

void sub_charge(Clock::time_point now) {
  if (t_sub >= 0) g_sub_ns[static_cast<size_t>(t_sub)].fetch_add(ns(t_sub_start, now), std::memory_order_relaxed);
}
}  // namespace

void sub_open(int family, int& saved) {
  const Clock::time_point now = Clock::now();
  sub_charge(now);
  saved = t_sub;
  t_sub = family;
  t_sub_start = now;
}

void sub_close(int saved) {
  const Clock::time_point now = Clock::now();
  sub_charge(now);
  t_sub = saved;
  t_sub_start = now;
}

void open(int family, int& saved) {
  if (omp_in_parallel()) {
    saved = -2;  // marks an ignored scope
    return;
  }
  const Clock::time_point now = Clock::now();
  charge(t_current, now);
  saved = t_current;
  t_current = family;
  t_start = now;
}

void close(int saved) {
  if (saved == -2) return;
  const Clock::time_point now = Clock::now();
  charge(t_current, now);
  t_current = saved;
  t_start = now;
}

int& tag() { return t_tag; }

}  // namespace detail

const char* family_name(Family f) {
  switch (f) {
    case Family::ExpForward: return "exp_forward";
    case Family::ExpPullback: return "exp_pullback";
    case Family::Attention: return "attention";
    case Family::SmallProducts: return "small_products";
    case Family::Tangent: return "tangent";
    case Family::Dense: return "dense";
    case Family::Readout: return "readout";
    case Family::Optimizer: return "optimizer";
    case Family::kCount: break;
  }
  return "other";
}

void set_enabled(bool on) { detail::g_enabled = on; }

void detail::add_count(int counter, int64_t value) {
  detail::g_counts[static_cast<size_t>(counter)].fetch_add(value, std::memory_order_relaxed);
}

std::array<int64_t, kCounters> counts() {
  std::array<int64_t, kCounters> out{};
  for (int i = 0; i < kCounters; ++i) out[static_cast<size_t>(i)] = detail::g_counts[static_cast<size_t>(i)].load();
  return out;
}

void reset() {
  for (auto& x : detail::g_ns) x.store(0);
  for (auto& x : detail::g_sub_ns) x.store(0);
  for (auto& x : detail::g_counts) x.store(0);
}

std::array<double, kFamilies> totals() {
  std::array<double, kFamilies> out{};
  for (int i = 0; i < kFamilies; ++i) out[static_cast<size_t>(i)] = 1e-9 * static_cast<double>(detail::g_ns[static_cast<size_t>(i)].load());
  return out;
}

}  // namespace liegrad::prof
