// `liegrad bench` end to end on tiny configs: the JSON report has the fields
// bench/compare.sh reads, with sane values (positive throughput, time shares that add
// up to one), --checkpoint times the trained weights rather than a fresh initialisation,
// and bad combinations are usage errors. Speed itself is never asserted here.
#include <doctest/doctest.h>

#include <cmath>

#include "tests/train_test_utils.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {

json bench_json(const test::Proc& p) {
  INFO("exit " << p.exit_code << "\nstderr: " << p.err << "\nstdout: " << p.out);
  REQUIRE(p.exit_code == 0);
  return json::parse(p.out);
}

}  // namespace

TEST_CASE("bench: the JSON report of a training benchmark and of --checkpoint") {
  test::TempDir tmp("bench_cli");
  test::write_text(tmp / "text.txt", test::small_corpus());
  const json cfg = test::tiny_config(tmp / "text.txt", {{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 1}}, 150);
  const std::string cfg_path = tmp / "c.json";
  test::write_text(cfg_path, cfg.dump(2));

  const json fresh = bench_json(test::run_liegrad({"bench", "--config", cfg_path, "--steps", "4", "--json"}, tmp.path.string()));
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
  // Untrained: about ln(V) on uniform synthetic tokens.
  const double V = fresh["vocab"].get<double>();
  CHECK(std::abs(fresh["first_loss"].get<double>() - std::log(V)) < 0.5);

  // The same model after 150 steps on the corpus: bench --checkpoint must start from those
  // weights (its first loss differs from the fresh model's) and report the same size.
  const auto trained = test::run_liegrad({"train", "--config", cfg_path, "--out", tmp / "run", "--quiet"}, tmp.path.string());
  REQUIRE(trained.exit_code == 0);
  const json from_ckpt = bench_json(
      test::run_liegrad({"bench", "--checkpoint", tmp / "run/last.json", "--steps", "2", "--no-profile", "--json"}, tmp.path.string()));
  CHECK(from_ckpt["parameters"] == fresh["parameters"]);
  CHECK(std::abs(from_ckpt["first_loss"].get<double>() - fresh["first_loss"].get<double>()) > 0.05);
  // Deterministic: the same checkpoint gives the same first loss.
  const json again = bench_json(
      test::run_liegrad({"bench", "--checkpoint", tmp / "run/last.json", "--steps", "1", "--no-profile", "--json"}, tmp.path.string()));
  CHECK(again["first_loss"].get<double>() == from_ckpt["first_loss"].get<double>());
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
}
