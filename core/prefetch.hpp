// prefetch_lines: asks the CPU to bring an array into its caches ahead of use.
//
// The OSM kernels walk their tokens one at a time, and each token's work (a dozen
// 16 x 16 products, an exponential) is long enough that the hardware prefetchers, which
// run a few lines ahead of the misses they see, leave every token's operands to arrive
// on demand: in the relative update's backward the next token's G, H, E and cached
// products are fetched while the current token computes (docs/performance-log.md,
// 2026-12-06). A hint only: no effect on any result.
#pragma once
#include <cstdint>

namespace liegrad {

// Prefetches the cache lines of p[0 .. count) for reading (into every cache level).
template <class T>
inline void prefetch_lines(const T* p, int64_t count) {
  constexpr int64_t kPerLine = 64 / static_cast<int64_t>(sizeof(T));
  for (int64_t e = 0; e < count; e += kPerLine) __builtin_prefetch(p + e, 0, 3);
}

}  // namespace liegrad
