// Tutorial chapter 8 (docs/tutorial/08-train-and-read.md): train a tiny OSM-RNN end to
// end with liegrad's trainer, reload its checkpoint and score a text with it; then
// 08_read_checkpoint.py reads the same checkpoint in numpy and recomputes the score.
//
//   1. writes ~4,000 characters of word salad (liegrad's Rng, seed 8) to DIR/text.txt;
//   2. train::run_training: an OSM-RNN on SO(4) with linear mixing, 80 AdamW steps on
//      text:DIR/text.txt, writing DIR/run/last.json (docs/checkpoint.md);
//   3. train::load_model rebuilds the model from the checkpoint alone and
//      tasks::evaluate_bpc scores the whole text in bits per character; the state is
//      also streamed through the text to measure its defect (distance from SO(4));
//   4. the same with renormalize_every 0 (no Newton-Schulz step), into DIR/run0;
//   5. writes DIR/tutorial08.json {checkpoint, text, bpc, unrenormalised} for the numpy reader.
// Usage: 08_train_and_read [DIR]   (default ./tutorial08)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "autograd/tape.hpp"
#include "core/rng.hpp"
#include "data/datasets.hpp"
#include "groups/group.hpp"
#include "models/model.hpp"
#include "train/checkpoint.hpp"
#include "tasks/evaluate.hpp"
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

  // Trains with renormalize_every `renorm` into DIR/NAME, reloads the checkpoint and scores
  // the text with it; the worst defect of the float state over the text, streamed as
  // evaluate_bpc streams it (windows of seq_len, the state carried from one to the next).
  struct Run {
    train::TrainResult result;
    std::vector<double> losses;
    std::string checkpoint;
    int64_t step = 0, symbols = 0, predictions = 0;
    double bpc = 0, worst_defect = 0;
  };
  auto train_and_score = [&](const char* name, int renorm) {
    // The run configuration: the same JSON `liegrad train --config` reads (docs/training.md).
    const nlohmann::json config = {
        {"model", {{"type", "osm_rnn"}, {"group", "SO(4)"}, {"mixing", "linear"}, {"renormalize_every", renorm}}},
        {"data", {{"dataset", "text:" + text_path}}},
        {"train",
         {{"steps", 80}, {"batch", 8}, {"seq_len", 32}, {"lr", 0.02}, {"warmup", 5}, {"seed", 1},
          {"eval_interval", 1000}, {"log_interval", 1000}, {"threads", 1}}}};
    Run run;
    train::TrainOptions opt;
    opt.out_dir = (dir / name).string();
    opt.force = true;  // rerunning the program replaces the previous run
    opt.on_step = [&](const train::StepReport& r) { run.losses.push_back(r.loss); };
    run.result = train::run_training(config, opt);
    // Everything below uses the checkpoint file only.
    run.checkpoint = (dir / name / "last.json").string();
    train::LoadedModel loaded = train::load_model(run.checkpoint);
    const data::Vocab& vocab = *loaded.task->text_vocab();  // the run read text
    const std::vector<int32_t> ids = vocab.encode(data::read_file_bytes(text_path));
    const int64_t T = config["train"]["seq_len"].get<int64_t>();
    const tasks::EvalResult eval = tasks::evaluate_bpc(*loaded.model, ids, T);
    run.step = loaded.step, run.symbols = vocab.size(), run.predictions = eval.predictions, run.bpc = eval.bpc;
    const auto g = groups::make_group("SO(4)");
    ag::NoGrad no_grad;
    models::RecurrentState<float> state;
    for (size_t s = 0; s + 1 < ids.size(); s += size_t(T)) {
      const size_t len = std::min(size_t(T), ids.size() - 1 - s);
      loaded.model->forward(std::vector<int32_t>(ids.begin() + long(s), ids.begin() + long(s + len)), 1,
                            int64_t(len), &state);
      run.worst_defect = std::fmax(run.worst_defect, g->defect(state.tensors[0]));
    }
    return run;
  };

  const Run run = train_and_score("run", 16);
  auto mean = [&](size_t from, size_t to) {
    double s = 0;
    for (size_t i = from; i < to; ++i) s += run.losses[i];
    return s / double(to - from);
  };
  const double first = mean(0, 10), last = mean(run.losses.size() - 10, run.losses.size());
  std::printf(
      "trained %lld steps, %lld parameters: training loss %.3f -> %.3f nats/char (mean of 10 steps), "
      "validation %.3f BPC\n",
      static_cast<long long>(run.result.steps_done), static_cast<long long>(run.result.parameters), first, last,
      run.result.scores["val_bpc"].get<double>());
  check("training_lowers_the_loss", "last_over_first", last / first, 0.9);
  const double uniform = std::log2(static_cast<double>(run.symbols));
  std::printf("reloaded %s (step %lld, %lld symbols): %.6f BPC over %lld predictions; uniform guessing %.3f\n",
              run.checkpoint.c_str(), static_cast<long long>(run.step), static_cast<long long>(run.symbols), run.bpc,
              static_cast<long long>(run.predictions), uniform);
  check("reloaded_model_beats_uniform", "bpc_over_uniform", run.bpc / uniform, 0.8);
  check("checkpoint_holds_the_last_step", "steps_missing", double(80 - run.step), 0.5);

  // The same run without the Newton-Schulz step: the float state drifts off SO(4).
  const Run run0 = train_and_score("run0", 0);
  std::printf("state defect over the text: %.1e with renormalize_every 16, %.1e with 0 (%.6f BPC)\n",
              run.worst_defect, run0.worst_defect, run0.bpc);
  check("renormalised_state_stays_near_SO4", "defect", run.worst_defect, 1e-5);
  check("unrenormalised_state_drifts_more", "renormalised_over_not", run.worst_defect / run0.worst_defect, 0.1);

  const nlohmann::json summary = {{"checkpoint", run.checkpoint},
                                  {"text", text_path},
                                  {"bpc", run.bpc},
                                  {"unrenormalised", {{"checkpoint", run0.checkpoint}, {"bpc", run0.bpc}}}};
  std::ofstream(dir / "tutorial08.json") << summary.dump(1) << "\n";
  std::printf("wrote %s for 08_read_checkpoint.py\n", (dir / "tutorial08.json").c_str());
  return check.status();
}
