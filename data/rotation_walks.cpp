// Random walks on SO(3) (see rotation_walks.hpp).
#include "data/rotation_walks.hpp"

#include <cmath>
#include <numbers>

#include "core/errors.hpp"
#include "data/batcher_state.hpp"

namespace liegrad::data {

Mat3 so3_exp(const Vec3& w) {
  const double t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2], t = std::sqrt(t2);
  // sin(t)/t and (1 - cos(t))/t^2, by their Taylor series near 0.
  const double a = t < 1e-4 ? 1.0 - t2 / 6.0 : std::sin(t) / t;
  const double b = t < 1e-4 ? 0.5 - t2 / 24.0 : (1.0 - std::cos(t)) / t2;
  const Mat3 K = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};  // [w]x
  const Mat3 K2 = mat3_mul(K, K);
  Mat3 R = mat3_identity();
  for (int i = 0; i < 9; ++i) R[i] += a * K[i] + b * K2[i];
  return R;
}

Mat3 mat3_mul(const Mat3& a, const Mat3& b) {
  Mat3 c{};
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < 3; ++j) c[i * 3 + j] += a[i * 3 + k] * b[k * 3 + j];
  return c;
}

AngleDistribution parse_angle_distribution(const std::string& name, const std::string& what) {
  if (name == "uniform") return AngleDistribution::Uniform;
  if (name == "halfnormal") return AngleDistribution::HalfNormal;
  throw ValueError(what + ": unknown angle distribution '" + name + "' (expected 'uniform' or 'halfnormal')");
}

std::string angle_distribution_name(AngleDistribution d) {
  return d == AngleDistribution::Uniform ? "uniform" : "halfnormal";
}

void RotationWalkSpec::check(const std::string& what) const {
  if (!std::isfinite(angle_scale) || angle_scale <= 0 || angle_scale > std::numbers::pi)
    throw ValueError(what + ".angle_scale: expected an angle in (0, pi] radians, got " + std::to_string(angle_scale));
  if (!std::isfinite(noise) || noise < 0 || noise > std::numbers::pi)
    throw ValueError(what + ".noise: expected a standard deviation in [0, pi] radians, got " + std::to_string(noise));
}

void RotationWalker::step(float* in, double* R) {
  // Axis uniform on the sphere: a normalised Gaussian vector (Muller 1959).
  Vec3 a{rng_.normal(), rng_.normal(), rng_.normal()};
  const double norm = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  const double theta = spec_.distribution == AngleDistribution::Uniform ? spec_.angle_scale * rng_.uniform()
                                                                        : std::abs(spec_.angle_scale * rng_.normal());
  Vec3 w;
  for (int i = 0; i < 3; ++i) {
    // Rounded to float first: the truth is the product of what a noiseless sensor reports.
    w[i] = static_cast<double>(static_cast<float>(norm > 0 ? theta * a[i] / norm : 0.0));
    const double n = spec_.noise > 0 ? spec_.noise * noise_rng_.normal() : 0.0;
    in[i] = static_cast<float>(w[i] + n);
  }
  R_ = mat3_mul(R_, so3_exp(w));
  std::copy(R_.begin(), R_.end(), R);
}

RotationBatcher::RotationBatcher(const RotationWalkSpec& spec, int64_t batch, int64_t min_len, int64_t max_len,
                                 uint64_t seed, int64_t curriculum_batches)
    : spec_(spec), B_(batch), min_len_(min_len), max_len_(max_len), curriculum_(curriculum_batches), rng_(seed) {
  spec.check("RotationBatcher");
  if (batch < 1) throw ValueError("RotationBatcher: batch must be >= 1, got " + std::to_string(batch));
  if (min_len < 1 || min_len > max_len)
    throw ValueError("RotationBatcher: lengths must satisfy 1 <= min_len <= max_len, got " + std::to_string(min_len) +
                     ".." + std::to_string(max_len));
  if (curriculum_batches < 0)
    throw ValueError("RotationBatcher: curriculum_batches must be >= 0, got " + std::to_string(curriculum_batches));
}

