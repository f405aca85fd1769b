// `liegrad bench` end to end on tiny configs: the JSON report has the fields
// bench/compare.sh reads, with sane values (positive throughput, time shares that add
// up to one), --checkpoint times the trained weights rather than a fresh initialisation,
// and bad combinations are usage errors. Speed itself is never asserted here. The runs
// skip the roofline (its 1024^3 GEMM and 128 MiB triad took most of this test's time
// under the sanitizers); tests/test_roofline.cpp checks it at small sizes.
#include <doctest/doctest.h>

#include <pthread.h>
#include <sched.h>

#include <cmath>

#include "core/errors.hpp"
#include "tests/train_test_utils.hpp"
#include "measure/bench.hpp"
#include "measure/core_bench.hpp"

using namespace liegrad;
using nlohmann::json;

TEST_CASE("bench: the JSON report of a training benchmark and of --checkpoint") {
  test::TempDir tmp("bench_cli");
  test::write_text(tmp / "text.txt", test::small_corpus());
  const json cfg = test::tiny_config(tmp / "text.txt", {{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 1}}, 150);
  const std::string cfg_path = tmp / "c.json";
  test::write_text(cfg_path, cfg.dump(2));

  const json fresh = test::json_output(test::run_liegrad({"bench", "--config", cfg_path, "--steps", "4", "--no-roofline", "--json"}, tmp.path.string()));
  CHECK(fresh["model"] == "osmformer");
  CHECK(fresh["batch"] == 4);
  CHECK(fresh["seq_len"] == 16);
  CHECK(fresh["tokens_per_s"]["median"].get<double>() > 0);
  CHECK(fresh["tokens_per_s"]["min"].get<double>() <= fresh["tokens_per_s"]["median"].get<double>());
  CHECK(fresh["peak_rss_mib"].get<double>() > 0);
  double total = 0;
  for (const auto& [family, share] : fresh["time_share"].items()) {
    CHECK(share.get<double>() >= 0);
    total += share.get<double>();
  }
  CHECK(total == doctest::Approx(1.0).epsilon(0.02));
  // The FLOP count includes the exponentials actually run: SO(4) exponents at init take
  // Taylor degrees up to 12 without squaring (1 to 4 forward products each), and the
  // count is the closed form of measure/bench.hpp with those products.
  const double products = fresh["exp_mean_products"].get<double>();
  CHECK(products >= 1.0);
  CHECK(products <= 4.0);
  const double per_token = fresh["exp_products_per_token"].get<double>();
  CHECK(per_token >= 2 * products * 0.99);  // two updates (attention, grounding) per token, plus the embedding's
  const json model_cfg = json::parse(test::read_text(tmp / "c.json"))["model"];
  json resolved = model_cfg;
  resolved["grounding"] = "on";
  resolved["mixing"] = model_cfg.value("mixing", "linear");
  CHECK(fresh["flops_per_token"].get<double>() ==
        doctest::Approx(measure::training_flops_per_token(resolved, fresh["vocab"].get<int64_t>(), 16, per_token)).epsilon(1e-9));
  CHECK(fresh["gflop_per_s"].get<double>() > 0);

  // Untrained: about ln(V) on uniform synthetic tokens.
  const double V = fresh["vocab"].get<double>();
  CHECK(std::abs(fresh["first_loss"].get<double>() - std::log(V)) < 0.5);

  // The same model after 150 steps on the corpus: bench --checkpoint must start from those
  // weights (its first loss differs from the fresh model's) and report the same size.
  const auto trained = test::run_liegrad({"train", "--config", cfg_path, "--out", tmp / "run", "--quiet"}, tmp.path.string());
  REQUIRE(trained.exit_code == 0);
  const json from_ckpt = test::json_output(
      test::run_liegrad({"bench", "--checkpoint", tmp / "run/last.json", "--steps", "2", "--no-profile", "--no-roofline", "--json"}, tmp.path.string()));
  CHECK(from_ckpt["parameters"] == fresh["parameters"]);
  CHECK(std::abs(from_ckpt["first_loss"].get<double>() - fresh["first_loss"].get<double>()) > 0.05);
  // Deterministic: the same checkpoint gives the same first loss.
  const json again = test::json_output(
      test::run_liegrad({"bench", "--checkpoint", tmp / "run/last.json", "--steps", "1", "--no-profile", "--no-roofline", "--json"}, tmp.path.string()));
  CHECK(again["first_loss"].get<double>() == from_ckpt["first_loss"].get<double>());
}

