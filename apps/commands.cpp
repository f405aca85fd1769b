// The table of subcommands.
#include "apps/commands.hpp"

namespace liegrad::app {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"train", "train a model from a JSON config; checkpoints, metrics and BPC in --out DIR", cmd_train},
      {"eval", "bits per character of a checkpoint on a split or a text file", cmd_eval},
      {"sample", "generate text from a checkpoint", cmd_sample},
      {"params", "parameter count of a config, with a per-tensor breakdown; --match N sizes it", cmd_params},
      {"plot", "SVG of training and validation BPC against steps for one or more runs", cmd_plot},
      {"gradcheck", "check every op's derivative against finite differences (double precision)", cmd_gradcheck},
      {"bench", "training throughput (tokens/s, time per op family, peak memory) on synthetic tokens", cmd_bench},
      {"probe", "per OSMFormer layer: attention and grounding tangents, and how much of the attention the grounding undoes",
       cmd_probe},
      {"groupcheck", "measure the Lie-group laws of every group kind (double precision)", cmd_groupcheck},
  };
  return table;
}

}  // namespace liegrad::app
