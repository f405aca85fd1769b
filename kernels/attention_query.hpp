// One query's causal attention over cached rows: the last position of the two fused
// attentions (causal_mha.hpp, mean_attention.hpp), for incremental decoding
// (models/decoding.hpp). Plain arrays, no tape; O(P x width) for P cached positions.
//
// multi_head_query (the transformer's): the query is position i = P - 1 and, per head k
// of width e = D / h (columns k e .. (k+1) e - 1),
//   p_j = softmax_{j <= i}(scale q.k_j - slope_k (i - j)),   out = sum_j p_j v_j;
// mean_head_query (the OSMFormer's): the query is the last of the P rows X_j (width D),
//   p^k_j = softmax_{j <= i}(beta_k s X_i.X_j - slope_k (i - j)),
//   out = (1/h) sum_k sum_j p^k_j X_j.
// Both use the training kernels' softmax row (causal_softmax.hpp). ALiBi: Press et al. 2022.
#pragma once
#include <cstdint>
#include <vector>

namespace liegrad::kernels {

// q (D); K, V (P,D) row-major; slopes: h values or empty; out (D).
template <class T>
void multi_head_query(const T* q, const T* K, const T* V, int64_t P, int64_t D, int heads,
                      const std::vector<T>& slopes, T scale, T* out);

// X (P,D) row-major, the query its last row; beta (h) = exp(log_beta); slopes: h values or empty; out (D).
template <class T>
void mean_head_query(const T* X, int64_t P, int64_t D, const std::vector<T>& beta, const std::vector<T>& slopes, T s,
                     T* out);

}  // namespace liegrad::kernels
