// `liegrad eval --checkpoint FILE [--split val|test] [--text FILE] [--json]
// [--data-dir DIR]`: BPC of a checkpoint over a whole split of its dataset, or over
// a text file (every character must be in the checkpoint's vocabulary).
#include <cstdio>

#include "apps/commands.hpp"
#include "core/parallel.hpp"
#include "data/datasets.hpp"
#include "train/checkpoint.hpp"
#include "train/evaluate.hpp"
#include "train/run_config.hpp"

namespace liegrad::app {

int cmd_eval(const std::vector<std::string>& argv) {
  Args args(argv, {"help", "json"}, {"checkpoint", "split", "text", "data-dir", "threads"});
  if (args.flag("help")) {
    std::printf(
        "usage: liegrad eval --checkpoint FILE [--split val|test] [--text FILE] [--json] [--data-dir DIR]\n"
        "Bits per character over the whole split (transformers: consecutive non-overlapping windows;\n"
        "recurrent models: the state carried from the first symbol to the last).\n");
    return 0;
  }
  if (!args.has("checkpoint")) throw UsageError("--checkpoint FILE is required");
  const std::string split = args.get("split", "test");
  if (split != "val" && split != "test") throw UsageError("--split must be 'val' or 'test', got '" + split + "'");
  train::LoadedModel m = train::load_model(args.get("checkpoint"));
  const train::RunConfig rc = train::parse_run_config(m.config);
  set_num_threads(args.get_int("threads", rc.train.threads));
  std::vector<int32_t> stream;
  std::string source;
  if (args.has("text")) {
    source = args.get("text");
    const std::string text = data::read_file_bytes(source);
    try {
      stream = m.vocab.encode(text);
    } catch (const ValueError& e) {
      throw ValueError("'" + source + "' cannot be encoded with the checkpoint's vocabulary: " + e.what());
    }
  } else {
    const data::Corpus c = data::load_corpus(rc.data.dataset, args.get("data-dir"), rc.data.val_frac, rc.data.test_frac);
    if (!(c.vocab == m.vocab))
      throw ValueError("the dataset's vocabulary differs from the checkpoint's; was it trained on " + rc.data.dataset + "?");
    stream = split == "val" ? c.val : c.test;
    source = rc.data.dataset + ":" + split;
  }
  const train::EvalResult r = train::evaluate_bpc(*m.model, stream, rc.train.seq_len);
  if (args.flag("json"))
    std::printf("{\"source\": \"%s\", \"bpc\": %.6f, \"nats\": %.6f, \"predictions\": %lld}\n", source.c_str(), r.bpc,
                r.nats_per_symbol, static_cast<long long>(r.predictions));
  else
    std::printf("%s: %.4f BPC over %lld predictions\n", source.c_str(), r.bpc, static_cast<long long>(r.predictions));
  return 0;
}

}  // namespace liegrad::app
