// EvaluationScope: for the duration of an evaluation, the model in evaluation mode (no
// dropout) and no tape recorded; the model's mode is restored on leaving the scope,
// also when the evaluation throws (tasks/evaluate.cpp, word_eval.cpp, rotation_eval.cpp).
#pragma once
#include "autograd/tape.hpp"
#include "models/model.hpp"

namespace liegrad::tasks {

template <class T>
class EvaluationScope {
 public:
  explicit EvaluationScope(models::Model<T>& model) : model_(model), was_training_(model.training()) {
    model_.set_training(false);
  }
  ~EvaluationScope() { model_.set_training(was_training_); }
  EvaluationScope(const EvaluationScope&) = delete;
  EvaluationScope& operator=(const EvaluationScope&) = delete;

 private:
  models::Model<T>& model_;
  bool was_training_;
  ag::NoGrad no_tape_;
};

}  // namespace liegrad::tasks
