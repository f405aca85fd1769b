// `liegrad eval --checkpoint FILE [--split val|test] [--json] [--data-dir DIR] [task options]`:
// a checkpoint's scores as its task defines them (tasks/task.hpp): bits per character
// over a whole split or a text file (--text FILE) for text tasks; loss and accuracy by
// word length for group word tasks (--lengths 64,128,..., --sequences N), with the
// group-structure diagnosis. Each task kind's own options come from its registry entry.
#include <cstdio>
#include <iostream>

#include "apps/commands.hpp"
#include "core/parallel.hpp"
#include "tasks/registry.hpp"
#include "train/checkpoint.hpp"
#include "train/run_config.hpp"

namespace liegrad::app {

int cmd_eval(const std::vector<std::string>& argv) {
  std::vector<std::string> options = {"checkpoint", "split", "data-dir", "threads"};
  std::string usage =
      "usage: liegrad eval --checkpoint FILE [--split val|test] [--json] [--data-dir DIR] [--threads N]\n"
      "The checkpoint's scores on a split as its task defines them: bits per character over the\n"
      "whole split for text (transformers: consecutive non-overlapping windows; recurrent models:\n"
      "the state carried from the first symbol to the last); loss and accuracy (per position, whole\n"
      "word, last position) by word length for group words (words:<group>).\n"
      "Options of one task kind:\n";
  for (const tasks::TaskSpec* spec : tasks::task_specs())
    for (const tasks::EvalOption& o : spec->eval_options) {
      options.push_back(o.name);
      usage += "  --" + o.name + " " + o.help + "   (" + spec->datasets + ")\n";
    }
  Args args(argv, {"help", "json"}, options);
  if (args.help(usage.c_str())) return 0;
  if (!args.has("checkpoint")) throw UsageError("--checkpoint FILE is required");
  tasks::EvalRequest request;
  request.split = args.get("split", "test");
  if (request.split != "val" && request.split != "test")
    throw UsageError("--split must be 'val' or 'test', got '" + request.split + "'");
  train::LoadedModel m = train::load_model(args.get("checkpoint"), args.get("data-dir"));
  const train::RunConfig rc = train::parse_run_config(m.config);
  set_num_threads(args.get_int("threads", rc.train.threads));
  // The task's own options; another kind's is a usage error naming the kind it belongs to.
  const tasks::TaskSpec& mine = tasks::find_task_spec(m.task->dataset());
  // Kinds may share an option's name (--lengths): only one that no option of the run's kind has is an error.
  const auto mine_has = [&mine](const std::string& name) {
    for (const tasks::EvalOption& o : mine.eval_options)
      if (o.name == name) return true;
    return false;
  };
  for (const tasks::TaskSpec* spec : tasks::task_specs())
    for (const tasks::EvalOption& o : spec->eval_options) {
      if (!args.has(o.name)) continue;
      if (spec != &mine && !mine_has(o.name))
        throw UsageError("--" + o.name + " applies to " + spec->datasets + " runs, not to " + m.task->dataset());
      request.options[o.name] = args.get(o.name);
    }
  nlohmann::json scores = m.task->evaluate(*m.model, rc.task_settings(), request);
  scores["step"] = m.step;
  if (args.flag("json")) {
    std::printf("%s\n", scores.dump().c_str());
    return 0;
  }
  m.task->print_evaluation(scores, std::cout);
  return 0;
}

}  // namespace liegrad::app