int64_t RotationBatcher::longest() const {
  if (drawn_ >= curriculum_) return max_len_;
  return min_len_ + ((max_len_ - min_len_) * (drawn_ + 1) + curriculum_ - 1) / curriculum_;  // ceil, in integers
}

RotationWalkChunk RotationBatcher::next() {
  const int64_t L = min_len_ + rng_.integer(longest() - min_len_ + 1);
  RotationWalkChunk c;
  c.rows = B_;
  c.length = L;
  c.inputs.resize(static_cast<size_t>(B_ * L * 3));
  c.truth.resize(static_cast<size_t>(B_ * L * 9));
  for (int64_t b = 0; b < B_; ++b) {
    RotationWalker walk(spec_, rng_.next_u64());
    for (int64_t t = 0; t < L; ++t) walk.step(&c.inputs[static_cast<size_t>((b * L + t) * 3)], &c.truth[static_cast<size_t>((b * L + t) * 9)]);
  }
  ++drawn_;
  return c;
}

std::string RotationBatcher::state() const {
  return write_batcher_state("rotation-walks-v1", {B_, min_len_, max_len_, curriculum_}, drawn_, rng_);
}

void RotationBatcher::set_state(const std::string& s) {
  auto describe = [](const std::vector<int64_t>& x) {
    return "B=" + std::to_string(x[0]) + ", lengths " + std::to_string(x[1]) + ".." + std::to_string(x[2]) +
           ", curriculum " + std::to_string(x[3]) + " batches";
  };
  read_batcher_state(s, "rotation-walks-v1", {B_, min_len_, max_len_, curriculum_}, "RotationBatcher", describe, drawn_,
                     rng_);
}

RotationWalkStream::RotationWalkStream(const RotationWalkSpec& spec, uint64_t seed, int64_t length, int64_t count)
    : spec_(spec), seed_(seed), length_(length), count_(count) {
  spec.check("RotationWalkStream");
  if (length < 1 || count < 1)
    throw ValueError("RotationWalkStream: length and count must be >= 1, got " + std::to_string(length) + " and " +
                     std::to_string(count));
}

void RotationWalkStream::start(int64_t first, int64_t rows) {
  if (first < 0 || rows < 1 || first + rows > count_)
    throw ValueError("RotationWalkStream::start: walks [" + std::to_string(first) + ", " + std::to_string(first + rows) +
                     ") are outside [0, " + std::to_string(count_) + ")");
  // Walk i's generator: seeded from (seed, length, i) through the Rng's own seeding
  // (splitmix64), so neighbouring seeds give unrelated streams.
  const uint64_t base = Rng(seed_ ^ (0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(length_))).next_u64();
  walkers_.clear();
  for (int64_t i = first; i < first + rows; ++i) walkers_.emplace_back(spec_, base + static_cast<uint64_t>(i));
  position_ = 0;
}

RotationWalkChunk RotationWalkStream::next(int64_t chunk) {
  if (walkers_.empty()) throw ValueError("RotationWalkStream::next: call start() first");
  if (chunk < 1) throw ValueError("RotationWalkStream::next: chunk must be >= 1, got " + std::to_string(chunk));
  const int64_t rows = static_cast<int64_t>(walkers_.size()), L = std::min(chunk, length_ - position_);
  RotationWalkChunk c;
  c.rows = rows;
  c.length = L;
  c.inputs.resize(static_cast<size_t>(rows * L * 3));
  c.truth.resize(static_cast<size_t>(rows * L * 9));
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t t = 0; t < L; ++t)
      walkers_[static_cast<size_t>(b)].step(&c.inputs[static_cast<size_t>((b * L + t) * 3)],
                                            &c.truth[static_cast<size_t>((b * L + t) * 9)]);
  position_ += L;
  return c;
}

}  // namespace liegrad::data