TEST_CASE("bench: the FLOP model's closed forms") {
  // SO(4): n = 4, m = 6; V = 10, T = 8. One layer, grounding on, linear mixing:
  //   L (6 T n^2 + 2 (12 n^3 + 6 m^2)) + 6 n^2 V + 6 n^3 P.
  const json osmf = {{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 1}, {"mixing", "linear"}, {"grounding", "on"}};
  CHECK(measure::training_flops_per_token(osmf, 10, 8, 0.0) == doctest::Approx(6 * 8 * 16 + 2 * (12 * 64 + 6 * 36) + 6 * 16 * 10));
  CHECK(measure::training_flops_per_token(osmf, 10, 8, 5.0) - measure::training_flops_per_token(osmf, 10, 8, 0.0) ==
        doctest::Approx(6 * 64 * 5.0));
  // Identity mixing and no grounding drop the mixing and one update.
  const json plain = {{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 1}, {"mixing", "identity"}, {"grounding", "off"}};
  CHECK(measure::training_flops_per_token(plain, 10, 8, 0.0) == doctest::Approx(6 * 8 * 16 + 12 * 64 + 6 * 16 * 10));
  // OSM-RNN, relative drive, renormalising every 16 steps; U(2) is stored as 4 x 4 with m = 4.
  const json rnn = {{"type", "osm_rnn"}, {"group", "U(2)"}, {"mixing", "linear"}, {"rnn_drive", "relative"}, {"renormalize_every", 16}};
  CHECK(measure::training_flops_per_token(rnn, 10, 8, 0.0) == doctest::Approx(12 * 64 + 6 * 16 + 4 * 64 / 16.0 + 6 * 16 * 10));
  const json tr = {{"type", "transformer"}, {"D", 8}, {"layers", 2}};
  CHECK(measure::training_flops_per_token(tr, 10, 8) == doctest::Approx(2 * (72 * 64 + 6 * 8 * 8) + 6 * 8 * 10));
  // An unknown type is the registry's one-line error (tests/test_registry.cpp), and the
  // count reads the resolved config: a missing key is named, not defaulted.
  CHECK_THROWS_WITH_AS(measure::training_flops_per_token(json{{"type", "unknown"}}, 10, 8),
                       doctest::Contains("unknown model type 'unknown'"), ConfigError);
  CHECK_THROWS_WITH_AS(measure::training_flops_per_token(json{{"type", "transformer"}, {"layers", 2}}, 10, 8),
                       doctest::Contains("model.D"), ConfigError);
}

TEST_CASE("bench: bad arguments are usage errors naming the option or file") {
  test::TempDir tmp("bench_bad");
  test::write_text(tmp / "text.txt", test::small_corpus());
  const std::string cfg_path = tmp / "c.json";
  test::write_text(cfg_path, test::tiny_config(tmp / "text.txt", {{"type", "lstm"}, {"hidden", 8}}, 2).dump());
  auto p = test::run_liegrad({"bench", "--config", cfg_path, "--checkpoint", cfg_path}, tmp.path.string());
  CHECK(p.exit_code == 2);
  CHECK(p.err.find("--checkpoint") != std::string::npos);
  p = test::run_liegrad({"bench"}, tmp.path.string());
  CHECK(p.exit_code == 2);
  p = test::run_liegrad({"bench", "--checkpoint", tmp / "missing.json"}, tmp.path.string());
  CHECK(p.exit_code == 1);
  CHECK(p.err.find("missing.json") != std::string::npos);
  p = test::run_liegrad({"bench", "--op", "fft"}, tmp.path.string());
  CHECK(p.exit_code == 2);
  CHECK(p.err.find("fft") != std::string::npos);
  for (const std::string bad : {"-1", "0", "inf"}) {
    p = test::run_liegrad({"bench", "--op", "expm", "--norm", bad, "--n", "4", "--repeats", "1"}, tmp.path.string());
    CHECK(p.exit_code == 1);
    CHECK(p.err.find("--norm must be a positive finite number") != std::string::npos);
  }
  p = test::run_liegrad({"bench", "--op", "expm", "--norm", "large"}, tmp.path.string());
  CHECK(p.exit_code == 2);
  CHECK(p.err.find("--norm") != std::string::npos);
}

