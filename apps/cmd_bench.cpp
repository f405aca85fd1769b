// `liegrad bench (--config FILE | --checkpoint FILE) [--set k=v ...] [--steps N] [--warmup W] [--threads T] [--json]`,
// `liegrad bench --op expm [--d 16] [--n 4096] [--repeats R] [--threads T] [--json]` and
// `liegrad bench --op gemm [--n 1024] ...`, `liegrad bench --op stream [--mib 128] ...` and
// `liegrad bench --op cores [--d 16] ...` and
// `liegrad bench (--config FILE | --checkpoint FILE) --sample 500,2000 [--repeats R] [--no-cache]`:
// training throughput on synthetic tokens with its roofline per op family, the batched
// exponential with its pullback alone, the float GEMM rate (measure/bench.hpp) or the
// memory bandwidth (measure/stream_bench.hpp) or each CPU's speed (measure/core_bench.hpp),
// or generation speed at batch 1 (measure/sample_bench.hpp).
// The command line only, like every apps/cmd_*.cpp: the timing is measure/bench.cpp's, and
// bench/ holds the scripts that run this command beside PyTorch.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "apps/commands.hpp"
#include "measure/bench.hpp"
#include "train/checkpoint.hpp"
#include "measure/core_bench.hpp"
#include "measure/sample_bench.hpp"
#include "measure/stream_bench.hpp"
#include "train/run_config.hpp"

