// The books of best.json and early stopping: the lowest selection criterion seen
// (validation BPC, or loss, as the task says), its step, and the interim evaluations
// since it improved. With train.patience, a run stops early after that many interim
// evaluations in a row without a new best.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace liegrad::train {

class BestCheckpoint {
 public:
  // An interim evaluation's criterion after `step` steps: true when it is a new best
  // (best.json is to be written), else one more evaluation without improvement.
  bool offer(double criterion, int64_t step);
  // The final model's criterion: true when it beats the best (it does not count toward
  // the patience).
  bool offer_final(double criterion, int64_t step);
  // train.patience > 0 evaluations without a new best.
  bool patience_spent(int64_t patience) const { return patience > 0 && evals_since_best_ >= patience; }

  bool any() const { return step_ >= 0; }
  double criterion() const { return criterion_; }
  int64_t step() const { return step_; }

  // The checkpoint's "progress" fields: {key: criterion or null, "best_step", "evals_since_best"},
  // key = "best_" + the task's criterion name.
  nlohmann::json progress(const std::string& key) const;
  void restore(const nlohmann::json& progress, const std::string& key);

 private:
  double criterion_ = 0;
  int64_t step_ = -1;
  int64_t evals_since_best_ = 0;
};

}  // namespace liegrad::train
