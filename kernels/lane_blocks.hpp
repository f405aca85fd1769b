// The causal layout the two queries-in-lanes attention kernels share
// (causal_mha_lanes.cpp, mean_attention_lanes.cpp): queries in blocks of 16, one per
// lane of an AVX-512 register; block b (queries 16 b .. 16 b + 15) keeps one 16-float
// vector per key j = 0 .. 16 b + 15, so a T x T causal array takes block_offset(blocks(T))
// floats, block b starting at 16 * 16 * (0 + 1 + ... + b) = 128 b (b + 1).
#pragma once
#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace liegrad::kernels::lane_blocks {

inline int64_t blocks(int64_t T) { return (T + 15) / 16; }
inline int64_t block_offset(int64_t b) { return 128 * b * (b + 1); }

#if defined(__AVX512F__)
// Lanes r whose query i0 + r is at or after key j: every lane below the diagonal block.
inline __mmask16 causal_lanes(int64_t j, int64_t i0) {
  const int64_t shift = j - i0;
  return shift <= 0 ? __mmask16(0xFFFF) : __mmask16(0xFFFFu << shift);
}
#endif

}  // namespace liegrad::kernels::lane_blocks
