// The training step shared by the trainer and the benchmark (see train_step.hpp).
#include "train/train_step.hpp"

#include <cmath>
#include <sstream>

#include "autograd/ops.hpp"
#include "core/errors.hpp"
#include "core/profile.hpp"
#include "optim/clip.hpp"

namespace liegrad::train {

namespace {

[[noreturn]] void stop_non_finite(const StepHooks& hooks, const char* what, double value) {
  if (hooks.non_finite) hooks.non_finite(what, value);
  std::ostringstream os;
  os << "non-finite " << what << " (" << value << ")";
  throw NumericError(os.str());
}

}  // namespace

StepOutcome train_step(models::Model<float>& model, optim::Optimizer<float>& optimizer, const data::Batch& batch,
                       models::RecurrentState<float>* state, double lr, double clip, const StepHooks& hooks) {
  {
    prof::Scope timed(prof::Family::Optimizer);
    optimizer.zero_grad();
  }
  ag::Tape<float>::current().clear();
  ag::Varf logits =
      hooks.forward ? hooks.forward(model, batch, state) : model.forward(batch.inputs, batch.B, batch.T, state);
  ag::Varf loss;
  {
    prof::Tag timed(prof::Family::Readout);
    // The task's loss; by default the mean over every position of -log p(target).
    loss = hooks.loss ? hooks.loss(logits, batch) : ag::cross_entropy(logits, batch.targets);
  }
  StepOutcome out;
  const double local_loss = loss.value().item();
  out.loss = hooks.reduce_loss ? hooks.reduce_loss(logits.value(), local_loss) : local_loss;
  if (!std::isfinite(out.loss)) stop_non_finite(hooks, "loss", local_loss);
  ag::backward(loss);
  if (hooks.reduce_gradients) hooks.reduce_gradients();
  prof::Scope timed(prof::Family::Optimizer);
  out.grad_norm = optim::clip_grad_norm(model.parameters(), clip);
  if (!std::isfinite(out.grad_norm)) stop_non_finite(hooks, "gradient norm", out.grad_norm);
  optimizer.step(lr);
  return out;
}

}  // namespace liegrad::train