TEST_CASE("bench --op expm --norm: larger exponents take plans with more products, as reported") {
  // d = 16 skew matrices of Frobenius norm 1 sit below theta_8 in 2-norm (3 products);
  // at norm 8 their 2-norms (about 3.5) need 15+ with one squaring or T_18 (5 products).
  test::TempDir tmp("bench_expm_norm");
  auto products = [&](const std::string& norm) {
    const auto p = test::run_liegrad(
        {"bench", "--op", "expm", "--norm", norm, "--n", "16", "--repeats", "1", "--threads", "1", "--json"},
        tmp.path.string());
    INFO("exit " << p.exit_code << "\nstderr: " << p.err);
    REQUIRE(p.exit_code == 0);
    const json r = json::parse(p.out.substr(p.out.find('{')));
    CHECK(r["norm"].get<double>() == doctest::Approx(std::stod(norm)));
    // The forward alone and the products alone, and the share derived from them.
    const double forward = r["forward_matrices_per_s"]["median"].get<double>();
    const double per_s = r["products_per_s"]["median"].get<double>();
    CHECK(forward > 0);
    CHECK(per_s > 0);
    CHECK(r["forward_product_share"].get<double>() ==
          doctest::Approx(r["mean_products"].get<double>() * forward / per_s));
    // The fused OSM route: its forward, its tangent (recomputing the products) and its share.
    const double fused = r["fused_forward_matrices_per_s"]["median"].get<double>();
    CHECK(fused > 0);
    CHECK(r["fused_tangent_matrices_per_s"]["median"].get<double>() > 0);
    CHECK(r["fused_forward_product_share"].get<double>() ==
          doctest::Approx(r["mean_products"].get<double>() * fused / per_s));
    return r["mean_products"].get<double>();
  };
  CHECK(products("1") == doctest::Approx(3.0));
  CHECK(products("8") == doctest::Approx(5.0));
}

TEST_CASE("bench --op cores: one rate per CPU of the affinity mask, and the slowest over the fastest") {
  test::TempDir tmp("bench_cores");
  const auto p = test::run_liegrad({"bench", "--op", "cores", "--d", "8", "--repeats", "2", "--json"}, tmp.path.string());
  INFO("exit " << p.exit_code << "\nstderr: " << p.err);
  REQUIRE(p.exit_code == 0);
  const json r = json::parse(p.out.substr(p.out.find('{')));
  cpu_set_t mask;
  CPU_ZERO(&mask);
  REQUIRE(sched_getaffinity(0, sizeof mask, &mask) == 0);
  REQUIRE(r["cpus"].size() == static_cast<size_t>(CPU_COUNT(&mask)));  // the child inherits this mask
  double slow = INFINITY, fast = 0;
  for (const json& c : r["cpus"]) {
    CHECK(CPU_ISSET(c["cpu"].get<int>(), &mask));
    const double median = c["products_per_s"]["median"].get<double>();
    CHECK(c["products_per_s"]["min"].get<double>() > 0);
    CHECK(c["products_per_s"]["min"].get<double>() <= median);
    CHECK(median <= c["products_per_s"]["max"].get<double>());
    slow = std::min(slow, median);
    fast = std::max(fast, median);
  }
  CHECK(r["slowest_over_fastest"].get<double>() == doctest::Approx(slow / fast));

  // In process, from a thread allowed only its first CPU: that CPU alone is timed.
  cpu_set_t one;
  CPU_ZERO(&one);
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;
  CPU_SET(first, &one);
  REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0);
  const measure::CoreBenchResult single = measure::bench_cores(4, 1);
  REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof mask, &mask) == 0);
  REQUIRE(single.cpus.size() == 1);
  CHECK(single.cpus[0].cpu == first);
  CHECK(single.slowest_over_fastest == 1.0);

  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--d", "0"}, {"--d", "65"}, {"--repeats", "0"}}) {
    std::vector<std::string> args = {"bench", "--op", "cores"};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto q = test::run_liegrad(args, tmp.path.string());
    CHECK(q.exit_code == 1);
    CHECK(q.err.find("--d must be in 1..64 and --repeats >= 1") != std::string::npos);
  }
  CHECK_THROWS_AS(measure::bench_cores(16, 0), ValueError);
}
