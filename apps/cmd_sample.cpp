// `liegrad sample --checkpoint FILE [--prompt TEXT] [--length N] [--temperature T]
// [--top-k K] [--seed S]`: prints the prompt followed by generated text.
#include <cstdio>

#include "apps/commands.hpp"
#include "train/checkpoint.hpp"
#include "train/run_config.hpp"
#include "train/sample.hpp"

namespace liegrad::app {

int cmd_sample(const std::vector<std::string>& argv) {
  Args args(argv, {"help"}, {"checkpoint", "prompt", "length", "temperature", "top-k", "seed"});
  if (args.help(
          "usage: liegrad sample --checkpoint FILE [--prompt TEXT] [--length 200] [--temperature 1.0]\n"
          "                      [--top-k 0] [--seed 0]\n"))
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
  const std::string text = train::sample_text(*m.model, *vocab, args.get("prompt"), opt);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::printf("\n");
  return 0;
}

}  // namespace liegrad::app
