// What the benchmarks of measure/ share (bench.cpp, core_bench.cpp, stream_bench.cpp):
// the spread (median, min, max) of a set of rates, a wall clock, and timing a callable
// as a rate. Header-only, below every benchmark that uses it.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace liegrad::measure {

// The median and range of repeated measurements.
struct Spread {
  double median = 0, min = 0, max = 0;
};

namespace bench_detail {

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

inline Spread spread(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t k = v.size();
  s.median = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
  s.min = v.front();
  s.max = v.back();
  return s;
}

// Runs f once to warm up, then `repeats` times timed: the spread of work / seconds.
template <class F>
Spread rates(int repeats, double work, F&& f) {
  f();
  std::vector<double> rate;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    f();
    rate.push_back(work / since(t0));
  }
  return spread(rate);
}

inline nlohmann::json spread_json(const Spread& s) { return {{"median", s.median}, {"min", s.min}, {"max", s.max}}; }

// "median 12.3 GFLOP/s (min 11.0, max 13.1)": the spread with `decimals` digits, `unit` after the median.
inline std::string spread_text(const Spread& s, const char* unit, int decimals) {
  char buf[192];
  std::snprintf(buf, sizeof buf, "median %.*f%s (min %.*f, max %.*f)", decimals, s.median, unit, decimals, s.min, decimals,
                s.max);
  return buf;
}

}  // namespace bench_detail

}  // namespace liegrad::measure
