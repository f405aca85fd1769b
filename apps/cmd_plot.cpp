// `liegrad plot RUN_DIR... --out FILE.svg [--title TEXT] [--metric M]`: training and
// validation BPC against steps for language-model runs (report/plot.hpp), or accuracy
// against word length for group word runs (report/plot_words.hpp), or angle error against
// walk length for rotation-tracking runs (report/plot_rotations.hpp).
#include <cstdio>

#include "apps/commands.hpp"
#include "train/checkpoint.hpp"
#include "report/plot.hpp"
#include "report/plot_rotations.hpp"
#include "report/plot_words.hpp"

namespace liegrad::app {

int cmd_plot(const std::vector<std::string>& argv) {
  Args args(argv, {"help"}, {"out", "title", "metric"});
  if (args.flag("help") || args.positional().empty()) {
    std::printf(
        "usage: liegrad plot RUN_DIR [RUN_DIR ...] --out FILE.svg [--title TEXT]\n"
        "                    [--metric position_acc|sequence_acc|final_acc]\n"
        "Language-model runs: training and validation BPC against steps. Group word runs\n"
        "(words:<group>): test accuracy against word length (--metric, default position_acc).\n"
        "Rotation-tracking runs (rotations:SO3): mean and 95th-percentile angle error against length.\n");
    return args.flag("help") ? 0 : 2;
  }
  if (!args.has("out")) throw UsageError("--out FILE.svg is required");
  size_t rotations = 0;
  for (const auto& d : args.positional()) rotations += report::is_rotation_run(d);
  if (rotations != 0) {
    if (rotations != args.positional().size()) throw UsageError("give either rotation-tracking runs or other runs, not both");
    if (args.has("metric")) throw UsageError("--metric applies to group word runs (words:<group>)");
    train::write_file_atomic(args.get("out"), report::plot_rotation_error_svg(args.positional(), args.get("title")));
    std::printf("wrote %s\n", args.get("out").c_str());
    return 0;
  }
  size_t words = 0;
  for (const auto& d : args.positional()) words += report::scored_by_length(d);
  if (words != 0 && words != args.positional().size())
    throw UsageError("give either group word runs or language-model runs, not both");
  if (words == 0 && args.has("metric")) throw UsageError("--metric applies to group word runs (words:<group>)");
  const std::string svg = words ? report::plot_word_accuracy_svg(args.positional(), args.get("title"),
                                                                args.get("metric", "position_acc"))
                                : report::plot_runs_svg(args.positional(), args.get("title"));
  train::write_file_atomic(args.get("out"), svg);
  std::printf("wrote %s\n", args.get("out").c_str());
  return 0;
}

}  // namespace liegrad::app
