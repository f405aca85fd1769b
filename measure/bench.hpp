// Throughput benchmarks behind `liegrad bench`: the library half (a library so the tests
// reach it); apps/cmd_bench.cpp is the command line, bench/ the PyTorch comparison scripts.
//
// bench_training: builds the model and optimizer of a run configuration, feeds them
// synthetic uniformly random tokens of the configured vocabulary (no data is read for
// the known datasets), runs `warmup` untimed and `steps` timed training steps at the
// configured batch x seq_len (the trainer's own step, train/train_step.hpp, at the
// configured lr without its schedule; recurrent models carry their state across
// windows as in training) and
// reports tokens per second per step (median, min, max), the share of the timed
// steps spent per op family (core/profile.hpp; "other" is the rest; measured on
// max(2, steps/4) further steps with the timers on, so they never touch the
// throughput) and the peak resident memory of the process. With `roofline` on (the
// default) it then measures the float GEMM peak (bench_gemm) and the memory bandwidth
// (bench_stream, measure/stream_bench.hpp) in the same process and reports each family's
// roofline (measure/roofline_table.hpp); these run after the peak memory is read, so their
// arrays do not count in it.
//
// bench_expm: the batched exponential of N random n x n skew-symmetric matrices of
// Frobenius norm `norm` (default 1; trained OSM exponents are larger, and the
// exponential's plan takes more products for them) with its pullback (cotangents of
// norm 1), timed as training runs
// it (the expm tape op forward, then its backward) and as the bare kernels
// (expm_forward + expm_pullback); matrices per second, median over `repeats`.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/roofline_table.hpp"
#include "measure/spread.hpp"

