// `liegrad plot RUN_DIR... --out FILE.svg [--title TEXT]`.
#include <cstdio>

#include "apps/commands.hpp"
#include "train/checkpoint.hpp"
#include "train/plot.hpp"

namespace liegrad::app {

int cmd_plot(const std::vector<std::string>& argv) {
  Args args(argv, {"help"}, {"out", "title"});
  if (args.flag("help") || args.positional().empty()) {
    std::printf("usage: liegrad plot RUN_DIR [RUN_DIR ...] --out FILE.svg [--title TEXT]\n");
    return args.flag("help") ? 0 : 2;
  }
  if (!args.has("out")) throw UsageError("--out FILE.svg is required");
  train::write_file_atomic(args.get("out"), train::plot_runs_svg(args.positional(), args.get("title")));
  std::printf("wrote %s\n", args.get("out").c_str());
  return 0;
}

}  // namespace liegrad::app
