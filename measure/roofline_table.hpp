// The roofline of a training step, per op family: each family's FLOPs and bytes per
// token (models/roofline.hpp) against the machine's float GEMM peak and memory bandwidth
// measured in the same run (measure/bench.hpp's bench_gemm, measure/stream_bench.hpp), and
// the family's measured time (its share of the profiled steps, core/profile.hpp, times
// the median timed step) against that bound:
//
//   bound  = max(FLOPs / peak, bytes / bandwidth)     per token, "compute" or "memory"
//   of_bound = bound / measured                       1 = on the roofline, 0.25 = 4x above it
//
// The step's bound is the sum of the derived families' bounds; its measured time is the
// whole step's, so the time of "other" and of any underived family counts against it.
// Families with no count (derived = false) get no bound, and say why.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/roofline.hpp"

namespace liegrad::measure {

struct RooflineRow {
  std::string family;
  models::FamilyCost cost;       // per token
  double bound_ns = 0;           // per token; 0 when not derived
  std::string bound_by;          // "compute", "memory", or "" (not derived / no work)
  double measured_ns = -1;       // per token; < 0: not measured (no profile)
  double of_bound = -1;          // bound / measured; < 0: none (not derived, no work or not measured)
};

struct Roofline {
  double peak_gflop_per_s = 0;   // the fastest of the run's GEMM rates (bench_gemm)
  int64_t gemm_n = 0;
  double stream_gb_per_s = 0;    // the run's STREAM triad median
  int64_t stream_mib = 0;
  std::vector<RooflineRow> families;  // prof::Family order, then "other"
  RooflineRow step;                   // the sums (family "step")
  nlohmann::json to_json() const;
  std::string to_text() const;
};

// shares: (family name, share of the step), as BenchResult::breakdown, or empty (no
// profile); step_seconds: the median timed step; tokens: B * T per step.
Roofline make_roofline(const models::StepCosts& costs, const std::vector<std::pair<std::string, double>>& shares,
                       double step_seconds, double tokens, double peak_gflop_per_s, double stream_gb_per_s);

}  // namespace liegrad::measure
