// Throughput benchmarks behind `liegrad bench`.
//
// bench_training: builds the model and optimizer of a run configuration, feeds them
// synthetic uniformly random tokens of the configured vocabulary (no data is read for
// the known datasets), runs `warmup` untimed and `steps` timed training steps at the
// configured batch x seq_len (forward, cross-entropy, backward, clipping, optimizer
// step; recurrent models carry their state across windows as in training) and
// reports tokens per second per step (median, min, max), the share of the timed
// steps spent per op family (core/profile.hpp; "other" is the rest; measured on
// max(2, steps/4) further steps with the timers on, so they never touch the
// throughput) and the peak resident memory of the process.
//
// bench_expm: the batched exponential of N random n x n skew-symmetric matrices of
// Frobenius norm 1 with its pullback (cotangents of norm 1), timed as training runs
// it (the expm tape op forward, then its backward) and as the bare kernels
// (expm_forward + expm_pullback); matrices per second, median over `repeats`.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace liegrad::train {

struct BenchOptions {
  int steps = 20;
  int warmup = 3;
  int threads = 0;       // 0 = the config's train.threads
  bool profile = true;   // time op families (on extra steps after the timed ones)
  std::string data_dir;  // only for corpora whose vocabulary must be read (text:<path>)
};

struct Spread {
  double median = 0, min = 0, max = 0;
};

struct BenchResult {
  std::string model;
  int64_t parameters = 0, vocab = 0, batch = 0, seq_len = 0;
  int threads = 0, steps = 0, warmup = 0;
  Spread tokens_per_s;
  double step_seconds_median = 0;
  // Tokens per second of process CPU time (all threads) over the timed steps: a
  // load-independent companion of tokens_per_s on a shared machine.
  double tokens_per_cpu_s = 0;
  // (family, share of the timed steps' wall time), families in profile order, then "other".
  std::vector<std::pair<std::string, double>> breakdown;
  double peak_rss_mib = 0;
  nlohmann::json to_json() const;
  std::string to_text() const;
};

BenchResult bench_training(const nlohmann::json& config, const BenchOptions& options);

struct ExpmBenchResult {
  int64_t n = 0, N = 0;
  int repeats = 0, threads = 0;
  Spread tape;     // matrices/s, expm tape op forward + backward (the training route)
  Spread kernels;  // matrices/s, expm_forward + expm_pullback
  double tape_per_cpu_s = 0;  // matrices per second of process CPU time, tape route
  double peak_rss_mib = 0;
  nlohmann::json to_json() const;
  std::string to_text() const;
};

// threads 0 = keep the current thread count.
ExpmBenchResult bench_expm(int64_t n, int64_t N, int repeats, int threads);

// Peak resident set size of this process so far, in MiB (getrusage).
double peak_rss_mib();
// CPU time (user + system, all threads) of this process so far, in seconds.
double process_cpu_seconds();

}  // namespace liegrad::train
