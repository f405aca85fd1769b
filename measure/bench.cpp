// The training, exponential and GEMM benchmarks (see bench.hpp): the library half of
// `liegrad bench`, whose command line is apps/cmd_bench.cpp; bench/ sets it beside PyTorch.
#include "measure/bench.hpp"

#include <cblas.h>
#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "autograd/ops.hpp"
#include "core/blas_core.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"
#include "core/profile.hpp"
#include "core/rng.hpp"
#include "data/datasets.hpp"
#include "tasks/registry.hpp"
#include "groups/expm.hpp"
#include "groups/expm_kernel.hpp"
#include "models/model.hpp"
#include "models/registry.hpp"
#include "measure/spread.hpp"
#include "train/checkpoint.hpp"
#include "measure/stream_bench.hpp"
#include "optim/optimizer.hpp"
#include "train/run_config.hpp"
#include "train/train_step.hpp"

namespace liegrad::measure {

// The trainer's configuration, checkpoints and step, which the benchmark times.
using train::parameters_from_json;
using train::parse_run_config;
using train::read_checkpoint;
using train::RunConfig;
using train::train_step;
using train::TrainConfig;

namespace {

using namespace bench_detail;

// State tensors per parameter of the configured optimizer, for its traffic (models/roofline.hpp).
int optimizer_states(const TrainConfig& t) {
  if (t.optimizer != "sgd") return 2;  // adam, adamw: m and v
  const auto& o = t.optimizer_options;
  return o.is_object() && o.contains("momentum") && o.at("momentum").is_number() && o.at("momentum").get<double>() != 0
             ? 1
             : 0;
}

}  // namespace

double peak_rss_mib() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

double process_cpu_seconds() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

BenchResult bench_training(const nlohmann::json& config, const BenchOptions& opt) {
  if (opt.steps < 1 || opt.warmup < 0)
    throw ValueError("bench: steps must be >= 1 and warmup >= 0, got steps=" + std::to_string(opt.steps) +
                     ", warmup=" + std::to_string(opt.warmup));
  const RunConfig rc = parse_run_config(config);
  const TrainConfig& t = rc.train;
  const int threads = opt.threads > 0 ? opt.threads : t.threads;
  set_num_threads(threads);
  // The task sizes the model and its windows (the longest training sequence); a
  // classification task's classes are at least V, so the synthetic targets below stay in
  // range. Known corpora are sized without reading their data.
  const auto task = tasks::make_task({rc.data.section, opt.data_dir, /*vocab_record=*/nullptr, /*source=*/""});
  const int64_t V = task->input_vocab();
  const int64_t C = task->classes();
  auto model = models::make_model<float>(rc.model, V, t.seed, C);
  if (!opt.checkpoint.empty()) {
    const nlohmann::json ckpt = read_checkpoint(opt.checkpoint);
    parameters_from_json(*model, ckpt.at("parameters"), "checkpoint '" + opt.checkpoint + "'");
  }
  auto optimizer = optim::make_optimizer<float>(t.optimizer, model->parameters(), t.optimizer_options);
  models::RecurrentState<float> state;
  const bool recurrent = model->recurrent();
  const int64_t B = t.batch, T_ = task->window(rc.task_settings());
  Rng rng(t.seed + 7);
  std::vector<int32_t> stream(static_cast<size_t>(B * (T_ + 1)));

  double first_loss = 0;
  bool have_first_loss = false;
  auto one_step = [&] {
    for (auto& x : stream) x = static_cast<int32_t>(rng.uniform() * static_cast<double>(V)) % static_cast<int32_t>(V);
    data::Batch batch;
    batch.B = B;
    batch.T = T_;
    batch.inputs.resize(static_cast<size_t>(B * T_));
    batch.targets.resize(static_cast<size_t>(B * T_));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < T_; ++i) {
        batch.inputs[static_cast<size_t>(b * T_ + i)] = stream[static_cast<size_t>(b * (T_ + 1) + i)];
        batch.targets[static_cast<size_t>(b * T_ + i)] = stream[static_cast<size_t>(b * (T_ + 1) + i + 1)];
      }
    const double loss = train_step(*model, *optimizer, batch, recurrent ? &state : nullptr, t.lr, t.clip).loss;
    if (!have_first_loss) {
      first_loss = loss;
      have_first_loss = true;
    }
  };

