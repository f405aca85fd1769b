// The STREAM-triad bandwidth measurement (see stream_bench.hpp).
#include "measure/stream_bench.hpp"

#include <unistd.h>

#include <memory>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "measure/spread.hpp"

namespace liegrad::measure {

using namespace bench_detail;

StreamBenchResult bench_stream(int64_t mib, int repeats, int threads) {
  if (mib < 1 || repeats < 1)
    throw ValueError("bench --op stream: --mib and --repeats must be >= 1, got " + std::to_string(mib) + " and " +
                     std::to_string(repeats));
  if (threads > 0) set_num_threads(threads);
  const int64_t n = mib * (int64_t(1) << 20) / static_cast<int64_t>(sizeof(float));
  // Uninitialised storage: the first touch below places each thread's pages.
  std::unique_ptr<float[]> a(new float[static_cast<size_t>(n)]), b(new float[static_cast<size_t>(n)]),
      c(new float[static_cast<size_t>(n)]);
  float* pa = a.get();
  float* pb = b.get();
  float* pc = c.get();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    pa[i] = 0.0f;
    pb[i] = 1.0f;
    pc[i] = 2.0f;
  }
  const float scalar = 3.0f;
  auto triad = [&] {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) pa[i] = pb[i] + scalar * pc[i];
  };
  StreamBenchResult r;
  r.mib = mib;
  r.repeats = repeats;
  r.threads = num_threads();
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  r.l3_mib = l3 > 0 ? static_cast<double>(l3) / (1 << 20) : 0.0;
  const double gb = 3.0 * static_cast<double>(sizeof(float)) * static_cast<double>(n) * 1e-9;
  r.gb_per_s = rates(repeats, gb, triad);
  if (pa[n / 2] != pb[n / 2] + scalar * pc[n / 2]) throw NumericError("bench --op stream: the triad's result is wrong");
  return r;
}

nlohmann::json StreamBenchResult::to_json() const {
  return {{"op", "stream"}, {"mib_per_array", mib}, {"repeats", repeats}, {"threads", threads},
          {"l3_mib", l3_mib},  {"triad_gb_per_s", spread_json(gb_per_s)}};
}

std::string StreamBenchResult::to_text() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "STREAM triad a = b + s c, 3 float arrays of %lld MiB (L3: %.0f MiB), %d threads, %d repeats\n",
                static_cast<long long>(mib), l3_mib, threads, repeats);
  return std::string(buf) + "bandwidth: " + spread_text(gb_per_s, " GB/s", 1) + "\n";
}

}  // namespace liegrad::measure
