// Rotation tracking, the task kind "rotations" (docs/rotation_tracking.md): data.dataset
// "rotations:SO3"; the model reads at every position a rotation increment as a rotation
// vector w_t in R^3 (axis times angle: a gyroscope's reading times its sample interval,
// plus sensor noise when data.noise > 0; data/rotation_walks.hpp) and predicts the
// running product, the orientation R_t = R_{t-1} Exp(w_t), as a rotation (the model's
// ContinuousInput with rotation outputs: osm_rnn with readout 'rotation', lstm or
// transformer with head 'rotation'). Every walk starts from the initial state (no state
// carried between batches). The loss is the mean chordal distance ||P_t - R_t||_F^2 over
// positions (= 8 sin^2(theta/2), smooth everywhere, with the geodesic angle theta's
// minimum); the scores are the geodesic angle's mean and 95th percentile in degrees by
// evaluation length, beside the floor of exact integration in double
// (tasks/rotation_eval.hpp); the best checkpoint has the lowest validation mean angle.
//
// Data keys: "angle_distribution" (uniform | halfnormal), "angle_scale" (radians in
// (0, pi]: the uniform bound or the half-normal sigma; 0.5), "noise" (radians in [0, pi];
// 0), "min_len", "max_len", "curriculum_steps", "eval_lengths", "val_sequences",
// "test_sequences". `liegrad eval` takes --lengths 64,4096,... and --sequences N.
#pragma once
#include "tasks/registry.hpp"

namespace liegrad::tasks {

TaskSpec rotations_task_spec();

}  // namespace liegrad::tasks