  for (int i = 0; i < opt.warmup; ++i) one_step();
  std::vector<double> secs, tps;
  const double cpu0 = process_cpu_seconds();
  for (int i = 0; i < opt.steps; ++i) {
    const auto t0 = Clock::now();
    one_step();
    secs.push_back(since(t0));
    tps.push_back(static_cast<double>(B * T_) / secs.back());
  }
  const double cpu = process_cpu_seconds() - cpu0;
  // The time shares come from separate steps, so the timers never touch the throughput.
  // They also count the exponentials' products for the FLOP model (one step suffices
  // when the shares are not wanted).
  double profiled = 0;
  const int counted_steps = opt.profile ? std::max(2, opt.steps / 4) : 1;
  prof::reset();
  prof::set_enabled(true);
  const auto t_prof = Clock::now();
  for (int i = 0; i < counted_steps; ++i) one_step();
  profiled = since(t_prof);
  prof::set_enabled(false);
  const auto counted = prof::counts();
  const double exp_products_per_token =
      static_cast<double>(counted[static_cast<size_t>(prof::Counter::ExpForwardProducts)]) /
      static_cast<double>(counted_steps * B * T_);

  BenchResult r;
  r.model = model->type();
  r.parameters = model->parameter_count();
  r.vocab = V;
  r.batch = B;
  r.seq_len = T_;
  r.threads = threads;
  r.steps = opt.steps;
  r.warmup = opt.warmup;
  r.tokens_per_s = spread(tps);
  r.step_seconds_median = spread(secs).median;
  r.tokens_per_cpu_s = static_cast<double>(B * T_ * opt.steps) / std::max(cpu, 1e-9);
  if (opt.profile) {
    const auto tot = prof::totals();
    double used = 0;
    for (int f = 0; f < prof::kFamilies; ++f) {
      r.breakdown.emplace_back(prof::family_name(static_cast<prof::Family>(f)), tot[static_cast<size_t>(f)] / profiled);
      used += tot[static_cast<size_t>(f)];
    }
    r.breakdown.emplace_back("other", std::max(0.0, 1.0 - used / profiled));
  }
  r.exp_products_per_token = exp_products_per_token;
  const auto exps = counted[static_cast<size_t>(prof::Counter::Exponentials)];
  r.exp_mean_products = exps > 0 ? static_cast<double>(counted[static_cast<size_t>(prof::Counter::ExpForwardProducts)]) /
                                       static_cast<double>(exps)
                                 : 0.0;
  r.flops_per_token = training_flops_per_token(model->config(), V, T_, exp_products_per_token);
  r.gflop_per_s = r.flops_per_token * static_cast<double>(B * T_) / std::max(r.step_seconds_median, 1e-12) * 1e-9;
  r.peak_rss_mib = peak_rss_mib();
  r.first_loss = first_loss;
  r.exponentials_per_token = static_cast<double>(exps) / static_cast<double>(counted_steps * B * T_);
  if (opt.roofline) {
    models::CostInputs in;
    in.vocab = V;
    in.seq_len = T_;
    in.batch = B;
    in.exp_products_per_token = exp_products_per_token;
    in.exponentials_per_token = r.exponentials_per_token;
    in.parameters = r.parameters;
    in.optimizer_states = optimizer_states(t);
    const models::StepCosts costs = models::step_costs(model->config(), in);
    // After the peak memory above, so the measurements' arrays do not count in it.
    const GemmBenchResult gemm = bench_gemm(opt.peak_n, opt.roof_repeats, threads);
    const StreamBenchResult triad = bench_stream(opt.stream_mib, opt.roof_repeats, threads);
    const double peak = std::max({gemm.liegrad.median, gemm.liegrad_own.median, gemm.openblas.median});
    r.roofline = make_roofline(costs, r.breakdown, r.step_seconds_median, static_cast<double>(B * T_), peak,
                               triad.gb_per_s.median);
    r.roofline.gemm_n = opt.peak_n;
    r.roofline.stream_mib = opt.stream_mib;
    r.has_roofline = true;
  }
  return r;
}

double training_flops_per_token(const nlohmann::json& m, int64_t V, int64_t T_, double exp_products_per_token) {
  const models::ModelSpec& spec = models::model_spec_of(m);
  return spec.info.flops_per_token ? spec.info.flops_per_token(m, V, T_, exp_products_per_token) : 0.0;
}