namespace liegrad::measure {

struct BenchOptions {
  int steps = 20;
  int warmup = 3;
  int threads = 0;       // 0 = the config's train.threads
  bool profile = true;   // time op families (on extra steps after the timed ones)
  std::string data_dir;  // only for corpora whose vocabulary must be read (text:<path>)
  // A checkpoint whose weights replace the random initialisation (the config passed to
  // bench_training should be the checkpoint's own). Trained weights give the exponent
  // norms, and so the exponential's cost, of a real run rather than of step 0.
  std::string checkpoint;
  // The roofline's measurements: the GEMM peak on peak_n^3 products and the STREAM triad
  // on stream_mib MiB arrays, `roof_repeats` timed runs each.
  bool roofline = true;
  int64_t peak_n = 1024;
  int64_t stream_mib = 128;  // kDefaultStreamMib (measure/stream_bench.hpp)
  int roof_repeats = 5;
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
  // Matrix-product FLOPs of one training step per token (multiply-add = 2, backward =
  // twice the forward; causal attention counts the half it computes; docs/performance.md)
  // and the rate they are done at (median step). The exponentials' share is counted, not
  // assumed: exp_products_per_token is the forward products (degree + squarings) that
  // the exponentials of a step actually took, per token (0 for models without
  // exponentials), measured on the profiled steps; exp_mean_products the same per
  // exponential.
  double exp_products_per_token = 0, exp_mean_products = 0;
  double flops_per_token = 0, gflop_per_s = 0;
  // The loss of the first (warm-up or timed) step on the synthetic tokens: ln(V) or so
  // at initialisation, something else for trained weights (--checkpoint).
  double first_loss = 0;
  double peak_rss_mib = 0;
  // The exponentials run per token (profiled steps; 0 without exponentials).
  double exponentials_per_token = 0;
  bool has_roofline = false;  // roofline is set (BenchOptions::roofline)
  Roofline roofline;
  nlohmann::json to_json() const;
  std::string to_text() const;
};

BenchResult bench_training(const nlohmann::json& config, const BenchOptions& options);

// The training FLOPs per token of a resolved model config (Model::config(); products
// only, see above), as the flops_per_token of its type's registry entry
// (models/registry.hpp) computes them; the built-in ones:
//   transformer: L (72 D^2 + 6 T D) + 6 D V;   lstm: 48 L h^2 + 6 h V;
//   exprnn: 6 h^2 + 6 h V + 6 h^3 P;
//   osmformer: L (6 T n^2 + g) + 6 n^2 V + 6 n^3 P, with per layer g = 2 (12 n^3 + 6 m^2)
//              (relative grounding), 18 n^3 + 12 m^2 (combined), 18 n^3 + 6 m^2 (token),
//              12 n^3 + 6 m^2 (off);
//   osm_rnn:   12 n^3 (6 n^3 with the token drive) + 6 m^2 + 4 n^3 / k + 6 n^2 V + 6 n^3 P,
// with n the stored side and m the algebra dimension of the group, 6 m^2 only with a
// mixing matrix, k = renormalize_every, and P = exp_products_per_token: each forward
// product of an exponential is 2 n^3, its pullback two more. 0 for a type whose entry
// declares no FLOP count (a plugin registered with factories only); an unknown type is
// find_model_spec's ConfigError, a key missing from the config a ConfigError naming it.
double training_flops_per_token(const nlohmann::json& model_config, int64_t vocab, int64_t seq_len,
                                double exp_products_per_token = 0);

// Single-precision GEMM rate on n x n x n products (GFLOP/s over `repeats`, median),
// through liegrad's float gemm and through OpenBLAS (cblas_sgemm), both with `threads`
// threads: the machine's practical peak for the achieved rates above.
struct GemmBenchResult {
  int64_t n = 0;
  int repeats = 0, threads = 0;
  // liegrad's gemm as configured (LIEGRAD_GEMM, default auto: OpenBLAS per block for
  // large blocks), liegrad's own kernel alone, and OpenBLAS with its own threads.
  Spread liegrad, liegrad_own, openblas;
  std::string openblas_build;  // openblas_get_config() and its threading (pthreads / OpenMP)
  // The core OpenBLAS chose and, when it is narrower than the CPU (core/blas_core.hpp),
  // the OPENBLAS_CORETYPE that matches the CPU ("" otherwise).
  std::string openblas_core, suggested_coretype;
  nlohmann::json to_json() const;
  std::string to_text() const;
};
GemmBenchResult bench_gemm(int64_t n, int repeats, int threads);

struct ExpmBenchResult {
  int64_t n = 0, N = 0;
  double norm = 1;  // Frobenius norm of every exponent
  int repeats = 0, threads = 0;
  double mean_products = 0;  // forward products per exponential (the plans')
  Spread tape;     // matrices/s, expm tape op forward + backward (the training route)
  Spread kernels;  // matrices/s, expm_forward + expm_pullback
  Spread forward;  // matrices/s, expm_forward alone (plans included)
  Spread products;  // n x n x n products/s, batched_gemm over the same N matrices
  // The fused OSM kernels' route (kernels/osm_scan, relative_update): per matrix,
  // expm_plan of a skew exponent and expm_one_forward recording into a per-thread
  // cache; then expm_one_tangent replaying that cache. matrices/s.
  Spread fused_forward, fused_tangent;
  // The share of the forward's time its products would take at the products' rate
  // (mean_products / products ÷ 1 / forward, medians): the rest is the plan's passes,
  // the linear combinations and copies, the cache, and bookkeeping.
  double forward_product_share = 0;
  double fused_forward_product_share = 0;  // the same for fused_forward
  double tape_per_cpu_s = 0;  // matrices per second of process CPU time, tape route
  double peak_rss_mib = 0;
  nlohmann::json to_json() const;
  std::string to_text() const;
};

// threads 0 = keep the current thread count.
ExpmBenchResult bench_expm(int64_t n, int64_t N, int repeats, int threads, double norm = 1);

// Peak resident set size of this process so far, in MiB (getrusage).
double peak_rss_mib();
// CPU time (user + system, all threads) of this process so far, in seconds.
double process_cpu_seconds();

}  // namespace liegrad::measure
