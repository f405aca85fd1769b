// The task registry: one entry (TaskSpec) per task kind, found by the run
// configuration's data.dataset. An entry holds what liegrad knows about a kind by name:
// which dataset names it takes, how it reads and resolves its data section, the train
// keys it has no use for, its `liegrad eval` options, and the factory of its Task
// (tasks/task.hpp). The trainer, checkpoints, `liegrad eval`, `params` and `bench` go
// through it, so no other file tests which task a run has.
//
// Adding a task kind is its Task class plus one registration:
//
//   liegrad::tasks::register_task({.name = "copy",
//                                  .claims = [](const std::string& d) { return d.rfind("copy:", 0) == 0; },
//                                  .datasets = "\"copy:<symbols>\"",
//                                  .parse_data = parse_copy_data,
//                                  .make = make_copy_task});
//
// Built-in kinds ("text", "words") are registered before the first lookup; names are
// never unregistered. Registration is thread-safe.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.hpp"
#include "tasks/task.hpp"

namespace liegrad::tasks {

// What a factory builds a task from.
struct TaskSource {
  nlohmann::json data;                         // the resolved data section (TaskSpec::parse_data's)
  std::string data_dir;                        // "" = the data search path
  const nlohmann::json* vocab_record = nullptr;  // a checkpoint's "vocab" record, checked against the task
  std::string source;                          // names the checkpoint in messages
};

struct EvalOption {
  std::string name;  // "--lengths" is "lengths"
  std::string help;  // "LIST  word lengths to score (default: data.eval_lengths)"
};

struct TaskSpec {
  std::string name;                                  // "text", "words"
  std::function<bool(const std::string& dataset)> claims;  // true for the dataset names of this kind
  std::string datasets;                              // those names for messages: "\"words:<group>\""
  std::vector<std::string> suggestions;              // literal names offered for a near-miss
  // Reads the data section (its "dataset" key read already, `dataset` its value) and
  // returns it resolved, every default filled in; ConfigError naming the key otherwise.
  std::function<nlohmann::json(ConfigReader& data, const std::string& dataset)> parse_data;
  // Train keys the kind does not use, each with the hint given when one is set.
  std::vector<std::pair<std::string, std::string>> unused_train_keys;
  std::function<std::unique_ptr<Task>(const TaskSource& source)> make;
  std::vector<EvalOption> eval_options;              // `liegrad eval` options of its own
};

// Adds an entry; ValueError for an empty name, a name taken or a missing function.
void register_task(TaskSpec spec);
// The entry that claims `dataset`; ConfigError "data.dataset: unknown dataset ..." listing
// every registered kind's names, with the nearest suggestion.
const TaskSpec& find_task_spec(const std::string& dataset);
// Every entry, in registration order (the built-in ones first).
std::vector<const TaskSpec*> task_specs();

// The task of a resolved data section (find_task_spec(data["dataset"]).make).
std::unique_ptr<Task> make_task(const TaskSource& source);

}  // namespace liegrad::tasks
