// The speed of each CPU the process may run on, for `liegrad bench --op cores` and
// bench/compare.sh: one CPU at a time, a thread pinned to it times batches of small
// d x d float products (sgemm_small, the OSM kernels' products) over a working set of a
// few MiB, as the models' batches are. On a dedicated machine the CPUs agree; on a
// shared virtual one they need not (on 2026-12-05 one of two vCPUs ran these products
// 25-35% slower than the other for minutes at a time, while the other tenant was busy),
// and then a two-thread step whose lanes are split evenly waits on the slower CPU. The
// report gives each CPU's rate and the slowest over the fastest, so a side-by-side can
// say how unequal its CPUs were (docs/performance.md, "On a shared machine").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/spread.hpp"

namespace liegrad::measure {

struct CoreSpeed {
  int cpu = 0;
  Spread products_per_s;  // d x d x d products per second over the repeats
};

struct CoreBenchResult {
  int64_t d = 0, batch = 0;  // product side; the batch of products a timed pass sweeps 32 times
  int repeats = 0;
  std::vector<CoreSpeed> cpus;      // every CPU of the process's affinity mask, ascending
  double slowest_over_fastest = 1;  // min over max of the CPUs' median rates
  nlohmann::json to_json() const;
  std::string to_text() const;
};

// ValueError when d is outside 1..64 or repeats < 1; Error when a thread cannot
// be pinned to a CPU of the mask.
CoreBenchResult bench_cores(int64_t d, int repeats);

}  // namespace liegrad::measure
