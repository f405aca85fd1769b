// JSON checkpoints (format "liegrad-checkpoint", version 1; docs/checkpoint.md
// documents every field): the full resolved configuration, the vocabulary (for a
// group word run, the task's input and class counts instead), every
// parameter by name with shape, role, group and representation, the optimizer
// state, the step, the data position and RNG state, and the carried recurrent
// training state. Writes are atomic: a temporary file in the same directory is
// written, flushed and fsync'ed, then renamed over the target, so a crash leaves
// either the old or the new checkpoint, never a torn one.
#pragma once
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "data/vocab.hpp"
#include "models/model.hpp"
#include "tasks/task.hpp"

namespace liegrad::train {

inline constexpr const char* kCheckpointFormat = "liegrad-checkpoint";
inline constexpr int kCheckpointVersion = 1;

// path <- j, atomically (tmp + fsync + rename + fsync of the directory).
void write_file_atomic(const std::string& path, const std::string& contents);
void write_json_atomic(const std::string& path, const nlohmann::json& j);

// [{"name", "shape", "role", "group", "representation", "values"}, ...]
nlohmann::json parameters_to_json(models::Model<float>& model);
// Copies values into the model's parameters; every name must be present with the
// model's shape (ValueError naming the parameter otherwise; `source` names the file).
void parameters_from_json(models::Model<float>& model, const nlohmann::json& params, const std::string& source);

// The fields every checkpoint has: format, version, config (with its "model" section
// replaced by model.config(), the complete model configuration), vocab, step and
// parameters. The trainer adds the optimizer and data state for resuming.
nlohmann::json checkpoint_json(const nlohmann::json& config, const data::Vocab& vocab, models::Model<float>& model,
                               int64_t step);
// The same with the "vocab" record given as written (Task::vocab_record): the one place these fields are assembled, for write_checkpoint
// and the trainer's checkpoints alike.
nlohmann::json checkpoint_json(const nlohmann::json& config, const nlohmann::json& vocab_record,
                               models::Model<float>& model, int64_t step);
// Writes checkpoint_json(...) atomically: a checkpoint that load_model, `liegrad eval`
// and `liegrad sample` read, for a model trained by any loop (examples/external/).
// `config` is a run configuration (train/run_config.hpp; ConfigError when invalid):
// eval and sample read its data section and train.seq_len. The vocabulary must have
// the model's size (ValueError otherwise).
void write_checkpoint(const std::string& path, const nlohmann::json& config, const data::Vocab& vocab,
                      models::Model<float>& model, int64_t step);

// Reads and validates a checkpoint file: IoError for a missing, empty, truncated or
// non-JSON file, or one of another format or version, each naming the file.
nlohmann::json read_checkpoint(const std::string& path);
// The same checks on a checkpoint's text, read from `path` (named in the messages).
nlohmann::json parse_checkpoint(const std::string& text, const std::string& path);

struct LoadedModel {
  std::unique_ptr<models::Model<float>> model;
  std::shared_ptr<tasks::Task> task;  // the run's task, its vocabulary from the checkpoint
  nlohmann::json config;  // the run configuration stored in the checkpoint
  int64_t step = 0;
};
// Rebuilds the task and the model from the checkpoint's config and loads its parameters
// (a text task loads its corpus only when asked to score a split; data_dir says where). Every
// fault is a typed liegrad::Error naming the file; a configured model much larger than
// the values the file holds is refused before it is allocated (core/alloc_limit.hpp).
LoadedModel load_model(const std::string& path, const std::string& data_dir = "");
// The same for a checkpoint already read and checked (read_checkpoint, parse_checkpoint).
LoadedModel load_model(const nlohmann::json& checkpoint, const std::string& path, const std::string& data_dir = "");

}  // namespace liegrad::train
