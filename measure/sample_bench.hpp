// bench_sampling: generation speed at batch 1, as `liegrad sample` generates
// (train/sample_text: recurrent models carry their state, attention models decode
// incrementally from their cache, models/decoding.hpp), for each requested length n:
// symbols per second, median over `repeats` runs after one warm-up run, and the time per
// symbol, which is flat in n when generating n symbols costs O(n). The model comes from a
// run configuration (random initial weights) or a checkpoint; the window is the config's
// train.seq_len, the prompt one symbol, temperature 1, the whole vocabulary. `cached =
// false` times a forward per symbol instead: of the window for the attention models (their
// reference path), of the one symbol for the recurrent ones (the weights' fixed work,
// such as the OSM-RNN's token elements and prototypes, formed again every symbol).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/spread.hpp"

namespace liegrad::measure {

struct SampleBenchOptions {
  std::vector<int64_t> lengths{500, 2000};  // symbols generated per run, each >= 1
  int repeats = 3;                          // timed runs per length (>= 1)
  int threads = 0;                          // 0 = the config's train.threads
  bool cached = true;
  std::string checkpoint;  // weights to load (the config should be the checkpoint's own)
  std::string data_dir;    // only for corpora whose vocabulary must be read
};

struct SampleBenchResult {
  std::string model;
  int64_t parameters = 0, vocab = 0, context = 0;
  int threads = 0, repeats = 0;
  bool cached = true;
  struct Row {
    int64_t length = 0;
    Spread symbols_per_s;
    double us_per_symbol = 0;  // 1e6 / the median rate
  };
  std::vector<Row> rows;
  double peak_rss_mib = 0;
  nlohmann::json to_json() const;
  std::string to_text() const;
};

SampleBenchResult bench_sampling(const nlohmann::json& config, const SampleBenchOptions& options);

}  // namespace liegrad::measure
