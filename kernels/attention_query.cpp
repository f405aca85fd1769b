// Single-query attention over cached rows (see attention_query.hpp).
#include "kernels/attention_query.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "core/vmath.hpp"
#include "kernels/causal_softmax.hpp"

namespace liegrad::kernels {

namespace {
void check_query(int64_t P, int64_t D, int64_t heads, size_t slopes, const char* what) {
  if (P < 1 || D < 1 || heads < 1)
    throw ShapeError(std::string(what) + ": needs P >= 1 cached rows, width D >= 1 and heads >= 1, got P = " +
                     std::to_string(P) + ", D = " + std::to_string(D) + ", heads = " + std::to_string(heads));
  if (slopes != 0 && static_cast<int64_t>(slopes) != heads)
    throw ShapeError(std::string(what) + ": " + std::to_string(slopes) + " slopes for " + std::to_string(heads) +
                     " heads");
}
}  // namespace

template <class T>
void multi_head_query(const T* q, const T* K, const T* V, int64_t P, int64_t D, int heads,
                      const std::vector<T>& slopes, T scale, T* out) {
  check_query(P, D, heads, slopes.size(), "multi_head_query");
  if (D % heads != 0)
    throw ShapeError("multi_head_query: width " + std::to_string(D) + " is not divisible by " + std::to_string(heads) +
                     " heads");
  const int64_t e = D / heads, i = P - 1;
  std::vector<T> p(static_cast<size_t>(P));
  for (int64_t k = 0; k < heads; ++k) {
    const int64_t c0 = k * e;
    for (int64_t j = 0; j < P; ++j) p[static_cast<size_t>(j)] = vm::dot_array(e, q + c0, K + j * D + c0);
    causal_softmax_row(i, p.data(), scale, slopes.empty() ? T(0) : slopes[static_cast<size_t>(k)], p.data());
    T* o = out + c0;
    std::fill(o, o + e, T(0));
    for (int64_t j = 0; j < P; ++j) add_scaled_row(e, p[static_cast<size_t>(j)], V + j * D + c0, o);
  }
}

template <class T>
void mean_head_query(const T* X, int64_t P, int64_t D, const std::vector<T>& beta, const std::vector<T>& slopes, T s,
                     T* out) {
  const int64_t h = static_cast<int64_t>(beta.size()), i = P - 1;
  check_query(P, D, h, slopes.size(), "mean_head_query");
  const T* x = X + i * D;
  std::vector<T> S(static_cast<size_t>(P)), p(static_cast<size_t>(P)), abar(static_cast<size_t>(P), T(0));
  for (int64_t j = 0; j < P; ++j) S[static_cast<size_t>(j)] = s * vm::dot_array(D, x, X + j * D);
  const T inv_h = T(1) / static_cast<T>(h);
  for (int64_t k = 0; k < h; ++k) {
    causal_softmax_row(i, S.data(), beta[static_cast<size_t>(k)], slopes.empty() ? T(0) : slopes[static_cast<size_t>(k)],
                       p.data());
    add_scaled_row(P, inv_h, p.data(), abar.data());
  }
  std::fill(out, out + D, T(0));
  for (int64_t j = 0; j < P; ++j) add_scaled_row(D, abar[static_cast<size_t>(j)], X + j * D, out);
}

template void multi_head_query(const float*, const float*, const float*, int64_t, int64_t, int,
                               const std::vector<float>&, float, float*);
template void multi_head_query(const double*, const double*, const double*, int64_t, int64_t, int,
                               const std::vector<double>&, double, double*);
template void mean_head_query(const float*, int64_t, int64_t, const std::vector<float>&, const std::vector<float>&,
                              float, float*);
template void mean_head_query(const double*, int64_t, int64_t, const std::vector<double>&, const std::vector<double>&,
                              double, double*);

}  // namespace liegrad::kernels
