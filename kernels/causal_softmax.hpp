// One row of a causal softmax with an ALiBi-style distance penalty, shared by the
// fused attention kernels (causal_mha.cpp, mean_attention.cpp):
//   p_j = softmax_{j<=i}(scale * s_j - slope * (i - j)),  j = 0..i.
// Max-subtracted before exp for range safety (Press et al. 2022 for the penalty).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/vmath.hpp"

namespace liegrad::kernels {

using namespace ag;

// p (i+1) = the softmax above of s (i+1); p may alias s. Writes nothing past p[i].
template <class T>
void causal_softmax_row(int64_t i, const T* s, T scale, T slope, T* p) {
  T mx = -INFINITY;
  for (int64_t j = 0; j <= i; ++j) {
    p[j] = scale * s[j] - slope * static_cast<T>(i - j);
    mx = std::max(mx, p[j]);
  }
  for (int64_t j = 0; j <= i; ++j) p[j] -= mx;
  vm::exp_array(i + 1, p, p);
  T sum = 0;
  for (int64_t j = 0; j <= i; ++j) sum += p[j];
  const T inv = T(1) / sum;
  for (int64_t j = 0; j <= i; ++j) p[j] *= inv;
}

}  // namespace liegrad::kernels