nlohmann::json BenchResult::to_json() const {
  nlohmann::json share = nlohmann::json::object();
  for (const auto& [k, v] : breakdown) share[k] = v;
  return {{"model", model},
          {"parameters", parameters},
          {"vocab", vocab},
          {"batch", batch},
          {"seq_len", seq_len},
          {"threads", threads},
          {"steps", steps},
          {"warmup", warmup},
          {"tokens_per_s", spread_json(tokens_per_s)},
          {"step_seconds_median", step_seconds_median},
          {"tokens_per_cpu_s", tokens_per_cpu_s},
          {"time_share", share},
          {"flops_per_token", flops_per_token > 0 ? nlohmann::json(flops_per_token) : nlohmann::json()},
          {"gflop_per_s", gflop_per_s > 0 ? nlohmann::json(gflop_per_s) : nlohmann::json()},
          {"exp_products_per_token", exp_products_per_token},
          {"exp_mean_products", exp_mean_products},
          {"exponentials_per_token", exponentials_per_token},
          {"first_loss", first_loss},
          {"peak_rss_mib", peak_rss_mib},
          {"roofline", has_roofline ? roofline.to_json() : nlohmann::json()}};
}

std::string BenchResult::to_text() const {
  char buf[256];
  std::string s;
  std::snprintf(buf, sizeof buf, "%s: %lld parameters, batch %lld x %lld, %d threads, %d timed steps (%d warm-up)\n",
                model.c_str(), static_cast<long long>(parameters), static_cast<long long>(batch),
                static_cast<long long>(seq_len), threads, steps, warmup);
  s += buf;
  s += "tokens/s: " + spread_text(tokens_per_s, "", 0);
  std::snprintf(buf, sizeof buf, "; %.1f ms per step; %.0f tokens per CPU second\n", 1e3 * step_seconds_median,
                tokens_per_cpu_s);
  s += buf;
  if (!breakdown.empty()) {
    s += "time share:";
    for (const auto& [k, v] : breakdown) {
      std::snprintf(buf, sizeof buf, " %s %.1f%%", k.c_str(), 100 * v);
      s += buf;
    }
    s += "\n";
  }
  if (flops_per_token > 0) {
    std::snprintf(buf, sizeof buf, "matrix products: %.0f FLOP per token, %.1f GFLOP/s\n", flops_per_token, gflop_per_s);
    s += buf;
    if (exp_mean_products > 0) {
      std::snprintf(buf, sizeof buf, "exponentials: %.2f forward products each (degree + squarings), %.2f per token\n",
                    exp_mean_products, exp_products_per_token);
      s += buf;
    }
  } else {
    s += "matrix products: no FLOP count (the registry entry of " + model + " declares none)\n";
  }
  std::snprintf(buf, sizeof buf, "peak resident memory: %.1f MiB\n", peak_rss_mib);
  s += buf;
  if (has_roofline) s += roofline.to_text();
  return s;
}

