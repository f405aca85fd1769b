// Scores of the rotation-tracking task (tasks/rotations_task.hpp): at every position the
// geodesic angle between the predicted orientation P and the true R,
//     theta(P, R) = arccos((tr(P^T R) - 1) / 2)
// (Sola, Deray and Atchuthan 2018, "A micro Lie theory", the norm of Log(P^T R)),
// computed in double as atan2(|vee(E - E^T)| / 2, (tr E - 1) / 2) with E = P^T R, which
// equals it on SO(3) and keeps its digits at small angles, where arccos of a number near
// 1 loses half of them. Reported in degrees per evaluation length: the mean and the 95th
// percentile over every position of every walk, and the mean at the last position; and
// beside them the floor: the same scores of the exact integration in double of the
// model's own (noisy) inputs, prod_t Exp(w_t + n_t), against the truth (0 without noise,
// the noise's accumulated error with it).
//
// Walks are read from the model's initial state. Recurrent models stream walks longer
// than kRotationChunk positions chunk by chunk, carrying their state (memory of one chunk
// whatever the length, up to kMaxRotationLength); other models read a walk in one pass,
// up to kRotationChunk positions.
#pragma once
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/rotation_walks.hpp"
#include "models/model.hpp"

namespace liegrad::tasks {

inline constexpr int64_t kRotationChunk = 4096;
inline constexpr int64_t kMaxRotationLength = 65536;

// The geodesic angle in radians between rotations P and R (3x3 row-major). ValueError
// "<what>: ..." when an entry of P is not finite or P is not a rotation within 1e-3
// (||P^T P - I||_max or |det P - 1|), a malformed rotation.
double geodesic_angle(const double* P, const double* R, const std::string& what);
// Degrees per radian, for reporting geodesic angles.
inline constexpr double kDegrees = 180.0 / std::numbers::pi;

// Mean, 95th percentile (nearest rank) and count of a list of angles in degrees.
struct AngleStats {
  double mean = 0, p95 = 0;
  static AngleStats of(std::vector<double> degrees);
};

struct RotationScores {
  int64_t length = 0, sequences = 0;
  AngleStats model, floor;     // over every position
  double final_mean = 0;       // the model's mean at the last position
  double floor_final_mean = 0;
  // {"length", "sequences", "mean_deg", "p95_deg", "final_mean_deg", "floor_mean_deg",
  //  "floor_p95_deg", "floor_final_mean_deg"}
  nlohmann::json to_json() const;
};

// ValueError "<what>: ..." unless every length is in [1, kMaxRotationLength], and at
// most kRotationChunk for a model that is not recurrent.
void check_rotation_lengths(const models::Model<float>& model, const std::vector<int64_t>& lengths,
                            const std::string& what);

// The model's outputs on a chunk's inputs (rows, length, 3) through its ContinuousInput,
// carrying `state`; (rows*length*9) rotations.
Array<float> rotation_outputs(models::Model<float>& model, const data::RotationWalkChunk& chunk,
                              models::RecurrentState<float>* state);

// Scores on the fixed walks of `stream` (all of them), in evaluation mode without the tape.
RotationScores evaluate_rotation_stream(models::Model<float>& model, data::RotationWalkStream& stream,
                                        int64_t max_positions = 4096);

// ConfigError naming model.type / model.head when the model cannot read rotation vectors
// or does not output rotations.
void check_rotation_model(models::Model<float>& model);

}  // namespace liegrad::tasks
