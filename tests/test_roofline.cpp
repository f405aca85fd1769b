// The roofline of `liegrad bench`: the per-family FLOP and byte formulas of the models'
// cost files (models/<model>_cost.cpp) against counts worked out by hand on tiny
// models, the bounds of measure/roofline_table.cpp on hand-made numbers, and the bench's JSON
// (`roofline` fields, `--op stream`) on a tiny config. No time is asserted: only
// structure, and that the fractions are positive and finite.
#include <doctest/doctest.h>

#include <cmath>

#include "core/errors.hpp"
#include "models/roofline.hpp"
#include "tests/train_test_utils.hpp"
#include "measure/bench.hpp"
#include "measure/roofline_table.hpp"

using namespace liegrad;
using nlohmann::json;
using prof::Family;

namespace {

// SO(4): n = 4, s = n^2 = 16 floats per state, n^3 = 64, m = 6. V = 10, T = 8, B = 2
// (16 tokens per step), P = 5 forward products and X = 2 exponentials per token, 100
// parameters under Adam (2 states).
models::CostInputs tiny_inputs() {
  models::CostInputs in;
  in.vocab = 10;
  in.seq_len = 8;
  in.batch = 2;
  in.exp_products_per_token = 5;
  in.exponentials_per_token = 2;
  in.parameters = 100;
  in.optimizer_states = 2;
  return in;
}

}  // namespace

TEST_CASE("roofline: per-family FLOPs and bytes of a one-layer OSMFormer, by hand") {
  const json osmf = {{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 1},      {"heads", 2},
                     {"mixing", "linear"},  {"grounding", "on"}, {"group_param", "algebra"}};
  const models::StepCosts c = models::step_costs(osmf, tiny_inputs());
  // Attention: 6 T s = 6*8*16 = 768 FLOPs; 5 s + (h + 2) T = 80 + 4*8 = 112 floats = 448 bytes.
  CHECK(c[Family::Attention].flops == doctest::Approx(768));
  CHECK(c[Family::Attention].bytes == doctest::Approx(448));
  // Small products: two relative updates (attention, grounding), each 12 n^3 = 768 FLOPs
  // and (3k + 6) s = 9*16 = 144 floats: 1536 FLOPs, 288 floats = 1152 bytes.
  CHECK(c[Family::SmallProducts].flops == doctest::Approx(1536));
  CHECK(c[Family::SmallProducts].bytes == doctest::Approx(1152));
  // Tangent: two mixings of 6 m^2 = 216: 432 FLOPs; per update r and u, 2*2*6 = 24 floats,
  // plus Gamma's 3 m^2 / 16 tokens = 6.75: 2 * 30.75 = 61.5 floats = 246 bytes.
  CHECK(c[Family::Tangent].flops == doctest::Approx(432));
  CHECK(c[Family::Tangent].bytes == doctest::Approx(246));
  // Exponentials, in the relative update (the products formed again in the backward):
  // forward 2 n^3 P = 640 FLOPs, X s = 2*16 = 32 floats = 128 bytes (E); pullback
  // 4 n^3 P = 1280 FLOPs, no bytes.
  CHECK(c[Family::ExpForward].flops == doctest::Approx(640));
  CHECK(c[Family::ExpForward].bytes == doctest::Approx(128));
  CHECK(c[Family::ExpPullback].flops == doctest::Approx(1280));
  CHECK(c[Family::ExpPullback].bytes == 0);
  CHECK(c[Family::ExpPullback].derived);
  // Readout: 6 s V = 960 FLOPs; 3 s + 2 V = 68 floats plus the prototypes and bias,
  // 3 (V s + V) / 16 = 31.875: 99.875 floats = 399.5 bytes.
  CHECK(c[Family::Readout].flops == doctest::Approx(960));
  CHECK(c[Family::Readout].bytes == doctest::Approx(399.5));
  // Optimizer: (5 + 2*2) floats per parameter and step: 9 * 100 / 16 = 56.25 floats = 225 bytes.
  CHECK(c[Family::Optimizer].flops == 0);
  CHECK(c[Family::Optimizer].bytes == doctest::Approx(225));
  // No dense layers: derived, no work. "other" is not derived and says so.
  CHECK(c[Family::Dense].derived);
  CHECK(c[Family::Dense].flops == 0);
  CHECK(c[Family::Dense].bytes == 0);
  CHECK_FALSE(c.other().derived);
  CHECK(c.other().note.find("not derived") != std::string::npos);
  // One count: the families' FLOPs are the registry's total (measure/bench.hpp's closed
  // form, 768 + 2 (768 + 216) + 960 + 6 n^3 P = 5616).
  CHECK(c.flops() == doctest::Approx(5616));
  CHECK(measure::training_flops_per_token(osmf, 10, 8, 5.0) == doctest::Approx(c.flops()));
}

