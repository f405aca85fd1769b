// What a group-valued recurrent state does with a group word task (data/group_words.hpp),
// in terms the group structure makes possible (docs/state_tracking.md, "Diagnosis"):
//
//   homomorphism defect  max and mean over input pairs (a, b) whose product a.b is an
//                        input too of ||N_a N_b - N_{a.b}||_F, for the learned transitions
//                        N_x (the step H <- H N_x of a token or element drive). Zero when
//                        x -> N_x is a representation of the group on the inputs.
//   order defect         max over inputs g of ||N_g^{ord g} - I||_F.
//   drift                along fixed test words of length up to 4,096, at each reported
//                        length: the mean distance ||H_t - P_{y_t}||_F of the state from the
//                        prototype of the true class, the mean distance to the nearest
//                        prototype, and the per-position accuracy there.
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

namespace liegrad::train {

struct DriftPoint {
  int64_t length = 0;
  double to_true_prototype = 0, to_nearest_prototype = 0, accuracy = 0;
};

struct WordDiagnosis {
  bool state_independent = false;  // false: relative/both drive; no transitions, no defects
  double homomorphism_defect_max = 0, homomorphism_defect_mean = 0, order_defect_max = 0;
  int64_t pairs = 0;               // input pairs whose product is an input
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

// The whole diagnosis of an OSM-RNN word model: defects (when its drive has
// transitions) and drift on `words` test words per length of `lengths` (the longest
// run once, read at each length). nullopt for a model that is not an OSM-RNN.
std::optional<WordDiagnosis> diagnose_word_model(models::Model<float>& model, const data::WordTask& task,
                                                 uint64_t run_seed, const std::vector<int64_t>& lengths,
                                                 int64_t words);

}  // namespace liegrad::train
