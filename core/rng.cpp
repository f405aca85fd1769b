// xoshiro256** generator, splitmix64 seeding, Box-Muller normals.
// Reference: D. Blackman, S. Vigna, "Scrambled linear pseudorandom number
// generators", ACM TOMS 2021 (constants and rotations from the reference code).
#include "core/rng.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

namespace liegrad {

namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// One xoshiro256** step on a state held by the caller.
inline uint64_t xoshiro_step(std::array<uint64_t, 4>& s) {
  const uint64_t result = rotl(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}
}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto& v : s_) v = splitmix64(x);
}

uint64_t Rng::next_u64() { return xoshiro_step(s_); }

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

void Rng::draw_keep_mask(double p, uint8_t* keep, int64_t n) {
  // uniform() < p  <=>  (x >> 11) < p 2^53: both sides scaled by 2^53, exactly.
  const double threshold = p * 0x1.0p53;
  std::array<uint64_t, 4> s = s_;  // in registers: the byte stores below may alias s_
  for (int64_t i = 0; i < n; ++i) keep[i] = static_cast<double>(xoshiro_step(s) >> 11) < threshold ? 0 : 1;
  s_ = s;
}

double Rng::normal() {
  if (has_cached_) {
    has_cached_ = false;
    return cached_;
  }
  double u1;
  do u1 = uniform();
  while (u1 <= 0.0);
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double a = 2.0 * M_PI * u2;
  cached_ = r * std::sin(a);
  has_cached_ = true;
  return r * std::cos(a);
}

int64_t Rng::integer(int64_t n) {
  if (n <= 0) throw ValueError("Rng::integer: n must be positive, got " + std::to_string(n));
  const uint64_t un = static_cast<uint64_t>(n);
  const uint64_t limit = UINT64_MAX - UINT64_MAX % un;  // reject the biased tail
  uint64_t v;
  do v = next_u64();
  while (v >= limit);
  return static_cast<int64_t>(v % un);
}

template <class T>
Array<T> Rng::normal_array(const Shape& s, double stddev) {
  Array<T> a(s);
  for (int64_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(stddev * normal());
  return a;
}

template <class T>
Array<T> Rng::uniform_array(const Shape& s, double lo, double hi) {
  Array<T> a(s);
  for (int64_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(uniform(lo, hi));
  return a;
}

Rng Rng::split() {
  Rng child(0);
  uint64_t x = next_u64();
  for (auto& v : child.s_) v = splitmix64(x);
  return child;
}

std::string Rng::state() const {
  uint64_t bits;
  std::memcpy(&bits, &cached_, sizeof bits);
  std::ostringstream os;
  os << s_[0] << ' ' << s_[1] << ' ' << s_[2] << ' ' << s_[3] << ' ' << (has_cached_ ? 1 : 0) << ' ' << bits;
  return os.str();
}

void Rng::set_state(const std::string& s) {
  std::istringstream is(s);
  std::array<uint64_t, 4> st{};
  int has = 0;
  uint64_t bits = 0;
  if (!(is >> st[0] >> st[1] >> st[2] >> st[3] >> has >> bits) || (has != 0 && has != 1))
    throw ValueError("Rng::set_state: malformed state string '" + s + "'");
  s_ = st;
  has_cached_ = has == 1;
  std::memcpy(&cached_, &bits, sizeof bits);
}

template Array<float> Rng::normal_array<float>(const Shape&, double);
template Array<double> Rng::normal_array<double>(const Shape&, double);
template Array<float> Rng::uniform_array<float>(const Shape&, double, double);
template Array<double> Rng::uniform_array<double>(const Shape&, double, double);

}  // namespace liegrad
