// `liegrad sample --checkpoint FILE [--prompt TEXT] [--length N] [--temperature T]
// [--top-k K] [--seed S] [--keep N]`: prints the prompt followed by generated text.
// --keep: the attention models' restart window (train/sample.hpp), 1..the training window.
#include <cstdio>

#include "apps/commands.hpp"
#include "train/checkpoint.hpp"
#include "train/run_config.hpp"
#include "train/sample.hpp"

namespace liegrad::app {

int cmd_sample(const std::vector<std::string>& argv) {
  Args args(argv, {"help"}, {"checkpoint", "prompt", "length", "temperature", "top-k", "seed", "keep"});
  if (args.help(
          "usage: liegrad sample --checkpoint FILE [--prompt TEXT] [--length 200] [--temperature 1.0]\n"
          "                      [--top-k 0] [--seed 0] [--keep N]\n"
          "  --keep N  attention models: when the window of the training length (train.seq_len) is\n"
          "            full, it restarts from its last N symbols (1..seq_len; default seq_len/2);\n"
          "            N = seq_len slides the window by one symbol, the exact but slowest reading\n"))
    return 0;
  if (!args.has("checkpoint")) throw UsageError("--checkpoint FILE is required");
  train::LoadedModel m = train::load_model(args.get("checkpoint"));
  const data::Vocab* vocab = m.task->text_vocab();
  if (!vocab)
    throw UsageError("'" + args.get("checkpoint") + "' is a " + m.task->dataset() +
                     " model, whose inputs are not text; it generates no text: use liegrad eval");
  train::SampleOptions opt;
  opt.length = args.get_int("length", 200);
  opt.temperature = args.get_double("temperature", 1.0);
  opt.top_k = args.get_int("top-k", 0);
  opt.seed = static_cast<uint64_t>(args.get_int("seed", 0));
  opt.context = train::parse_run_config(m.config).train.seq_len;
  if (args.has("keep")) {
    opt.keep = args.get_int("keep", 0);
    if (opt.keep < 1 || opt.keep > opt.context)
      throw UsageError("--keep must be in 1.." + std::to_string(opt.context) + " (the training window, train.seq_len), got " +
                       std::to_string(opt.keep));
  }
  const std::string text = train::sample_text(*m.model, *vocab, args.get("prompt"), opt);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::printf("\n");
  return 0;
}

}  // namespace liegrad::app
