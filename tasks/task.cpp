// The tasks' shared defaults (see task.hpp).
#include "tasks/task.hpp"

#include <cstdio>

#include "autograd/ops.hpp"

namespace liegrad::tasks {

std::string fixed4(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4f", v);
  return b;
}

ag::Varf TaskTraining::forward(models::Model<float>& model, const data::Batch& batch,
                               models::RecurrentState<float>* state) const {
  return model.forward(batch.inputs, batch.B, batch.T, state);
}

ag::Varf TaskTraining::loss(const ag::Varf& logits, const data::Batch& batch) const {
  return ag::cross_entropy(logits, batch.targets);
}

}  // namespace liegrad::tasks
