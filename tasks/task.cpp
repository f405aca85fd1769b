// The tasks' shared defaults (see task.hpp).
#include "tasks/task.hpp"

#include "autograd/ops.hpp"

namespace liegrad::tasks {

ag::Varf TaskTraining::loss(const ag::Varf& logits, const data::Batch& batch) const {
  return ag::cross_entropy(logits, batch.targets);
}

}  // namespace liegrad::tasks