ExpmBenchResult bench_expm(int64_t n, int64_t N, int repeats, int threads, double norm) {
  if (n < 1 || N < 1 || repeats < 1)
    throw ValueError("bench --op expm: d, n and repeats must be >= 1");
  if (!(norm > 0) || !std::isfinite(norm))
    throw ValueError("bench --op expm: --norm must be a positive finite number, got " + std::to_string(norm));
  if (threads > 0) set_num_threads(threads);
  Rng rng(2024);
  Array<float> A(Shape{N, n, n}), G(Shape{N, n, n});
  for (int64_t b = 0; b < N; ++b) {
    float* a = A.data() + b * n * n;
    float* g = G.data() + b * n * n;
    double na = 0, ng = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double x = i < j ? rng.normal() : 0.0;
        a[i * n + j] += static_cast<float>(x);
        a[j * n + i] -= static_cast<float>(x);
        g[i * n + j] = static_cast<float>(rng.normal());
      }
    for (int64_t k = 0; k < n * n; ++k) {
      na += double(a[k]) * a[k];
      ng += double(g[k]) * g[k];
    }
    for (int64_t k = 0; k < n * n; ++k) {
      a[k] = static_cast<float>(norm * a[k] / std::sqrt(std::max(na, 1e-30)));
      g[k] = static_cast<float>(g[k] / std::sqrt(std::max(ng, 1e-30)));
    }
  }
  Array<float> Q(A.shape()), dA(A.shape());
  auto tape_route = [&] {
    ag::Varf x = ag::Varf::parameter(A);
    ag::Tape<float>::current().backward(groups::expm(x), G);
  };
  auto kernel_route = [&] {
    groups::expm_forward(N, n, A.data(), Q.data());
    groups::expm_pullback(N, n, A.data(), G.data(), dA.data());
  };
  auto forward_route = [&] { groups::expm_forward(N, n, A.data(), Q.data()); };
  // N products Q_b = A_b A_b, as expm_forward spreads its matrices over the threads.
  auto product_route = [&] {
    batched_gemm<float>(N, false, false, n, n, n, 1.0f, A.data(), n * n, A.data(), n * n, 0.0f, Q.data(), n * n);
  };
  // The OSM kernels' route: each matrix planned and exponentiated on its own without a
  // cache of its products (expm_one_forward_planned), then the tangent program
  // recomputing them (expm_one_tangent with a null cache), as kernels/relative_update.cpp
  // runs them per token (kernels/osm_scan.cpp's backward also forms E there, one product
  // more: expm_one_tangent_with_value).
  const int64_t n2 = n * n;
  const int route_threads = num_threads();
  std::vector<groups::ExpmPlan> plans(static_cast<size_t>(N));
  Array<float> M(A.shape());
  auto fused_forward_route = [&] {
#pragma omp parallel num_threads(route_threads)
    {
      std::vector<float> scratch(static_cast<size_t>(groups::expm_forward_scratch(n)));
#pragma omp for schedule(static)
      for (int64_t b = 0; b < N; ++b)
        plans[static_cast<size_t>(b)] = groups::expm_one_forward_planned(
            n, A.data() + b * n2, Q.data() + b * n2, scratch.data(), groups::ExponentKind::Skew);
    }
  };
  auto fused_tangent_route = [&] {
#pragma omp parallel num_threads(route_threads)
    {
      std::vector<float> scratch(static_cast<size_t>(groups::expm_pullback_scratch(n)));
#pragma omp for schedule(static)
      for (int64_t b = 0; b < N; ++b)
        groups::expm_one_tangent(n, A.data() + b * n2, plans[static_cast<size_t>(b)], G.data() + b * n2,
                                 M.data() + b * n2, scratch.data(), static_cast<const float*>(nullptr));
    }
  };
  ExpmBenchResult r;
  r.n = n;
  r.N = N;
  r.norm = norm;
  r.repeats = repeats;
  {
    std::vector<float> scratch(static_cast<size_t>(groups::expm_forward_scratch(n)));
    int64_t products = 0;
    for (int64_t b = 0; b < N; ++b) products += groups::expm_plan(n, A.data() + b * n * n, scratch.data()).products();
    r.mean_products = static_cast<double>(products) / static_cast<double>(N);
  }
  r.threads = num_threads();
  const double cpu0 = process_cpu_seconds();
  r.tape = rates(repeats, static_cast<double>(N), tape_route);
  r.tape_per_cpu_s = static_cast<double>(N) * (repeats + 1) / std::max(process_cpu_seconds() - cpu0, 1e-9);
  r.kernels = rates(repeats, static_cast<double>(N), kernel_route);
  r.forward = rates(repeats, static_cast<double>(N), forward_route);
  r.products = rates(repeats, static_cast<double>(N), product_route);
  r.fused_forward = rates(repeats, static_cast<double>(N), fused_forward_route);
  fused_forward_route();  // the plans the tangent route takes
  r.fused_tangent = rates(repeats, static_cast<double>(N), fused_tangent_route);
  if (r.forward.median > 0 && r.products.median > 0)
    r.forward_product_share = r.mean_products / r.products.median * r.forward.median;
  if (r.fused_forward.median > 0 && r.products.median > 0)
    r.fused_forward_product_share = r.mean_products / r.products.median * r.fused_forward.median;
  r.peak_rss_mib = peak_rss_mib();
  return r;
}

nlohmann::json ExpmBenchResult::to_json() const {
  return {{"op", "expm"},          {"d", n},
          {"n", N},                {"norm", norm},
          {"mean_products", mean_products}, {"repeats", repeats},
          {"threads", threads},    {"matrices_per_s", spread_json(tape)},
          {"kernels_matrices_per_s", spread_json(kernels)},
          {"forward_matrices_per_s", spread_json(forward)},
          {"products_per_s", spread_json(products)},
          {"forward_product_share", forward_product_share},
          {"fused_forward_matrices_per_s", spread_json(fused_forward)},
          {"fused_tangent_matrices_per_s", spread_json(fused_tangent)},
          {"fused_forward_product_share", fused_forward_product_share},
          {"matrices_per_cpu_s", tape_per_cpu_s}, {"peak_rss_mib", peak_rss_mib}};
}

