// Memory bandwidth, STREAM-triad style, for `liegrad bench --op stream` and the
// roofline of `liegrad bench` (measure/roofline_table.hpp): a[i] = b[i] + s c[i] on float arrays
// of `mib` MiB each, split over the OpenMP threads (first touch by the same split, so
// each thread streams its own pages), counted as STREAM counts it: 3 x 4 bytes per
// element and pass (the write-allocate read of a is not counted). The arrays should be
// several times the last-level cache; the default (128 MiB each, 384 MiB in all) is
// for L3 caches up to ~96 MiB, and the result reports the L3 size the OS gives.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/spread.hpp"

namespace liegrad::measure {

inline constexpr int64_t kDefaultStreamMib = 128;

struct StreamBenchResult {
  int64_t mib = 0;       // per array
  int repeats = 0, threads = 0;
  double l3_mib = 0;     // sysconf(_SC_LEVEL3_CACHE_SIZE), 0 when the OS does not say
  Spread gb_per_s;       // triad GB/s (1e9 bytes) over the repeats
  nlohmann::json to_json() const;
  std::string to_text() const;
};

// threads 0 = keep the current thread count. ValueError when mib or repeats < 1.
StreamBenchResult bench_stream(int64_t mib, int repeats, int threads);

}  // namespace liegrad::measure
