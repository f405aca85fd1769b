// The configuration of a resumed run (see resume.hpp).
#include "train/resume.hpp"

#include "core/errors.hpp"
#include "models/model.hpp"
#include "tasks/registry.hpp"
#include "train/run_config.hpp"

namespace liegrad::train {

nlohmann::json resumed_config(const nlohmann::json& given, const nlohmann::json& checkpoint, const std::string& path) {
  nlohmann::json stored = checkpoint.at("config");
  if (given.is_null()) return stored;
  // Only the step budget and the thread count may change on resume.
  nlohmann::json a = stored, b = given;
  for (auto* x : {&a, &b})
    if (x->contains("train")) {
      (*x)["train"].erase("steps");
      (*x)["train"].erase("threads");
    }
  // The model's sizes come from the stored task (its vocabulary from the checkpoint).
  const RunConfig stored_rc = parse_run_config(stored);
  const auto task = tasks::make_task({stored_rc.data.section, "", &checkpoint.at("vocab"), path});
  const int64_t V = task->input_vocab(), C = task->classes();
  auto full = [V, C](const nlohmann::json& c) {
    nlohmann::json r = parse_run_config(c).resolved();
    r["model"] = models::make_model<float>(r["model"], V, 0, C)->config();
    return r;
  };
  if (full(a) != full(b))
    throw ConfigError("--resume: the given configuration differs from the one stored in '" + path +
                      "' (only train.steps and train.threads may change)");
  const RunConfig rc = parse_run_config(given);
  stored["train"]["steps"] = rc.train.steps;
  stored["train"]["threads"] = rc.train.threads;
  return stored;
}

}  // namespace liegrad::train
