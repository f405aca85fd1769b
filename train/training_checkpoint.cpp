// Training checkpoints (see training_checkpoint.hpp).
#include "train/training_checkpoint.hpp"

#include "core/array_json.hpp"
#include "core/errors.hpp"
#include "train/checkpoint.hpp"

namespace liegrad::train {

nlohmann::json training_checkpoint(const nlohmann::json& resolved, const tasks::Task& task,
                                   const tasks::TaskTraining& training, models::Model<float>& model,
                                   const optim::Optimizer<float>& optimizer, const std::vector<Array<float>>& carried,
                                   int64_t step, const nlohmann::json& progress) {
  // resolved["model"] is model.config() already, as checkpoint_json sets it.
  nlohmann::json j = checkpoint_json(resolved, task.vocab_record(), model, step);
  j["optimizer"] = optimizer.state_to_json();
  j["data_position"] = training.data_position();
  nlohmann::json state = nlohmann::json::array();
  for (const auto& a : carried) state.push_back(array_to_json(a, "values"));
  j["train_state"] = state;
  j["progress"] = progress;
  j["progress"].update(training.progress());
  return j;
}

Restored restore_training(const nlohmann::json& j, const std::string& source, models::Model<float>& model,
                          optim::Optimizer<float>& optimizer, tasks::TaskTraining& training) {
  parameters_from_json(model, j.at("parameters"), source);
  if (j.contains("optimizer")) optimizer.state_from_json(j.at("optimizer"));
  Restored r;
  r.step = j.at("step").get<int64_t>();
  training.set_data_position(j.value("data_position", nlohmann::json::object()));
  for (const auto& a : j.value("train_state", nlohmann::json::array())) {
    // A malformed tensor is an IoError, like the rest of a malformed checkpoint.
    try {
      r.carried.push_back(array_from_json<float>(a, "values", source + " train_state"));
    } catch (const ValueError& e) {
      throw IoError(e.what());
    }
  }
  r.progress = j.value("progress", nlohmann::json::object());
  training.restore_progress(r.progress);
  return r;
}

}  // namespace liegrad::train
