// Random walks on SO(3), the data of the rotation-tracking task (tasks/rotations_task.hpp):
// the orientation-integration problem of an inertial sensor in its simplest form.
// A walk of length L is a sequence of rotation increments given as rotation vectors
// w_t = theta_t a_t (axis a_t uniform on the unit sphere, angle theta_t >= 0 from a
// stated distribution: a gyroscope's angular velocity times its sample interval) and
// its running products, the orientations
//     R_0 = I,   R_t = R_{t-1} Exp(w_t),   t = 1..L,
// with Exp the Rodrigues formula (Sola, Deray and Atchuthan 2018, "A micro Lie theory",
// eq. 77):  Exp(w) = I + sin(theta)/theta [w]x + (1 - cos(theta))/theta^2 [w]x^2.
// Increments compose on the right (body-frame rates, as the OSM-RNN's H <- H exp(Phi)).
// The model reads w_t + n_t, n_t ~ N(0, noise^2 I) the sensor noise; the truth is
// computed from the clean w_t. Each w_t is rounded to float before the truth is formed,
// so that without noise the exact integration of the model's (float) inputs in double
// reproduces the truth exactly: the floor of the task is 0 then.
//
// Every walk is generated from its own Rng, so a walk can be produced chunk by chunk
// (RotationWalkStream) in memory that does not grow with its length. Orientations and
// the walk state are kept in double.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.hpp"

namespace liegrad::data {

using Mat3 = std::array<double, 9>;  // a 3x3 matrix, row-major
using Vec3 = std::array<double, 3>;

// Exp(w) by the Rodrigues formula (Taylor terms below |w| = 1e-4, where the
// closed form loses digits).
Mat3 so3_exp(const Vec3& w);
// a b.
Mat3 mat3_mul(const Mat3& a, const Mat3& b);
inline Mat3 mat3_identity() { return {1, 0, 0, 0, 1, 0, 0, 0, 1}; }

enum class AngleDistribution {
  Uniform,     // theta ~ U(0, scale)
  HalfNormal,  // theta = |N(0, scale^2)|
};
// "uniform" / "halfnormal"; ValueError naming `what` otherwise.
AngleDistribution parse_angle_distribution(const std::string& name, const std::string& what);
std::string angle_distribution_name(AngleDistribution d);

struct RotationWalkSpec {
  AngleDistribution distribution = AngleDistribution::Uniform;
  double angle_scale = 0.5;  // radians: the upper bound (uniform) or sigma (halfnormal)
  double noise = 0.0;        // std of each component of the sensor noise n_t, radians
  // ValueError "<what>.key: ..." for a non-finite or out-of-range value: angle_scale in
  // (0, pi], noise in [0, pi].
  void check(const std::string& what) const;
};

// Rows x length walks, row-major over (row, position).
struct RotationWalkChunk {
  int64_t rows = 0, length = 0;
  std::vector<float> inputs;   // (rows, length, 3): w_t + n_t, what the model reads
  std::vector<double> truth;   // (rows, length, 9): R_t, row-major 3x3
};

// One walk's generator: its Rngs and its orientation so far. The noise has a generator of
// its own, so a walk's increments and truth are the same at every noise level.
class RotationWalker {
 public:
  RotationWalker(const RotationWalkSpec& spec, uint64_t seed)
      : spec_(spec), rng_(seed), noise_rng_(seed ^ 0x6A09E667F3BCC909ULL) {}
  // The next increment (its model input into in[0..2]) and orientation (into R[0..8]).
  void step(float* in, double* R);

 private:
  RotationWalkSpec spec_;
  Rng rng_, noise_rng_;
  Mat3 R_ = mat3_identity();
};

// Training batches: B walks of one length L uniform in [min_len, longest()] per batch,
// drawn from one seeded generator (as data::WordBatcher does for words); state() and
// set_state() resume exactly.
class RotationBatcher {
 public:
  // Needs batch >= 1, 1 <= min_len <= max_len, curriculum_batches >= 0 (ValueError).
  RotationBatcher(const RotationWalkSpec& spec, int64_t batch, int64_t min_len, int64_t max_len, uint64_t seed,
                  int64_t curriculum_batches = 0);
  RotationWalkChunk next();
  // max_len, or with a curriculum of K batches min_len + ceil((max_len - min_len)(i + 1) / K) for batch i < K.
  int64_t longest() const;
  int64_t batches_drawn() const { return drawn_; }
  // Text "rotation-walks-v1 B min_len max_len batches_drawn <rng state>"; set_state throws
  // ValueError when malformed or saved for another batch size or lengths.
  std::string state() const;
  void set_state(const std::string& s);

 private:
  RotationWalkSpec spec_;
  int64_t B_, min_len_, max_len_, curriculum_;
  int64_t drawn_ = 0;
  Rng rng_;
};

// The fixed evaluation walks of one length: walk i of `count` has its own seed from
// (seed, length, i), generated chunk by chunk: start(first, rows) begins walks
// [first, first + rows) and next(chunk) returns their next min(chunk, length - position())
// positions.
class RotationWalkStream {
 public:
  RotationWalkStream(const RotationWalkSpec& spec, uint64_t seed, int64_t length, int64_t count);
  int64_t length() const { return length_; }
  int64_t count() const { return count_; }
  void start(int64_t first, int64_t rows);
  RotationWalkChunk next(int64_t chunk);
  bool finished() const { return position_ >= length_; }
  int64_t position() const { return position_; }

 private:
  RotationWalkSpec spec_;
  uint64_t seed_;
  int64_t length_, count_, position_ = 0;
  std::vector<RotationWalker> walkers_;
};

}  // namespace liegrad::data
