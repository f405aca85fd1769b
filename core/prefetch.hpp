// prefetch_lines: asks the CPU to bring an array into its caches ahead of use.
//
// The OSM relative update walks its tokens one at a time, and each token's work (six
// d x d products and an exponential or its pullback) is long enough that the hardware
// prefetchers, which run a few lines ahead of the misses they see, leave every token's
// operands to arrive on demand. kernels/relative_update.cpp fetches the next token's
// (G, H and E in the backward) while the current one computes (docs/performance-log.md,
// 2026-12-06). A hint only: no effect on any result.
#pragma once
#include <cstdint>

namespace liegrad {

// Prefetches the cache lines of p[0 .. count) into every cache level; Write = 1 asks for
// them owned (prefetchw), for an array about to be written.
template <int Write, class T>
inline void prefetch_lines_as(const T* p, int64_t count) {
  constexpr int64_t kPerLine = 64 / static_cast<int64_t>(sizeof(T));
  for (int64_t e = 0; e < count; e += kPerLine) __builtin_prefetch(p + e, Write, 3);
}

// For reading.
template <class T>
inline void prefetch_lines(const T* p, int64_t count) {
  prefetch_lines_as<0>(p, count);
}

// For an array about to be written (or read and written): the lines arrive owned, so
// the stores need not wait for them.
template <class T>
inline void prefetch_lines_for_write(T* p, int64_t count) {
  prefetch_lines_as<1>(p, count);
}

}  // namespace liegrad
