// One training step, the one `liegrad train` (train/trainer.cpp) and `liegrad bench`
// (measure/bench.cpp) both run: zero the gradients, clear the tape, the forward pass
// (carrying `state` when given), the loss (the task's; by default the mean cross-entropy over every position), backward,
// clipping the gradients to norm `clip`, the optimizer step at `lr`. The hooks put the
// data-parallel trainer's collectives between them (the loss over the ranks, the
// gradients averaged) and say what a non-finite loss or gradient norm does; either
// stops before the optimizer step. Zeroing, clipping and the step are timed as the
// optimizer's family and the loss as the readout's (core/profile.hpp; the timers are
// off unless `liegrad bench` turns them on). Dropout reseeding (Model::begin_step) and
// drawing the batch are the caller's.
#pragma once
#include <functional>

#include "core/array.hpp"
#include "data/batcher.hpp"
#include "models/model.hpp"
#include "optim/optimizer.hpp"

namespace liegrad::train {

struct StepHooks {
  // The model's outputs on the batch (the task's, tasks/task.hpp). Null: forward() on
  // batch.inputs.
  std::function<ag::Varf(models::Model<float>& model, const data::Batch& batch, models::RecurrentState<float>* state)>
      forward;
  // The loss of the step's logits on the batch (the task's, tasks/task.hpp). Null: the
  // mean cross-entropy of batch.targets.
  std::function<ag::Varf(const ag::Varf& logits, const data::Batch& batch)> loss;
  // After the loss, before backward: the step's logits and this process's loss give the
  // loss the step reports (the trainer's: the mean over the ranks). Null: the loss itself.
  std::function<double(const Array<float>& logits, double loss)> reduce_loss;
  // After backward, before clipping (the trainer averages the gradients over the ranks).
  std::function<void()> reduce_gradients;
  // Called with ("loss", this process's loss) when the reported loss is not finite, and
  // with ("gradient norm", norm) when the norm is not; it must throw. Null: NumericError
  // "non-finite <what> (<value>)".
  std::function<void(const char* what, double value)> non_finite;
};

struct StepOutcome {
  double loss = 0;       // the reported loss, nats per position
  double grad_norm = 0;  // before clipping
};

StepOutcome train_step(models::Model<float>& model, optim::Optimizer<float>& optimizer, const data::Batch& batch,
                       models::RecurrentState<float>* state, double lr, double clip, const StepHooks& hooks = {});

}  // namespace liegrad::train
