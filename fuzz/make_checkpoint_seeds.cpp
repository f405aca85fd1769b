// Writes the checkpoint fuzz target's seed corpus: a tiny trained checkpoint of every
// model type (and both group parameter modes), each trained for a few steps on a small
// generated text through train::run_training, so the seeds are real checkpoints of the
// current format and are never committed. Usage: make_checkpoint_seeds OUT_DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "train/trainer.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_checkpoint_seeds OUT_DIR\n");
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path work = out / ".work";
  try {
    fs::create_directories(work);
    std::string text;
    for (int i = 0; text.size() < 3000; ++i) text += i % 7 ? "the cat sat on the mat, " : "a dog ran.\n";
    std::ofstream(work / "text.txt", std::ios::binary) << text;
    const std::vector<std::pair<std::string, json>> models = {
        {"lstm", {{"type", "lstm"}, {"hidden", 4}}},
        {"transformer", {{"type", "transformer"}, {"D", 8}, {"layers", 1}, {"heads", 2}}},
        {"osm_rnn", {{"type", "osm_rnn"}, {"group", "SO(3)"}}},
        {"osmformer", {{"type", "osmformer"}, {"group", "U(2)"}, {"layers", 1}, {"heads", 1}}},
        {"osmformer_manifold",
         {{"type", "osmformer"}, {"group", "SO(3)xT(1)"}, {"layers", 1}, {"heads", 2}, {"group_param", "manifold"},
          {"mixing", "lowrank"}, {"rank", 2}}},
        {"exprnn", {{"type", "exprnn"}, {"hidden", 4}}},
    };
    for (const auto& [name, model] : models) {
      const json cfg = {{"model", model},
                        {"data", {{"dataset", "text:" + (work / "text.txt").string()}, {"val_frac", 0.1}, {"test_frac", 0.1}}},
                        {"train",
                         {{"steps", 2}, {"batch", 2}, {"seq_len", 8}, {"warmup", 1}, {"eval_interval", 2}, {"threads", 1}}}};
      liegrad::train::TrainOptions opt;
      opt.out_dir = (work / name).string();
      opt.force = true;
      liegrad::train::run_training(cfg, opt);
      fs::copy_file(work / name / "last.json", out / (name + ".json"), fs::copy_options::overwrite_existing);
    }
    fs::remove_all(work);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_checkpoint_seeds: %s\n", e.what());
    return 1;
  }
  std::printf("wrote %zu checkpoint seeds to %s\n", size_t(6), out.c_str());
  return 0;
}