TEST_CASE("roofline: the expm tape op's exponentials (exprnn) move their cached products") {
  // h = 4 (s = 16), P = 5 and X = 2 per token: forward 2 h^3 P = 640 FLOPs, (X + P) s =
  // 112 floats = 448 bytes (E and the cached products); pullback 4 h^3 P = 1280 FLOPs, the
  // cached products read back, P s = 80 floats = 320 bytes.
  const json rnn = {{"type", "exprnn"}, {"hidden", 4}};
  const models::StepCosts c = models::step_costs(rnn, tiny_inputs());
  CHECK(c[Family::ExpForward].flops == doctest::Approx(640));
  CHECK(c[Family::ExpForward].bytes == doctest::Approx(448));
  CHECK(c[Family::ExpPullback].flops == doctest::Approx(1280));
  CHECK(c[Family::ExpPullback].bytes == doctest::Approx(320));
}

TEST_CASE("roofline: per-family counts of a one-layer transformer and an LSTM, by hand") {
  // D = 8, h = 2, T = 8, V = 10, 16 tokens per step.
  const json tr = {{"type", "transformer"}, {"D", 8}, {"layers", 1}, {"heads", 2}};
  const models::StepCosts t = models::step_costs(tr, tiny_inputs());
  // Dense: 72 D^2 = 4608 FLOPs; 47 D = 376 floats plus weights 3 (12 D^2 + 9 D) / 16 =
  // 157.5: 533.5 floats = 2134 bytes.
  CHECK(t[Family::Dense].flops == doctest::Approx(4608));
  CHECK(t[Family::Dense].bytes == doctest::Approx(2134));
  // Attention: 6 T D = 384 FLOPs; 11 D + h T = 104 floats = 416 bytes.
  CHECK(t[Family::Attention].flops == doctest::Approx(384));
  CHECK(t[Family::Attention].bytes == doctest::Approx(416));
  // Linear head: 6 D V = 480 FLOPs; 3 D + 2 V = 44 floats plus 3 (D V + V) / 16 = 16.875:
  // 60.875 floats = 243.5 bytes.
  CHECK(t[Family::Readout].flops == doctest::Approx(480));
  CHECK(t[Family::Readout].bytes == doctest::Approx(243.5));
  CHECK(t[Family::ExpForward].flops == 0);
  CHECK(t.flops() == doctest::Approx(measure::training_flops_per_token(tr, 10, 8)));
  // LSTM, h = 4, one layer: dense 48 h^2 = 768 FLOPs; 32 h = 128 floats plus
  // 3 (8 h^2 + 4 h) / 16 = 27: 155 floats = 620 bytes.
  const json lstm = {{"type", "lstm"}, {"hidden", 4}, {"layers", 1}};
  const models::StepCosts l = models::step_costs(lstm, tiny_inputs());
  CHECK(l[Family::Dense].flops == doctest::Approx(768));
  CHECK(l[Family::Dense].bytes == doctest::Approx(620));
  CHECK(l.flops() == doctest::Approx(measure::training_flops_per_token(lstm, 10, 8)));
  // Bad inputs are typed errors.
  models::CostInputs bad = tiny_inputs();
  bad.seq_len = 0;
  CHECK_THROWS_AS(models::step_costs(lstm, bad), ValueError);
}

