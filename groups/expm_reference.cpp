// What checks and measures groups/expm.cpp: the reference block pullback, the
// check_vjp list of the expm tape op, and the throughput probe for the benchmark.
//
// Block pullback (Mathias 1996; what PyTorch and expRNN do): for M = [[X, E], [0, X]],
// exp(M) = [[exp(X), L(X, E)], [0, exp(X)]], so with X = A^T and E = G the top-right
// block is L(A^T, G) = dL/dA. It costs one exponential of a 2n x 2n matrix (8x the
// work per product, and ||G|| enters the squaring count), hence only a reference.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "autograd/elementwise.hpp"
#include "autograd/matmul.hpp"
#include "autograd/tape.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"

namespace liegrad::groups {

namespace {

// M = [[A^T, G], [0, A^T]], A and G (n, n), M (2n, 2n).
template <class T>
void build_block(int64_t n, const T* A, const T* G, T* M) {
  const int64_t m = 2 * n;
  std::fill(M, M + m * m, T(0));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const T at = A[j * n + i];
      M[i * m + j] = at;
      M[(n + i) * m + n + j] = at;
      M[i * m + n + j] = G[i * n + j];
    }
}

// Normal entries, each matrix scaled to Frobenius norm `norm`.
Array<double> scaled_normal(Rng& rng, const Shape& shape, double norm) {
  Array<double> a = rng.normal_array<double>(shape);
  const int64_t n2 = shape.rows() * shape.cols();
  for (int64_t b = 0; b < shape.batch(); ++b) {
    double* x = a.data() + b * n2;
    double ss = 0;
    for (int64_t i = 0; i < n2; ++i) ss += x[i] * x[i];
    for (int64_t i = 0; i < n2; ++i) x[i] *= norm / std::sqrt(ss);
  }
  return a;
}

// N skew-symmetric (n, n) matrices of Frobenius norm 1 (or general ones when !skew).
Array<float> unit_matrices(Rng& rng, int64_t N, int64_t n, bool skew) {
  Array<float> a = rng.normal_array<float>(Shape{N, n, n});
  const int64_t n2 = n * n;
  for (int64_t b = 0; b < N; ++b) {
    float* x = a.data() + b * n2;
    if (skew)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j <= i; ++j) {
          const float v = i == j ? 0.0f : 0.5f * (x[i * n + j] - x[j * n + i]);
          x[i * n + j] = v;
          x[j * n + i] = -v;
        }
    double ss = 0;
    for (int64_t i = 0; i < n2; ++i) ss += double(x[i]) * x[i];
    const float s = ss > 0 ? static_cast<float>(1.0 / std::sqrt(ss)) : 0.0f;
    for (int64_t i = 0; i < n2; ++i) x[i] *= s;
  }
  return a;
}

}  // namespace

template <class T>
void expm_pullback_block(int64_t N, int64_t n, const T* A, const T* G, T* dA) {
  const int64_t m = 2 * n, n2 = n * n, m2 = m * m;
  if (N == 0 || n == 0) return;
  // Chunks of at most ~4M elements bound the scratch for large batches.
  const int64_t chunk = std::max<int64_t>(1, std::min<int64_t>(N, (int64_t(1) << 22) / m2));
  std::vector<T> M(static_cast<size_t>(chunk * m2)), E(static_cast<size_t>(chunk * m2));
  for (int64_t b0 = 0; b0 < N; b0 += chunk) {
    const int64_t cb = std::min(chunk, N - b0);
    parallel_for(cb, 16, [&](int64_t i) { build_block(n, A + (b0 + i) * n2, G + (b0 + i) * n2, M.data() + i * m2); });
    expm_forward(cb, m, M.data(), E.data());
    parallel_for(cb, 16, [&](int64_t i) {
      const T* e = E.data() + i * m2;
      T* out = dA + (b0 + i) * n2;
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < n; ++c) out[r * n + c] += e[r * m + n + c];
    });
  }
}

std::vector<ag::OpCheck> expm_op_checks() {
  struct Case {
    const char* name;
    Shape shape;
    double norm;  // Frobenius norm per matrix
    bool skew;    // differentiate exp(X - X^T): the skew route, planned from a bound on ||A||_2
  };
  const std::vector<Case> cases = {
      {"expm (small norm)", {3, 3}, 0.2, false},
      {"expm", {3, 3}, 1.5, false},
      {"expm (squaring)", {3, 3}, 5.0, false},
      {"expm (batched)", {4, 5, 5}, 1.0, false},
      {"expm (batched, squaring)", {4, 5, 5}, 30.0, false},
      {"expm (16x16)", {2, 16, 16}, 2.0, false},
      {"expm (16x16, squaring)", {2, 16, 16}, 30.0, false},
      {"expm of skew X - X^T (batched)", {4, 5, 5}, 1.0, true},
      {"expm of skew X - X^T (16x16, squaring)", {2, 16, 16}, 10.0, true},
  };
  std::vector<ag::OpCheck> checks;
  for (const Case& c : cases) {
    const ag::VjpFn f = [skew = c.skew](const std::vector<ag::Vard>& x) {
      return expm(skew ? ag::sub(x[0], ag::transpose(x[0])) : x[0]);
    };
    checks.push_back(
        {c.name, [c, f](Rng& rng) { return ag::check_vjp(c.name, f, {scaled_normal(rng, c.shape, c.norm)}, rng); }});
  }
  return checks;
}

double expm_throughput(int64_t n, int64_t N, int repeats, ExpmRoute route) {
  if (n < 1 || N < 1 || repeats < 1)
    throw ValueError("expm_throughput: n, N and repeats must be >= 1, got n=" + std::to_string(n) +
                     ", N=" + std::to_string(N) + ", repeats=" + std::to_string(repeats));
  Rng rng(2024);
  const Array<float> A = unit_matrices(rng, N, n, true);
  const Array<float> G = unit_matrices(rng, N, n, false);
  Array<float> Q(A.shape()), dA(A.shape());
  auto step = [&] {
    if (route == ExpmRoute::Cached) {
      ag::Varf x = ag::Varf::parameter(A);
      ag::Tape<float>::current().backward(expm(x), G);
      return;
    }
    expm_forward(N, n, A.data(), Q.data());
    if (route == ExpmRoute::Fast)
      expm_pullback(N, n, A.data(), G.data(), dA.data());
    else
      expm_pullback_block(N, n, A.data(), G.data(), dA.data());
  };
  step();  // warm-up
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    step();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return static_cast<double>(N) / seconds[seconds.size() / 2];
}

double expm_throughput(int64_t n, int64_t N, int repeats) { return expm_throughput(n, N, repeats, ExpmRoute::Fast); }

template void expm_pullback_block<float>(int64_t, int64_t, const float*, const float*, float*);
template void expm_pullback_block<double>(int64_t, int64_t, const double*, const double*, double*);

}  // namespace liegrad::groups
