// Seeded random numbers whose streams are identical run to run and machine to
// machine: xoshiro256** (Blackman & Vigna 2018) seeded through splitmix64, with
// our own uniform, normal (Box-Muller) and integer draws, so no result depends on
// the standard library's distribution implementations. The full state (including
// a cached normal) can be saved and restored, for checkpoints.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "core/array.hpp"

namespace liegrad {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0);

  uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Standard normal N(0, 1).
  double normal();
  double normal(double mean, double stddev) { return mean + stddev * normal(); }
  // A dropout mask: keep[i] = 0 where uniform() < p, else 1, for i < n. The same draws,
  // in the same order, as n calls to uniform(); faster, for masks of millions.
  void draw_keep_mask(double p, uint8_t* keep, int64_t n);
  // Uniform integer in [0, n) without modulo bias; n must be positive.
  int64_t integer(int64_t n);

  // An array filled with N(0, stddev^2) or U[lo, hi) draws, in row-major order.
  template <class T>
  Array<T> normal_array(const Shape& s, double stddev = 1.0);
  template <class T>
  Array<T> uniform_array(const Shape& s, double lo, double hi);

  // A child generator with an independent stream (for per-thread or per-module use).
  Rng split();

  // State as text "s0 s1 s2 s3 has_cached cached_bits" for checkpoints.
  std::string state() const;
  void set_state(const std::string& s);

 private:
  std::array<uint64_t, 4> s_{};
  bool has_cached_ = false;
  double cached_ = 0.0;
};

}  // namespace liegrad
