// Rotation-tracking scores (see rotation_eval.hpp).
#include "tasks/rotation_eval.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "autograd/tape.hpp"
#include "core/errors.hpp"
#include "models/capabilities.hpp"
#include "tasks/eval_scope.hpp"

namespace liegrad::tasks {

double geodesic_angle(const double* P, const double* R, const std::string& what) {
  for (int i = 0; i < 9; ++i)
    if (!std::isfinite(P[i])) throw ValueError(what + ": a predicted rotation has a non-finite entry");
  double defect = 0;  // max |P^T P - I|
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += P[k * 3 + i] * P[k * 3 + j];
      defect = std::max(defect, std::abs(s - (i == j ? 1.0 : 0.0)));
    }
  const double det = P[0] * (P[4] * P[8] - P[5] * P[7]) - P[1] * (P[3] * P[8] - P[5] * P[6]) +
                     P[2] * (P[3] * P[7] - P[4] * P[6]);
  if (defect > 1e-3 || std::abs(det - 1.0) > 1e-3)
    throw ValueError(what + ": a predicted matrix is not a rotation (max |P^T P - I| = " + std::to_string(defect) +
                     ", det P = " + std::to_string(det) + ")");
  double E[9] = {};  // P^T R
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) E[i * 3 + j] += P[k * 3 + i] * R[k * 3 + j];
  const double c = (E[0] + E[4] + E[8] - 1.0) / 2.0;
  const double sx = E[7] - E[5], sy = E[2] - E[6], sz = E[3] - E[1];  // vee(E - E^T)
  return std::atan2(std::sqrt(sx * sx + sy * sy + sz * sz) / 2.0, c);
}

AngleStats AngleStats::of(std::vector<double> degrees) {
  AngleStats s;
  if (degrees.empty()) return s;
  double sum = 0;
  for (double d : degrees) sum += d;
  s.mean = sum / static_cast<double>(degrees.size());
  // Nearest rank: the smallest value with at least 95% of the values at or below it.
  const auto rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(degrees.size()))) - 1;
  std::nth_element(degrees.begin(), degrees.begin() + static_cast<std::ptrdiff_t>(rank), degrees.end());
  s.p95 = degrees[rank];
  return s;
}

nlohmann::json RotationScores::to_json() const {
  return {{"length", length},           {"sequences", sequences},           {"mean_deg", model.mean},
          {"p95_deg", model.p95},       {"final_mean_deg", final_mean},     {"floor_mean_deg", floor.mean},
          {"floor_p95_deg", floor.p95}, {"floor_final_mean_deg", floor_final_mean}};
}

void check_rotation_lengths(const models::Model<float>& model, const std::vector<int64_t>& lengths,
                            const std::string& what) {
  for (int64_t L : lengths) {
    if (L < 1 || L > kMaxRotationLength)
      throw ValueError(what + ": length " + std::to_string(L) + " is outside [1, " +
                       std::to_string(kMaxRotationLength) + "]");
    if (L > kRotationChunk && !model.recurrent())
      throw ValueError(what + ": length " + std::to_string(L) + " is over the limit of " +
                       std::to_string(kRotationChunk) + " for a " + model.type() +
                       " model, which reads a walk in one pass; recurrent models stream walks up to " +
                       std::to_string(kMaxRotationLength));
  }
}

void check_rotation_model(models::Model<float>& model) {
  models::ContinuousInput<float>* c = model.continuous_input();
  if (!c)
    throw ConfigError("model.type: the rotations task feeds real-valued rotation vectors, which a " + model.type() +
                      " model cannot read (use osm_rnn, lstm or transformer)");
  if (!c->outputs_rotations())
    throw ConfigError(std::string("model.") + (model.type() == "osm_rnn" ? "readout" : "head") +
                      ": the rotations task scores rotations; set it to 'rotation'" +
                      (model.type() == "osm_rnn" ? " (with model.rnn_drive 'element')" : ""));
}

Array<float> rotation_outputs(models::Model<float>& model, const data::RotationWalkChunk& chunk,
                              models::RecurrentState<float>* state) {
  Array<float> x(Shape{chunk.rows, chunk.length, 3});
  std::copy(chunk.inputs.begin(), chunk.inputs.end(), x.data());
  return model.continuous_input()->forward_features(x, chunk.rows, chunk.length, state).value();
}

RotationScores evaluate_rotation_stream(models::Model<float>& model, data::RotationWalkStream& stream,
                                        int64_t max_positions) {
  check_rotation_model(model);
  check_rotation_lengths(model, {stream.length()}, "evaluation length");
  const EvaluationScope<float> evaluating(model);
  const int64_t count = stream.count(), L = stream.length();
  const int64_t chunk = model.recurrent() ? kRotationChunk : L;
  const int64_t rows = std::max<int64_t>(1, std::min(count, max_positions / std::min(chunk, L)));
  std::vector<double> angles, floor_angles;
  angles.reserve(static_cast<size_t>(count * L));
  floor_angles.reserve(static_cast<size_t>(count * L));
  double final_sum = 0, floor_final_sum = 0;
  for (int64_t b0 = 0; b0 < count; b0 += rows) {
    const int64_t n = std::min(rows, count - b0);
    stream.start(b0, n);
    models::RecurrentState<float> state;
    std::vector<data::Mat3> integrated(static_cast<size_t>(n), data::mat3_identity());  // the floor's walk
    while (!stream.finished()) {
      const data::RotationWalkChunk c = stream.next(chunk);
      const Array<float> out = rotation_outputs(model, c, model.recurrent() ? &state : nullptr);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t t = 0; t < c.length; ++t) {
          const int64_t r = b * c.length + t;
          double P[9];
          for (int i = 0; i < 9; ++i) P[i] = out.data()[r * 9 + i];
          const double* R = &c.truth[static_cast<size_t>(r * 9)];
          const float* w = &c.inputs[static_cast<size_t>(r * 3)];
          data::Mat3& F = integrated[static_cast<size_t>(b)];
          F = data::mat3_mul(F, data::so3_exp({w[0], w[1], w[2]}));
          const double a = geodesic_angle(P, R, "evaluation") * kDegrees;
          const double f = geodesic_angle(F.data(), R, "floor") * kDegrees;
          angles.push_back(a);
          floor_angles.push_back(f);
          if (stream.finished() && t == c.length - 1) final_sum += a, floor_final_sum += f;
        }
    }
  }
  RotationScores s;
  s.length = L;
  s.sequences = count;
  s.model = AngleStats::of(std::move(angles));
  s.floor = AngleStats::of(std::move(floor_angles));
  s.final_mean = final_sum / static_cast<double>(count);
  s.floor_final_mean = floor_final_sum / static_cast<double>(count);
  return s;
}

}  // namespace liegrad::tasks