TEST_CASE("roofline: the token-drive OSM-RNN mixes once per table row, the relative drive once per token") {
  // tiny_inputs: V = 10 rows for 16 tokens, so the token drive's mixing costs 10/16 of a
  // per-token one: 6 m^2 = 216 FLOPs per token becomes 135; its r and u rows likewise
  // (2*2*6 = 24 floats -> 15), Gamma's weights (3 m^2 / 16 tokens = 6.75 floats) unchanged.
  const json token = {{"type", "osm_rnn"},    {"group", "SO(4)"},          {"mixing", "linear"},
                      {"rnn_drive", "token"}, {"renormalize_every", 0}};
  json relative = token;
  relative["rnn_drive"] = "relative";
  const models::StepCosts t = models::step_costs(token, tiny_inputs());
  const models::StepCosts r = models::step_costs(relative, tiny_inputs());
  CHECK(r[Family::Tangent].flops == doctest::Approx(216));
  CHECK(t[Family::Tangent].flops == doctest::Approx(135));
  CHECK(r[Family::Tangent].bytes == doctest::Approx(4 * (24 + 6.75)));
  CHECK(t[Family::Tangent].bytes == doctest::Approx(4 * (15 + 6.75)));
  // A scan step: relative 12 n^3 = 768 FLOPs, token 6 n^3 = 384; both 6 s = 96 floats =
  // 384 bytes (the relative drive reads M_t in both passes, the token drive E_x).
  CHECK(r[Family::SmallProducts].flops == doctest::Approx(768));
  CHECK(t[Family::SmallProducts].flops == doctest::Approx(384));
  CHECK(r[Family::SmallProducts].bytes == doctest::Approx(384));
  CHECK(t[Family::SmallProducts].bytes == doctest::Approx(384));
  // The scan keeps neither E nor the exponential's products: its exponentials move no bytes.
  CHECK(r[Family::ExpForward].bytes == 0);
  CHECK(r[Family::ExpPullback].bytes == 0);
  // With more rows than tokens every token is its own row: no saving.
  models::CostInputs few = tiny_inputs();
  few.vocab = 100;
  CHECK(models::step_costs(token, few)[Family::Tangent].flops == doctest::Approx(216));
}

TEST_CASE("roofline: bounds from a peak and a bandwidth, on hand-made numbers") {
  models::StepCosts c;
  c[Family::Attention] = {768, 448, true, ""};   // at 100 GFLOP/s 7.68 ns, at 10 GB/s 44.8 ns: memory
  c[Family::Dense] = {4000, 100, true, ""};      // 40 ns against 10 ns: compute
  c.other() = {0, 0, false, "not derived: test"};
  std::vector<std::pair<std::string, double>> shares;
  for (int f = 0; f < prof::kFamilies; ++f) shares.emplace_back(prof::family_name(static_cast<Family>(f)), 0.0);
  shares.emplace_back("other", 0.0);
  shares[static_cast<size_t>(Family::Attention)].second = 0.1;
  shares[static_cast<size_t>(Family::Dense)].second = 0.4;
  shares.back().second = 0.5;
  // 16 tokens in 16 us: 1000 ns per token.
  const measure::Roofline r = measure::make_roofline(c, shares, 16e-6, 16, 100, 10);
  const auto& att = r.families[static_cast<size_t>(Family::Attention)];
  CHECK(att.bound_ns == doctest::Approx(44.8));
  CHECK(att.bound_by == "memory");
  CHECK(att.measured_ns == doctest::Approx(100));
  CHECK(att.of_bound == doctest::Approx(0.448));
  const auto& dense = r.families[static_cast<size_t>(Family::Dense)];
  CHECK(dense.bound_by == "compute");
  CHECK(dense.of_bound == doctest::Approx(40.0 / 400));
  CHECK(r.families.back().of_bound < 0);  // other: no bound
  CHECK(r.step.bound_ns == doctest::Approx(84.8));
  CHECK(r.step.of_bound == doctest::Approx(0.0848));
  const json j = r.to_json();
  CHECK(j["families"]["other"]["of_bound"].is_null());
  CHECK(j["families"]["attention"]["bound_by"] == "memory");
  CHECK(r.to_text().find("other: not derived: test") != std::string::npos);
  CHECK_THROWS_AS(measure::make_roofline(c, shares, 16e-6, 16, 0, 10), ValueError);
  shares.pop_back();
  CHECK_THROWS_AS(measure::make_roofline(c, shares, 16e-6, 16, 100, 10), ValueError);
}