std::string ExpmBenchResult::to_text() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "expm + pullback, d = %lld, N = %lld, Frobenius norm %g (%.2f forward products each), %d threads, "
                "%d repeats\n",
                static_cast<long long>(n), static_cast<long long>(N), norm, mean_products, threads, repeats);
  std::string text = buf;
  std::snprintf(buf, sizeof buf, "; %.0f per CPU second\n", tape_per_cpu_s);
  text += "tape op (training route): " + spread_text(tape, " matrices/s", 0) + buf;
  text += "bare kernels:             " + spread_text(kernels, " matrices/s", 0) + "\n";
  text += "forward alone:            " + spread_text(forward, " matrices/s", 0) + "\n";
  text += "products alone:           " + spread_text(products, " products/s", 0) + "\n";
  std::snprintf(buf, sizeof buf,
                "the forward's %.2f products take %.0f%% of its time at that rate (the rest: the plan's norms, "
                "the linear combinations and copies, the cache)\n",
                mean_products, 100.0 * forward_product_share);
  text += buf;
  text += "fused forward (OSM route): " + spread_text(fused_forward, " matrices/s", 0) + "\n";
  text += "fused tangent (recomputed):" + spread_text(fused_tangent, " matrices/s", 0) + "\n";
  std::snprintf(buf, sizeof buf, "the fused forward's products take %.0f%% of its time\n",
                100.0 * fused_forward_product_share);
  text += buf;
  std::snprintf(buf, sizeof buf, "peak resident memory: %.1f MiB\n", peak_rss_mib);
  return text + buf;
}

GemmBenchResult bench_gemm(int64_t n, int repeats, int threads) {
  if (n < 1 || repeats < 1) throw ValueError("bench --op gemm: n and repeats must be >= 1");
  if (threads > 0) set_num_threads(threads);
  Rng rng(7);
  const Array<float> A = rng.normal_array<float>(Shape{n, n}), B = rng.normal_array<float>(Shape{n, n});
  Array<float> C(Shape{n, n});
  const double gflop = 2e-9 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  auto rate = [&](auto&& f) { return rates(repeats, gflop, f); };
  GemmBenchResult r;
  r.n = n;
  r.repeats = repeats;
  r.threads = num_threads();
  const GemmBackend saved = gemm_backend();
  r.liegrad = rate([&] { gemm<float>(false, false, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n); });
  set_gemm_backend(GemmBackend::Own);
  r.liegrad_own = rate([&] { gemm<float>(false, false, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n); });
  set_gemm_backend(saved);
  const int parallel = openblas_get_parallel();
  r.openblas_build = std::string(openblas_get_config()) +
                     (parallel == 2 ? " (OpenMP)" : parallel == 1 ? " (pthreads)" : " (sequential)");
  r.openblas_core = openblas_core().name;
  r.suggested_coretype = openblas_core().suggested_coretype();
  openblas_set_num_threads(r.threads);  // OpenBLAS's own threads, for this comparison only
  r.openblas = rate([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n), static_cast<int>(n),
                1.0f, A.data(), static_cast<int>(n), B.data(), static_cast<int>(n), 0.0f, C.data(), static_cast<int>(n));
  });
  set_num_threads(r.threads);  // back to single-threaded BLAS
  return r;
}

nlohmann::json GemmBenchResult::to_json() const {
  return {{"op", "gemm"},
          {"n", n},
          {"repeats", repeats},
          {"threads", threads},
          {"liegrad_gflop_per_s", spread_json(liegrad)},
          {"liegrad_own_gflop_per_s", spread_json(liegrad_own)},
          {"openblas_gflop_per_s", spread_json(openblas)},
          {"openblas_build", openblas_build},
          {"openblas_core", openblas_core},
          {"suggested_coretype", suggested_coretype}};
}
std::string GemmBenchResult::to_text() const {
  char buf[384];
  std::snprintf(buf, sizeof buf, "float GEMM %lld x %lld x %lld, %d threads, %d repeats; %s\n", static_cast<long long>(n),
                static_cast<long long>(n), static_cast<long long>(n), threads, repeats, openblas_build.c_str());
  std::string text = buf;
  text += "liegrad gemm:        " + spread_text(liegrad, " GFLOP/s", 1) + "\n";
  text += "liegrad own kernel:  " + spread_text(liegrad_own, " GFLOP/s", 1) + "\n";
  text += "OpenBLAS sgemm:      " + spread_text(openblas, " GFLOP/s", 1) + "\n";
  if (!suggested_coretype.empty())
    text += "OpenBLAS runs its " + openblas_core +
            " kernels, narrower than this CPU's (it does not know the CPU): liegrad's gemm uses its own kernel; "
            "OPENBLAS_CORETYPE=" + suggested_coretype + " gives OpenBLAS the CPU's width\n";
  return text;
}

}  // namespace liegrad::measure
