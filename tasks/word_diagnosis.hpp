// What a group-valued recurrent state does with a group word task (data/group_words.hpp),
// in terms the group structure makes possible (docs/state_tracking.md, "Diagnosis"):
//
//   homomorphism defect  max and mean over input pairs (a, b) whose product a.b is an
//                        input too of ||N_a N_b - N_{a.b}||_F, for the learned transitions
//                        N_x (the step H <- H N_x of a token or element drive). Zero when
//                        x -> N_x is a representation of the group on the inputs.
//   order defect         max over inputs g of ||N_g^{ord g} - I||_F.
//   defect spectrum      where in R^n the transitions fail: the eigenvalues of
//                        S = mean over those pairs of D_ab^T D_ab, D_ab = N_a N_b - N_{a.b},
//                        as RMS defects sqrt(lambda) per unit direction v (v^T S v is the
//                        mean ||D_ab v||^2), ascending. The directions below kExactDirection
//                        span the exact subspace U: a trained model is often a close
//                        representation on a few dimensions and arbitrary on the rest,
//                        which the whole-matrix defects above cannot tell apart.
//   drift                along fixed test words of length up to 4,096, at each reported
//                        length: the mean distance ||H_t - P_{y_t}||_F of the state from the
//                        prototype of the true class, the mean distance to the nearest
//                        prototype, and the per-position accuracy there; also the
//                        distance on the exact subspace, ||(H_t - P_{y_t}) U||_F.
//
// An exact solution (N a faithful representation, P_c = N of c) has zero defects and
// zero drift at every length; a defect eps compounds to about t eps after t steps, so
// the defects say whether length failure comes from inexact transitions, the drift
// from the state leaving the prototypes, and a state near its prototype but misread
// points at the readout.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/group_words.hpp"
#include "models/model.hpp"

namespace liegrad::tasks {

// A direction v (unit) is exact when its RMS defect sqrt(mean ||D_ab v||^2) is below this:
// a quarter of v's own length. Trained S5 models in SO(14) show a clean split, about
// 0.02-0.07 on 6 directions and 1.4 on the other 8 (docs/state_tracking.md).
inline constexpr double kExactDirection = 0.25;

struct DriftPoint {
  int64_t length = 0;
  double to_true_prototype = 0, to_nearest_prototype = 0, accuracy = 0;
  double on_exact_subspace = -1;  // ||(H - P_y) U||_F; -1 when there is no exact subspace
};

struct WordDiagnosis {
  bool state_independent = false;  // false: relative/both drive; no transitions, no defects
  double homomorphism_defect_max = 0, homomorphism_defect_mean = 0, order_defect_max = 0;
  int64_t pairs = 0;               // input pairs whose product is an input
  std::vector<double> defect_spectrum;  // (n) RMS defect per eigendirection of S, ascending
  int64_t exact_dims = 0;               // directions below kExactDirection
  double exact_rms_defect = 0, rest_rms_defect = 0;  // RMS over the exact / the other directions
  std::vector<double> exact_basis;      // (n, exact_dims) row-major: U, orthonormal columns
  std::vector<DriftPoint> drift;
  nlohmann::json to_json() const;
};

// Transitions N (V,n,n) and prototypes P (C,n,n) against the task's group: the defects
// only (drift needs the model). Throws ShapeError when V or C do not match the task.
WordDiagnosis transition_defects(const data::WordTask& task, const Array<float>& N);

// The lengths at which drift is reported: `eval_lengths` and 4,096 (the longest word
// the diagnosis follows), sorted, each at most data::kMaxWordLength.
std::vector<int64_t> drift_lengths(const std::vector<int64_t>& eval_lengths);
// Test words per length the trainer and `liegrad eval` follow for the drift.
inline constexpr int64_t kDriftWords = 8;

// The whole diagnosis of a word model with the GroupStateReadout capability
// (models/capabilities.hpp; the OSM-RNN's): defects (when its steps have transitions)
// and drift on `words` test words per length of `lengths` (the longest run once, read
// at each length). nullopt for a model without that capability, or no lengths.
std::optional<WordDiagnosis> diagnose_word_model(models::Model<float>& model, const data::WordTask& task,
                                                 uint64_t run_seed, const std::vector<int64_t>& lengths,
                                                 int64_t words);

}  // namespace liegrad::tasks
