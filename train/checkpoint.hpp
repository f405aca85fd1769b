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

#include "data/group_words.hpp"
#include "data/vocab.hpp"
#include "models/model.hpp"

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

// The vocabulary as JSON: the byte value of each symbol in id order (an array of
// integers, so any byte, ASCII or not, survives JSON's UTF-8 strings).
nlohmann::json vocab_to_json(const data::Vocab& vocab);
// Throws IoError naming `source` for anything but an array of distinct bytes.
data::Vocab vocab_from_json(const nlohmann::json& j, const std::string& source);

// The "vocab" record of a group word run: {"task": "words:S5", "inputs": "all",
// "input_vocab": V, "classes": C}.
nlohmann::json word_vocab_to_json(const data::WordTask& task);
// The word task of a run configuration whose data.dataset is "words:<group>", or
// null for a language model. Checks a checkpoint's "vocab" record against it when
// `vocab` is given (IoError naming `source` on a mismatch).
std::shared_ptr<data::WordTask> word_task_of(const nlohmann::json& config, const nlohmann::json* vocab,
                                             const std::string& source);
// The fields every checkpoint has: format, version, config (with its "model" section
// replaced by model.config(), the complete model configuration), vocab, step and
// parameters. The trainer adds the optimizer and data state for resuming.
nlohmann::json checkpoint_json(const nlohmann::json& config, const data::Vocab& vocab, models::Model<float>& model,
                               int64_t step);
// The same with the "vocab" record given as written (vocab_to_json or
// word_vocab_to_json): the one place these fields are assembled, for write_checkpoint
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
  data::Vocab vocab;                       // language models (empty for word tasks)
  std::shared_ptr<data::WordTask> words;   // group word runs (null for language models)
  nlohmann::json config;  // the run configuration stored in the checkpoint
  int64_t step = 0;
};
// Rebuilds the model from the checkpoint's config and loads its parameters. Every
// fault is a typed liegrad::Error naming the file; a configured model much larger than
// the values the file holds is refused before it is allocated (core/alloc_limit.hpp).
LoadedModel load_model(const std::string& path);
// The same for a checkpoint already read and checked (read_checkpoint, parse_checkpoint).
LoadedModel load_model(const nlohmann::json& checkpoint, const std::string& path);

}  // namespace liegrad::train
