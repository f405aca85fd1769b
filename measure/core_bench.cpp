// Per-CPU speed of small products (see core_bench.hpp).
#include "measure/core_bench.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include "core/errors.hpp"
#include "core/rng.hpp"
#include "core/small_gemm.hpp"
#include "measure/spread.hpp"

namespace liegrad::measure {

using namespace bench_detail;

namespace {

constexpr int kSweeps = 32;

// The CPUs this process may run on, ascending.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) throw Error("bench --op cores: sched_getaffinity failed");
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.empty()) throw Error("bench --op cores: the affinity mask names no CPU");
  return cpus;
}

// Times `repeats` passes of `batch` products C_b = A_b B_b (d x d) on a thread pinned
// to `cpu`; an empty spread when the pin fails (the caller reports it).
Spread time_on(int cpu, int64_t d, int64_t batch, int repeats, bool* pinned) {
  Spread result;
  std::thread worker([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    *pinned = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
    if (!*pinned) return;
    const int64_t dd = d * d;
    Rng rng(static_cast<uint64_t>(cpu) + 1);
    // Written by this thread, so its pages are first touched on this CPU's node.
    std::vector<float> A(static_cast<size_t>(batch * dd)), B(A.size()), C(A.size());
    for (size_t i = 0; i < A.size(); ++i) {
      A[i] = static_cast<float>(rng.normal()) / static_cast<float>(d);
      B[i] = static_cast<float>(rng.normal()) / static_cast<float>(d);
    }
    // A pass walks the batch kSweeps times: a few milliseconds at d = 16, long enough
    // for the clock and short enough that a repeat sees one state of the machine.
    auto pass = [&] {
      for (int sweep = 0; sweep < kSweeps; ++sweep)
        for (int64_t b = 0; b < batch; ++b)
          sgemm_small(false, false, d, d, d, 1.0f, A.data() + b * dd, d, B.data() + b * dd, d, 0.0f,
                      C.data() + b * dd, d);
    };
    result = rates(repeats, static_cast<double>(kSweeps * batch), pass);
  });
  worker.join();
  return result;
}

}  // namespace

CoreBenchResult bench_cores(int64_t d, int repeats) {
  if (d < 1 || d > 64 || repeats < 1)
    throw ValueError("bench --op cores: --d must be in 1..64 and --repeats >= 1, got " + std::to_string(d) + " and " +
                     std::to_string(repeats));
  CoreBenchResult r;
  r.d = d;
  // About 3 MiB of operands (beyond a core's L2, as a model's batch of states is).
  r.batch = std::max<int64_t>(64, (int64_t(3) << 20) / static_cast<int64_t>(3 * sizeof(float) * d * d));
  r.repeats = repeats;
  for (int cpu : allowed_cpus()) {
    bool pinned = false;
    CoreSpeed s;
    s.cpu = cpu;
    s.products_per_s = time_on(cpu, d, r.batch, repeats, &pinned);
    if (!pinned) throw Error("bench --op cores: cannot pin a thread to CPU " + std::to_string(cpu));
    r.cpus.push_back(s);
  }
  double slow = r.cpus.front().products_per_s.median, fast = slow;
  for (const CoreSpeed& s : r.cpus) {
    slow = std::min(slow, s.products_per_s.median);
    fast = std::max(fast, s.products_per_s.median);
  }
  r.slowest_over_fastest = fast > 0 ? slow / fast : 0.0;
  return r;
}

nlohmann::json CoreBenchResult::to_json() const {
  nlohmann::json cpus_json = nlohmann::json::array();
  for (const CoreSpeed& s : cpus) cpus_json.push_back({{"cpu", s.cpu}, {"products_per_s", spread_json(s.products_per_s)}});
  return {{"op", "cores"}, {"d", d}, {"batch", batch}, {"repeats", repeats}, {"cpus", cpus_json},
          {"slowest_over_fastest", slowest_over_fastest}};
}

std::string CoreBenchResult::to_text() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%lld x %lld float products over a batch of %lld, one CPU at a time, %d repeats\n",
                static_cast<long long>(d), static_cast<long long>(d), static_cast<long long>(batch), repeats);
  std::string out = buf;
  for (const CoreSpeed& s : cpus) {
    std::snprintf(buf, sizeof buf, "CPU %d: ", s.cpu);
    out += buf + spread_text(s.products_per_s, " products/s", 0) + "\n";
  }
  std::snprintf(buf, sizeof buf, "slowest / fastest CPU: %.2f\n", slowest_over_fastest);
  return out + buf;
}

}  // namespace liegrad::measure
