// What a training checkpoint (DIR/last.json, DIR/best.json; docs/checkpoint.md) holds
// beyond the model, so that a resumed run continues exactly: the optimizer state, the
// task's data position, the recurrent state carried by every lane, and the run's
// progress (best checkpoint, patience, clocks, the task's own books).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/array.hpp"
#include "models/model.hpp"
#include "optim/optimizer.hpp"
#include "tasks/task.hpp"

namespace liegrad::train {

// The checkpoint after `step` steps. resolved: the run's resolved configuration;
// carried: every lane's recurrent state; progress: the trainer's books.
nlohmann::json training_checkpoint(const nlohmann::json& resolved, const tasks::Task& task,
                                   const tasks::TaskTraining& training, models::Model<float>& model,
                                   const optim::Optimizer<float>& optimizer, const std::vector<Array<float>>& carried,
                                   int64_t step, const nlohmann::json& progress);

struct Restored {
  int64_t step = 0;
  std::vector<Array<float>> carried;  // every lane's recurrent state
  nlohmann::json progress;            // the trainer's books and the task's
};
// Loads the model's parameters, the optimizer's state and the task's data position and
// books from checkpoint `j` (read from `source`); IoError naming the file for a
// malformed part.
Restored restore_training(const nlohmann::json& j, const std::string& source, models::Model<float>& model,
                          optim::Optimizer<float>& optimizer, tasks::TaskTraining& training);

}  // namespace liegrad::train
