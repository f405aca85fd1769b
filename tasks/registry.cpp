// The task registry (see registry.hpp): a mutex-guarded list of entries, the built-in
// ones first, and the one unknown-dataset error.
#include "tasks/registry.hpp"

#include <deque>
#include <mutex>

#include "core/errors.hpp"
#include "tasks/rotations_task.hpp"
#include "tasks/text_task.hpp"
#include "tasks/words_task.hpp"

namespace liegrad::tasks {

namespace {

struct Registry {
  std::mutex mutex;
  std::deque<TaskSpec> entries;  // a deque: references to entries stay valid as it grows
  Registry() {
    entries.push_back(text_task_spec());
    entries.push_back(words_task_spec());
    entries.push_back(rotations_task_spec());
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_task(TaskSpec spec) {
  if (spec.name.empty()) throw ValueError("register_task: the task kind needs a name");
  if (!spec.claims || !spec.parse_data || !spec.make)
    throw ValueError("register_task: '" + spec.name + "' needs claims, parse_data and make");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const TaskSpec& s : r.entries)
    if (s.name == spec.name) throw ValueError("register_task: the task kind '" + spec.name + "' is registered already");
  r.entries.push_back(std::move(spec));
}

std::vector<const TaskSpec*> task_specs() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const TaskSpec*> out;
  for (const TaskSpec& s : r.entries) out.push_back(&s);
  return out;
}

const TaskSpec& find_task_spec(const std::string& dataset) {
  const std::vector<const TaskSpec*> specs = task_specs();
  for (const TaskSpec* s : specs)
    if (s->claims(dataset)) return *s;
  std::string names;
  std::vector<std::string> suggestions;
  for (size_t i = 0; i < specs.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == specs.size() ? " or " : ", ") + specs[i]->datasets;
    suggestions.insert(suggestions.end(), specs[i]->suggestions.begin(), specs[i]->suggestions.end());
  }
  const std::string near = nearest_word(dataset, suggestions);
  throw ConfigError("data.dataset: unknown dataset '" + printable(dataset) + "' (expected " + names + ")" +
                    (near.empty() ? "" : "; did you mean '" + near + "'?"));
}

std::unique_ptr<Task> make_task(const TaskSource& source) {
  return find_task_spec(source.data.at("dataset").get<std::string>()).make(source);
}

}  // namespace liegrad::tasks
