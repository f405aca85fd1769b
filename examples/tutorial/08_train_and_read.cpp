// Tutorial chapter 8 (docs/tutorial/08-train-and-read.md): train a tiny OSM-RNN end to
// end with liegrad's trainer, reload its checkpoint and score a text with it; then
// 08_read_checkpoint.py reads the same checkpoint in numpy and recomputes the score.
//
//   1. writes ~4,000 characters of word salad (liegrad's Rng, seed 8) to DIR/text.txt;
//   2. train::run_training: an OSM-RNN on SO(4) with linear mixing, 80 AdamW steps on
//      text:DIR/text.txt, writing DIR/run/last.json (docs/checkpoint.md);
//   3. train::load_model rebuilds the model from the checkpoint alone and
//      train::evaluate_bpc scores the whole text in bits per character;
//   4. writes DIR/tutorial08.json {checkpoint, text, bpc} for the numpy reader.
// Usage: 08_train_and_read [DIR]   (default ./tutorial08)
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "data/datasets.hpp"
#include "train/checkpoint.hpp"
#include "train/evaluate.hpp"
#include "train/trainer.hpp"
#include "tutorial.hpp"

using namespace liegrad;

int main(int argc, char** argv) {
  tutorial::Checks check;
  const std::filesystem::path dir = std::filesystem::absolute(argc > 1 ? argv[1] : "tutorial08");
  std::filesystem::create_directories(dir);
  const std::string text_path = (dir / "text.txt").string();
  {
    // Word salad from liegrad's own generator (core/rng.hpp: the same stream on every machine).
    const std::vector<std::string> words = {"a",     "tape",  "records", "every", "op", "and",         "the",
                                            "group", "keeps", "its",     "state", "on", "sphere",      "while",
                                            "each",  "token", "moves",   "it",    "by", "exponentials"};
    Rng rng(8);
    std::string text;
    while (text.size() < 4000)
      text += words[static_cast<size_t>(rng.integer(int64_t(words.size())))] + (rng.integer(9) == 0 ? ".\n" : " ");
    std::ofstream(text_path, std::ios::binary) << text;
  }

  // The run configuration: the same JSON `liegrad train --config` reads (docs/training.md).
  const nlohmann::json config = {
      {"model", {{"type", "osm_rnn"}, {"group", "SO(4)"}, {"mixing", "linear"}, {"renormalize_every", 16}}},
      {"data", {{"dataset", "text:" + text_path}}},
      {"train",
       {{"steps", 80},
        {"batch", 8},
        {"seq_len", 32},
        {"lr", 0.02},
        {"warmup", 5},
        {"seed", 1},
        {"eval_interval", 1000},
        {"log_interval", 1000},
        {"threads", 1}}}};
  train::TrainOptions opt;
  opt.out_dir = (dir / "run").string();
  opt.force = true;  // rerunning the program replaces the previous run
  std::vector<double> losses;
  opt.on_step = [&](const train::StepReport& r) { losses.push_back(r.loss); };
  const train::TrainResult result = train::run_training(config, opt);
  auto mean = [&](size_t from, size_t to) {
    double s = 0;
    for (size_t i = from; i < to; ++i) s += losses[i];
    return s / double(to - from);
  };
  const double first = mean(0, 10), last = mean(losses.size() - 10, losses.size());
  std::printf(
      "trained %lld steps, %lld parameters: training loss %.3f -> %.3f nats/char (mean of 10 steps), "
      "validation %.3f BPC\n",
      static_cast<long long>(result.steps_done), static_cast<long long>(result.parameters), first, last,
      result.val_bpc);
  check("training_lowers_the_loss", "last_over_first", last / first, 0.9);

  // Everything below uses the checkpoint file only.
  const std::string checkpoint = (dir / "run" / "last.json").string();
  train::LoadedModel loaded = train::load_model(checkpoint);
  const std::vector<int32_t> ids = loaded.vocab.encode(data::read_file_bytes(text_path));
  const train::EvalResult eval = train::evaluate_bpc(*loaded.model, ids, config["train"]["seq_len"].get<int64_t>());
  const double uniform = std::log2(static_cast<double>(loaded.vocab.size()));
  std::printf("reloaded %s (step %lld, %lld symbols): %.6f BPC over %lld predictions; uniform guessing %.3f\n",
              checkpoint.c_str(), static_cast<long long>(loaded.step), static_cast<long long>(loaded.vocab.size()),
              eval.bpc, static_cast<long long>(eval.predictions), uniform);
  check("reloaded_model_beats_uniform", "bpc_over_uniform", eval.bpc / uniform, 0.8);
  check("checkpoint_holds_the_last_step", "steps_missing", double(80 - loaded.step), 0.5);

  const nlohmann::json summary = {{"checkpoint", checkpoint}, {"text", text_path}, {"bpc", eval.bpc}};
  std::ofstream(dir / "tutorial08.json") << summary.dump(1) << "\n";
  std::printf("wrote %s for 08_read_checkpoint.py\n", (dir / "tutorial08.json").c_str());
  return check.status();
}