TEST_CASE("roofline: bench --json carries the roofline fields; --op stream reports a bandwidth") {
  test::TempDir tmp("bench_roofline");
  test::write_text(tmp / "text.txt", test::small_corpus());
  const json cfg = test::tiny_config(tmp / "text.txt", {{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 1}}, 2);
  const std::string cfg_path = tmp / "c.json";
  test::write_text(cfg_path, cfg.dump(2));
  const json b = test::json_output(test::run_liegrad(
      {"bench", "--config", cfg_path, "--steps", "4", "--warmup", "1", "--peak-n", "64", "--stream-mib", "4", "--json"},
      tmp.path.string()));
  REQUIRE(b["roofline"].is_object());
  const json& roof = b["roofline"];
  CHECK(roof["gemm_n"] == 64);
  CHECK(roof["stream_mib_per_array"] == 4);
  CHECK(roof["peak_gflop_per_s"].get<double>() > 0);
  CHECK(roof["stream_gb_per_s"].get<double>() > 0);
  auto positive_finite = [](const json& v) { return v.is_number() && v.get<double>() > 0 && std::isfinite(v.get<double>()); };
  for (const char* family : {"exp_forward", "exp_pullback", "attention", "small_products", "tangent", "dense", "readout",
                             "optimizer", "other"}) {
    INFO(family);
    REQUIRE(roof["families"].contains(family));
    const json& f = roof["families"][family];
    for (const char* key : {"derived", "flops_per_token", "bytes_per_token", "flop_per_byte", "bound_ns_per_token",
                            "bound_by", "measured_ns_per_token", "of_bound", "note"})
      CHECK(f.contains(key));
    if (!f["of_bound"].is_null()) CHECK(positive_finite(f["of_bound"]));
  }
  // The OSM families do work and were timed: each has a positive, finite fraction. The
  // fused updates' exponential pullback forms its products again in L1: FLOPs, no bytes.
  for (const std::string family : {"exp_forward", "exp_pullback", "attention", "small_products", "readout"}) {
    INFO(family);
    CHECK(positive_finite(roof["families"][family]["flops_per_token"]));
    if (family == "exp_pullback")
      CHECK(roof["families"][family]["bytes_per_token"].get<double>() == 0);
    else
      CHECK(positive_finite(roof["families"][family]["bytes_per_token"]));
    CHECK(positive_finite(roof["families"][family]["of_bound"]));
  }
  CHECK_FALSE(roof["families"]["other"]["derived"].get<bool>());
  CHECK(roof["families"]["other"]["note"].get<std::string>().find("not derived") != std::string::npos);
  CHECK(positive_finite(roof["step"]["of_bound"]));
  CHECK(roof["step"]["flops_per_token"].get<double>() == doctest::Approx(b["flops_per_token"].get<double>()));

  // --no-roofline leaves the field null; --op stream is its own report.
  const json off = test::json_output(test::run_liegrad(
      {"bench", "--config", cfg_path, "--steps", "1", "--no-profile", "--no-roofline", "--json"}, tmp.path.string()));
  CHECK(off["roofline"].is_null());
  const json stream = test::json_output(
      test::run_liegrad({"bench", "--op", "stream", "--mib", "4", "--repeats", "2", "--json"}, tmp.path.string()));
  CHECK(stream["op"] == "stream");
  CHECK(positive_finite(stream["triad_gb_per_s"]["median"]));
  const auto bad = test::run_liegrad({"bench", "--op", "stream", "--mib", "0"}, tmp.path.string());
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("--mib") != std::string::npos);
}