namespace liegrad::app {

int cmd_bench(const std::vector<std::string>& argv) {
  Args args(argv, {"help", "json", "no-profile", "no-roofline", "no-cache"},
            {"config", "checkpoint", "steps", "warmup", "threads", "op", "d", "n", "norm", "repeats", "data-dir", "mib",
             "peak-n", "stream-mib", "sample"},
            {"set"});
  if (args.help(
          "usage: liegrad bench (--config FILE | --checkpoint FILE) [--set key=value ...] [--steps N] [--warmup W]\n"
          "                     [--threads T] [--no-profile] [--no-roofline] [--peak-n 1024] [--stream-mib 128] [--json]\n"
          "       liegrad bench --op expm [--d 16] [--n 4096] [--norm 1] [--repeats 10] [--threads T] [--json]\n"
          "       liegrad bench --op gemm [--n 1024] [--repeats 10] [--threads T] [--json]\n"
          "       liegrad bench --op stream [--mib 128] [--repeats 10] [--threads T] [--json]\n"
          "       liegrad bench --op cores [--d 16] [--repeats 10] [--json]\n"
          "       liegrad bench (--config FILE | --checkpoint FILE) --sample 500,2000 [--repeats 3] [--no-cache]\n"
          "                     [--threads T] [--json]\n"
          "Times N training steps (default 20, after W = 3 warm-up steps) of the configured model on\n"
          "synthetic tokens at the configured batch x seq_len and prints the median tokens/s (min, max),\n"
          "the share of time per op family and the peak resident memory. --op expm times the batched\n"
          "exponential of N random d x d skew matrices of Frobenius norm --norm with its pullback\n"
          "(median matrices/s); trained exponents are larger (--norm 5 puts d = 16 near 2-norm 2).\n"
          "The time shares come from max(2, N/4) extra steps with per-family timers on\n"
          "(--no-profile skips them); tokens/s come from the N timed steps, run with the timers off.\n"
          "--op gemm times n x n x n float products through liegrad's gemm and OpenBLAS (GFLOP/s),\n"
          "the machine's practical peak for the GFLOP/s that transformer and lstm runs report.\n"
          "--checkpoint times the checkpoint's model from its trained weights (its own config plus\n"
          "--set): the exponential costs more once the exponents have grown in training.\n"
          "--op stream measures the memory bandwidth, STREAM triad a = b + s c on three float arrays\n"
          "of --mib MiB each (GB/s).\n"
          "--op cores times d x d float products on each CPU the process may use, one at a time\n"
          "(products/s), and the slowest over the fastest: on a shared machine the CPUs can differ.\n"
          "After the timed and profiled steps a model bench measures the GEMM peak (--peak-n^3) and the\n"
          "triad bandwidth (--stream-mib arrays) and prints a roofline per op family: the FLOPs and bytes\n"
          "per token (models/roofline.cpp), the bound they give, the measured time and its fraction of\n"
          "the bound (docs/performance.md); --no-roofline skips it.\n"
          "--sample N,N,... times generation at batch 1 as `liegrad sample` runs it (recurrent models\n"
          "carry their state, attention models decode from their cache, the window train.seq_len):\n"
          "symbols/s per length (median of --repeats runs after a warm-up run) and the time per symbol,\n"
          "flat in N when n symbols cost O(n); --no-cache times a forward per symbol instead (of the\n"
          "window, or of the one symbol for a recurrent model, its weights' fixed work formed each time).\n"
          "--threads defaults to the config's train.threads (2) or, for --op, the OpenMP default.\n"))
    return 0;
  const bool json = args.flag("json");
  if (args.has("op") && args.get("op") == "gemm") {
    const auto r = measure::bench_gemm(args.get_int("n", 1024), args.get_int("repeats", 10), args.get_int("threads", 0));
    std::printf("%s", json ? (r.to_json().dump() + "\n").c_str() : r.to_text().c_str());
    return 0;
  }
  if (args.has("op") && args.get("op") == "stream") {
    const auto r = measure::bench_stream(args.get_int("mib", measure::kDefaultStreamMib), args.get_int("repeats", 10),
                                       args.get_int("threads", 0));
    std::printf("%s", json ? (r.to_json().dump() + "\n").c_str() : r.to_text().c_str());
    return 0;
  }
  if (args.has("op") && args.get("op") == "cores") {
    const auto r = measure::bench_cores(args.get_int("d", 16), args.get_int("repeats", 10));
    std::printf("%s", json ? (r.to_json().dump() + "\n").c_str() : r.to_text().c_str());
    return 0;
  }
  if (args.has("op")) {
    if (args.get("op") != "expm")
      throw UsageError("--op: unknown op '" + args.get("op") + "' (known: expm, gemm, stream, cores)");
    const auto r = measure::bench_expm(args.get_int("d", 16), args.get_int("n", 4096), args.get_int("repeats", 10),
                                     args.get_int("threads", 0), args.get_double("norm", 1.0));
    std::printf("%s", json ? (r.to_json().dump() + "\n").c_str() : r.to_text().c_str());
    return 0;
  }
  if (args.has("config") == args.has("checkpoint"))
    throw UsageError("give one of --config FILE or --checkpoint FILE (or --op expm|gemm|stream|cores); see --help");
  measure::BenchOptions opt;
  nlohmann::json config;
  if (args.has("checkpoint")) {
    opt.checkpoint = args.get("checkpoint");
    config = train::read_checkpoint(opt.checkpoint).at("config");
  } else {
    config = train::read_json_file(args.get("config"));
  }
  train::apply_overrides(config, args.all("set"));
  if (args.has("sample")) {
    measure::SampleBenchOptions so;
    so.lengths.clear();
    const std::string list = args.get("sample");
    size_t at = 0;
    while (at <= list.size()) {
      const size_t comma = std::min(list.find(',', at), list.size());
      const std::string item = list.substr(at, comma - at);
      try {
        size_t used = 0;
        so.lengths.push_back(std::stoll(item, &used));
        if (used != item.size()) throw std::invalid_argument(item);
      } catch (const std::exception&) {
        throw UsageError("--sample: expected lengths like 500,2000, got '" + list + "'");
      }
      at = comma + 1;
    }
    so.repeats = args.get_int("repeats", 3);
    so.threads = args.get_int("threads", 0);
    so.cached = !args.flag("no-cache");
    so.checkpoint = opt.checkpoint;
    so.data_dir = args.get("data-dir");
    const auto r = measure::bench_sampling(config, so);
    std::printf("%s", json ? (r.to_json().dump() + "\n").c_str() : r.to_text().c_str());
    return 0;
  }
  opt.steps = args.get_int("steps", 20);
  opt.warmup = args.get_int("warmup", 3);
  opt.threads = args.get_int("threads", 0);
  opt.profile = !args.flag("no-profile");
  opt.data_dir = args.get("data-dir");
  opt.roofline = !args.flag("no-roofline");
  opt.peak_n = args.get_int("peak-n", 1024);
  opt.stream_mib = args.get_int("stream-mib", measure::kDefaultStreamMib);
  if (opt.peak_n < 1 || opt.stream_mib < 1) throw UsageError("--peak-n and --stream-mib must be >= 1");
  if (opt.steps < 1 || opt.warmup < 0) throw UsageError("--steps must be >= 1 and --warmup >= 0");
  const auto r = measure::bench_training(config, opt);
  std::printf("%s", json ? (r.to_json().dump() + "\n").c_str() : r.to_text().c_str());
  return 0;
}

}  // namespace liegrad::app
