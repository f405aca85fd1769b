// RunConfig: everything a training run needs, parsed and validated from one JSON
// document with three sections (every key is documented in docs/training.md):
//
//   { "model": { "type": "osmformer", ... },                      models/ keys
//     "data":  { "dataset": "tinyshakespeare", ... }   the task kind's keys (tasks/),
//     "train": { "steps", "batch", "seq_len", "optimizer", "lr", "beta1", "beta2",
//                "eps", "weight_decay", "momentum", "nesterov", "reorth_every",
//                "schedule", "warmup", "min_lr_frac", "clip", "eval_interval",
//                "eval_tokens", "patience", "log_interval", "seed", "threads",
//                "time_budget_s", "pin" },
//     "comment": "..." }
//
// Unknown keys anywhere are a ConfigError suggesting the nearest known key; values
// out of range name the key, the value and the accepted range.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tasks/task.hpp"

namespace liegrad::train {

// The data section: the dataset, which picks the task kind (tasks/registry.hpp), and
// the section as that kind resolved it, every default filled in.
struct DataConfig {
  std::string dataset = "tinyshakespeare";
  nlohmann::json section;  // {"dataset": ..., the task kind's own keys}
};

// train.pin entry: from step `from_step` on (0-based: steps from_step, from_step + 1, ...)
// every element of parameter `param` is held at `value` and no longer updated, like
// freezing a tensor in PyTorch after setting it. It depends on the step alone, so a
// resumed run pins exactly as an uninterrupted one.
struct ParamPin {
  std::string param;
  double value = 0;
  int64_t from_step = 0;
};

struct TrainConfig {
  int64_t steps = 2000, batch = 32, seq_len = 128;  // seq_len: the training window of text tasks
  std::string optimizer = "adamw";
  double lr = 3e-3;
  nlohmann::json optimizer_options = nlohmann::json::object();  // beta1, beta2, eps, weight_decay, ...
  std::string schedule = "cosine";
  int64_t warmup = 100;
  double min_lr_frac = 0.1;
  double clip = 1.0;  // global-norm clipping; 0 = off
  int64_t eval_interval = 200;
  int64_t eval_tokens = 0;  // validation symbols used at interim evaluations; 0 = the whole split
  // Early stopping: stop after this many interim evaluations in a row without a new best
  // validation BPC (0 = off). The run then ends like a finished one (final evaluation,
  // result.json with the best checkpoint's test BPC).
  int64_t patience = 0;
  int64_t log_interval = 10;
  uint64_t seed = 1;
  int threads = 2;
  // A wall-clock budget for the training steps (forward, backward, update; evaluations
  // are not counted), in seconds; 0 = off. When set, training stops after the first step
  // that reaches it, `steps` is only a cap, and after warm-up the schedule's decay runs
  // on the fraction of the budget used (the lr reaches its floor as the time runs out).
  double time_budget_s = 0;
  std::vector<ParamPin> pins;  // train.pin: [{"param", "value", "from_step"}, ...]
};

struct RunConfig {
  nlohmann::json model;
  DataConfig data;
  TrainConfig train;
  // The whole configuration with every default filled in (model defaults are filled
  // in when the model is built).
  nlohmann::json resolved() const;
  // What the task is told of the train section.
  tasks::RunSettings task_settings() const;
};

// Validates and parses a configuration document.
RunConfig parse_run_config(const nlohmann::json& j);

// Reads a JSON file: IoError when it cannot be read, ConfigError (with the line and
// column) when it is not JSON.
nlohmann::json read_json_file(const std::string& path);
// The same for text read from `path` (named in the messages).
nlohmann::json parse_json_text(const std::string& text, const std::string& path);

// Applies "--set key=value" overrides ("train.lr=1e-3", "model.group=U(8)").
void apply_overrides(nlohmann::json& config, const std::vector<std::string>& sets);

}  // namespace liegrad::train
