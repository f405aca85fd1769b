// Kernels and wrappers for softmax, log-softmax, cross-entropy, LayerNorm and
// embedding. Row loops run in parallel (OpenMP); each thread writes its own rows.
// Softmax derivatives: dx = y * (g - <g, y>) and for log-softmax dx = g - softmax * sum(g).
#include "autograd/nn_ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "autograd/layer_norm_rows.hpp"
#include "autograd/tape.hpp"
#include "core/parallel.hpp"
#include "core/prefetch.hpp"
#include "core/vmath.hpp"

namespace liegrad::ag {

namespace {

// Rows per thread: about kMinParallelWork element operations.
inline int64_t row_grain(int64_t row_len) { return grain_for(row_len); }
// The same for rows that take exponentials: a row of C logits costs about 8 C
// element operations (maximum, shift, exp, sum; then shift, exp and scale again).
// Counting it as C kept the readout's 4096 x 65 rows on one thread.
inline int64_t exp_row_grain(int64_t row_len) { return grain_for(8 * row_len); }
// The same for LayerNorm rows, forward or backward: two row reductions and the
// normalised row cost about 8 D element operations' time (4096 rows of 64 took about
// 220 us forward on one Zen 5 thread, per-thread `perf` samples of a transformer step,
// 2026-12-05). Counting a row as D kept the transformer's 4096 x 64 LayerNorms serial.
inline int64_t norm_row_grain(int64_t row_len) { return grain_for(8 * row_len); }

// q (n) = exp(x - shift), in SIMD for float (core/vmath.hpp); q may be x.
template <class T>
void exp_shifted(const T* x, int64_t n, T shift, T* q) {
  for (int64_t j = 0; j < n; ++j) q[j] = x[j] - shift;
  vm::exp_array(n, q, q);
}

// Numerically stable log-sum-exp of a row (entries may be -inf, not all); the
// exponentials go through a stack block so they run in SIMD.
template <class T>
T row_logsumexp(const T* x, int64_t n) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) m = std::max(m, x[j]);
  constexpr int64_t kBlock = 256;
  T block[kBlock];
  T s = 0;
  for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
    const int64_t len = std::min(kBlock, n - j0);
    exp_shifted(x + j0, len, m, block);
    for (int64_t j = 0; j < len; ++j) s += block[j];
  }
  return m + std::log(s);
}

void check_targets(const char* op, const std::vector<int32_t>& targets, int64_t rows, int64_t V) {
  if (static_cast<int64_t>(targets.size()) != rows)
    throw ShapeError(std::string(op) + ": " + std::to_string(rows) + " rows of logits but " +
                     std::to_string(targets.size()) + " targets");
  for (int32_t t : targets)
    if (t < 0 || t >= V)
      throw ValueError(std::string(op) + ": target id " + std::to_string(t) + " outside [0, " + std::to_string(V) + ")");
}

}  // namespace

template <class T>
Var<T> softmax(const Var<T>& x) {
  const int64_t C = x.shape().cols(), R = x.size() / std::max<int64_t>(C, 1);
  Array<T> y = Array<T>::uninitialized(x.shape());  // every row written below
  const T* px = x.value().data();
  T* py = y.data();
  parallel_for(R, exp_row_grain(C), [&](int64_t r) { exp_shifted(px + r * C, C, row_logsumexp(px + r * C, C), py + r * C); });
  auto saved = std::make_shared<Array<T>>(y);
  return record_op<T>(std::move(y), {&x}, [x, saved, R, C](const Array<T>& g) {
    T* dx = x.node()->grad_ref().data();
    const T* yy = saved->data();
    parallel_for(R, row_grain(C), [&](int64_t r) {
      T dot = 0;
      for (int64_t j = 0; j < C; ++j) dot += g[r * C + j] * yy[r * C + j];
      for (int64_t j = 0; j < C; ++j) dx[r * C + j] += yy[r * C + j] * (g[r * C + j] - dot);
    });
  });
}

template <class T>
Var<T> log_softmax(const Var<T>& x) {
  const int64_t C = x.shape().cols(), R = x.size() / std::max<int64_t>(C, 1);
  Array<T> y = Array<T>::uninitialized(x.shape());  // every row written below
  const T* px = x.value().data();
  T* py = y.data();
  parallel_for(R, exp_row_grain(C), [&](int64_t r) {
    const T lse = row_logsumexp(px + r * C, C);
    for (int64_t j = 0; j < C; ++j) py[r * C + j] = px[r * C + j] - lse;
  });
  auto saved = std::make_shared<Array<T>>(y);
  return record_op<T>(std::move(y), {&x}, [x, saved, R, C](const Array<T>& g) {
    T* dx = x.node()->grad_ref().data();
    const T* yy = saved->data();
    parallel_for(R, exp_row_grain(C), [&](int64_t r) {
      T gs = 0;
      for (int64_t j = 0; j < C; ++j) gs += g[r * C + j];
      for (int64_t j = 0; j < C; ++j) dx[r * C + j] += g[r * C + j] - std::exp(yy[r * C + j]) * gs;
    });
  });
}

template <class T>
std::vector<double> row_nll(const Array<T>& logits, const std::vector<int32_t>& targets) {
  const int64_t V = logits.shape().cols(), R = logits.size() / std::max<int64_t>(V, 1);
  check_targets("row_nll", targets, R, V);
  std::vector<double> out(static_cast<size_t>(R));
  const T* p = logits.data();
  parallel_for(R, exp_row_grain(V), [&](int64_t r) {
    out[static_cast<size_t>(r)] =
        static_cast<double>(row_logsumexp(p + r * V, V)) - static_cast<double>(p[r * V + targets[static_cast<size_t>(r)]]);
  });
  return out;
}

template <class T>
Var<T> cross_entropy(const Var<T>& logits, const std::vector<int32_t>& targets) {
  const int64_t V = logits.shape().cols(), R = logits.size() / std::max<int64_t>(V, 1);
  check_targets("cross_entropy", targets, R, V);
  if (R == 0) throw ShapeError("cross_entropy: no rows in logits " + logits.shape().str());
  // Forward saves the softmax probabilities for the backward pass.
  auto probs = std::make_shared<Array<T>>(logits.shape());
  std::vector<double> nll(static_cast<size_t>(R));
  const T* p = logits.value().data();
  T* q = probs->data();
  parallel_for(R, exp_row_grain(V), [&](int64_t r) {
    const T lse = row_logsumexp(p + r * V, V);
    exp_shifted(p + r * V, V, lse, q + r * V);
    nll[static_cast<size_t>(r)] = static_cast<double>(lse) - static_cast<double>(p[r * V + targets[static_cast<size_t>(r)]]);
  });
  double total = 0;
  for (double v : nll) total += v;
  Array<T> loss = Array<T>::scalar(static_cast<T>(total / static_cast<double>(R)));
  return record_op<T>(std::move(loss), {&logits}, [logits, probs, targets, R, V](const Array<T>& g) {
    T* dx = logits.node()->grad_ref().data();
    const T* qq = probs->data();
    const T scale_ = g[0] / static_cast<T>(R);
    parallel_for(R, row_grain(V), [&](int64_t r) {
      for (int64_t j = 0; j < V; ++j) dx[r * V + j] += scale_ * qq[r * V + j];
      dx[r * V + targets[static_cast<size_t>(r)]] -= scale_;
    });
  });
}

// Rows per chunk of layer_norm's backward: each chunk sums its own gamma and beta
// gradients (double), added in chunk order, so the sums do not depend on the threads.
constexpr int64_t kNormChunkRows = 256;

template <class T>
Var<T> layer_norm(const Var<T>& x, const Var<T>& gamma, const Var<T>& beta, T eps) {
  const int64_t D = x.shape().cols(), R = x.size() / std::max<int64_t>(D, 1);
  if (gamma.size() != D || beta.size() != D)
    throw ShapeError("layer_norm: gamma " + gamma.shape().str() + " and beta " + beta.shape().str() +
                     " must have the last-axis size of x " + x.shape().str());
  // Saved per row: the mean and 1/std; the backward recomputes xhat = (x - mean) / std
  // from x bit for bit rather than reading a stored copy.
  Array<T> y = Array<T>::uninitialized(x.shape());  // every row written below
  auto mean = std::make_shared<std::vector<double>>(static_cast<size_t>(R));
  auto inv_std = std::make_shared<std::vector<T>>(static_cast<size_t>(R));
  const T* px = x.value().data();
  const T* pg = gamma.value().data();
  const T* pb = beta.value().data();
  T* py = y.data();
  parallel_for(R, norm_row_grain(D), [&](int64_t r) {
    const T* xr = px + r * D;
#if LIEGRAD_SIMD
    if constexpr (std::is_same_v<T, float>) {  // the same row in float SIMD (layer_norm_rows.hpp)
      float mu = 0;
      layer_norm_rows::forward(D, xr, pg, pb, eps, py + r * D, &mu, &(*inv_std)[static_cast<size_t>(r)]);
      (*mean)[static_cast<size_t>(r)] = mu;
      return;
    }
#endif
    double mu = 0, var = 0;
#pragma omp simd reduction(+ : mu)
    for (int64_t j = 0; j < D; ++j) mu += xr[j];
    mu /= static_cast<double>(D);
#pragma omp simd reduction(+ : var)
    for (int64_t j = 0; j < D; ++j) var += (xr[j] - mu) * (xr[j] - mu);
    var /= static_cast<double>(D);
    const T is = static_cast<T>(1.0 / std::sqrt(var + static_cast<double>(eps)));
    (*mean)[static_cast<size_t>(r)] = mu;
    (*inv_std)[static_cast<size_t>(r)] = is;
    T* yr = py + r * D;
#pragma omp simd
    for (int64_t j = 0; j < D; ++j) yr[j] = static_cast<T>((xr[j] - mu)) * is * pg[j] + pb[j];
  });
  return record_op<T>(std::move(y), {&x, &gamma, &beta}, [x, gamma, beta, mean, inv_std, R, D](const Array<T>& g) {
    const bool param_grads = gamma.requires_grad() || beta.requires_grad();
    const int64_t chunks = (R + kNormChunkRows - 1) / kNormChunkRows;
    // Per chunk: dgamma and dbeta partial sums, D each.
    std::vector<double> partial(param_grads ? static_cast<size_t>(chunks * 2 * D) : 0, 0.0);
    const T* xv = x.value().data();
    const T* pgm = gamma.value().data();
    const T* pgr = g.data();
    T* dx = x.requires_grad() ? x.node()->grad_ref().data() : nullptr;
    parallel_for(chunks, std::max<int64_t>(1, norm_row_grain(D) / kNormChunkRows), [&](int64_t c) {
      std::vector<T> hr(static_cast<size_t>(D));
      double* dg = param_grads ? partial.data() + c * 2 * D : nullptr;
#if LIEGRAD_SIMD
      if constexpr (std::is_same_v<T, float>) {  // float SIMD rows; the chunk's gamma and beta sums in float
        std::vector<float> chunk_sums(param_grads ? static_cast<size_t>(2 * D) : 0, 0.0f);
        float* dgf = param_grads ? chunk_sums.data() : nullptr;
        for (int64_t r = c * kNormChunkRows; r < std::min(R, (c + 1) * kNormChunkRows); ++r)
          layer_norm_rows::backward(D, xv + r * D, pgr + r * D, pgm, static_cast<float>((*mean)[static_cast<size_t>(r)]),
                                    (*inv_std)[static_cast<size_t>(r)], dx ? dx + r * D : nullptr, dgf,
                                    dgf ? dgf + D : nullptr);
        for (int64_t j = 0; j < (param_grads ? 2 * D : 0); ++j) dg[j] = chunk_sums[static_cast<size_t>(j)];
        return;
      }
#endif
      for (int64_t r = c * kNormChunkRows; r < std::min(R, (c + 1) * kNormChunkRows); ++r) {
        const T* xr = xv + r * D;
        const T* gr = pgr + r * D;
        const double mu = (*mean)[static_cast<size_t>(r)];
        const T is = (*inv_std)[static_cast<size_t>(r)];
        T* h = hr.data();
#pragma omp simd
        for (int64_t j = 0; j < D; ++j) h[j] = static_cast<T>((xr[j] - mu)) * is;
        if (dg) {
          double* db = dg + D;
#pragma omp simd
          for (int64_t j = 0; j < D; ++j) {
            dg[j] += static_cast<double>(gr[j] * h[j]);
            db[j] += static_cast<double>(gr[j]);
          }
        }
        if (!dx) continue;
        // dx = inv_std * (dh - mean(dh) - h * mean(dh * h)), dh = g * gamma
        T* dxr = dx + r * D;
        T m1 = 0, m2 = 0;
#pragma omp simd reduction(+ : m1, m2)
        for (int64_t j = 0; j < D; ++j) {
          const T dh = gr[j] * pgm[j];
          m1 += dh;
          m2 += dh * h[j];
        }
        m1 /= static_cast<T>(D);
        m2 /= static_cast<T>(D);
#pragma omp simd
        for (int64_t j = 0; j < D; ++j) dxr[j] += is * (gr[j] * pgm[j] - m1 - h[j] * m2);
      }
    });
    if (!param_grads) return;
    for (int64_t c = 1; c < chunks; ++c)
      for (int64_t j = 0; j < 2 * D; ++j) partial[static_cast<size_t>(j)] += partial[static_cast<size_t>(c * 2 * D + j)];
    if (gamma.requires_grad()) {
      T* pdg = gamma.node()->grad_ref().data();
      for (int64_t j = 0; j < D; ++j) pdg[j] += static_cast<T>(partial[static_cast<size_t>(j)]);
    }
    if (beta.requires_grad()) {
      T* pdb = beta.node()->grad_ref().data();
      for (int64_t j = 0; j < D; ++j) pdb[j] += static_cast<T>(partial[static_cast<size_t>(D + j)]);
    }
  });
}

template <class T>
Var<T> embedding(const Var<T>& table, const std::vector<int32_t>& ids, const std::vector<int64_t>& out_lead) {
  const Shape& ts = table.shape();
  if (ts.ndim < 2)
    throw ShapeError("embedding: the table must have rows (V,...) of at least one axis, got " + ts.str());
  const int64_t V = ts[0], D = table.size() / std::max<int64_t>(V, 1);
  int64_t lead = 1;
  for (int64_t v : out_lead) lead *= v;
  if (lead != static_cast<int64_t>(ids.size()))
    throw ShapeError("embedding: leading shape holds " + std::to_string(lead) + " ids but " +
                     std::to_string(ids.size()) + " were given");
  for (int32_t id : ids)
    if (id < 0 || id >= V)
      throw ValueError("embedding: id " + std::to_string(id) + " outside the table's " + std::to_string(V) + " rows");
  std::vector<int64_t> dims = out_lead;
  for (int k = 1; k < ts.ndim; ++k) dims.push_back(ts[k]);
  Array<T> out = Array<T>::uninitialized(Shape::of(dims));  // every row copied below
  const T* pt = table.value().data();
  parallel_for(lead, row_grain(D), [&](int64_t r) {
    std::copy(pt + ids[static_cast<size_t>(r)] * D, pt + (ids[static_cast<size_t>(r)] + 1) * D, out.data() + r * D);
  });
  return record_op<T>(std::move(out), {&table}, [table, ids, D](const Array<T>& g) {
    T* dt = table.node()->grad_ref().data();
    // Scatter-add: repeated ids would race under a parallel loop over rows, so the
    // threads split the columns instead (blocks of kColumns), each running all rows.
    // Each block reads one line per row of g, D apart; the line kAhead rows on is
    // prefetched, and the block's adds are one vector (the table and g never overlap).
    constexpr int64_t kColumns = 16, kAhead = 8;
    const int64_t blocks = (D + kColumns - 1) / kColumns, rows = static_cast<int64_t>(ids.size());
    parallel_for(blocks, grain_for(rows * kColumns), [&](int64_t blk) {
      const int64_t j0 = blk * kColumns, width = std::min(D, j0 + kColumns) - j0;
      for (int64_t r = 0; r < rows; ++r) {
        if (r + kAhead < rows) prefetch_lines(g.data() + (r + kAhead) * D + j0, width);
        T* __restrict row = dt + ids[static_cast<size_t>(r)] * D + j0;
        const T* __restrict gr = g.data() + r * D + j0;
#pragma omp simd
        for (int64_t j = 0; j < width; ++j) row[j] += gr[j];
      }
    });
  });
}

template <class T>
Var<T> modrelu(const Var<T>& z, const Var<T>& b) {
  const int64_t D = z.shape().cols(), R = z.size() / std::max<int64_t>(D, 1);
  if (b.size() != D)
    throw ShapeError("modrelu: bias " + b.shape().str() + " must have the last-axis size of z " + z.shape().str());
  Array<T> out = Array<T>::uninitialized(z.shape());  // every element written below
  const T* pz = z.value().data();
  const T* pb = b.value().data();
  parallel_for(R, row_grain(D), [&](int64_t r) {
    for (int64_t j = 0; j < D; ++j) {
      const T v = pz[r * D + j], m = std::abs(v) + pb[j];
      out[r * D + j] = m > T(0) ? (v >= T(0) ? m : -m) : T(0);
    }
  });
  // d out / dz = 1 and d out / db = sign(z) where |z| + b > 0, else both 0.
  return record_op<T>(std::move(out), {&z, &b}, [z, b, R, D](const Array<T>& g) {
    const T* pz2 = z.value().data();
    const T* pb2 = b.value().data();
    T* dz = z.requires_grad() ? z.node()->grad_ref().data() : nullptr;
    std::vector<double> db(static_cast<size_t>(D), 0.0);
    for (int64_t r = 0; r < R; ++r)
      for (int64_t j = 0; j < D; ++j) {
        const T v = pz2[r * D + j];
        if (std::abs(v) + pb2[j] <= T(0)) continue;
        if (dz) dz[r * D + j] += g[r * D + j];
        db[static_cast<size_t>(j)] += v >= T(0) ? g[r * D + j] : -g[r * D + j];
      }
    if (b.requires_grad()) {
      T* pdb = b.node()->grad_ref().data();
      for (int64_t j = 0; j < D; ++j) pdb[j] += static_cast<T>(db[static_cast<size_t>(j)]);
    }
  });
}

template <class T>
Var<T> dropout(const Var<T>& x, double p, Rng& rng) {
  if (p < 0 || p >= 1) throw ValueError("dropout: probability must be in [0, 1), got " + std::to_string(p));
  if (p == 0) return x;
  auto mask = std::make_shared<Array<T>>(Array<T>::uninitialized(x.shape()));  // both written in full below
  const T keep_scale = static_cast<T>(1.0 / (1.0 - p));
  std::vector<uint8_t> keep(static_cast<size_t>(x.size()));
  rng.draw_keep_mask(p, keep.data(), x.size());
  for (int64_t i = 0; i < mask->size(); ++i) (*mask)[i] = keep[static_cast<size_t>(i)] ? keep_scale : T(0);
  Array<T> out = Array<T>::uninitialized(x.shape());
  for (int64_t i = 0; i < out.size(); ++i) out[i] = x.value()[i] * (*mask)[i];
  return record_op<T>(std::move(out), {&x}, [x, mask](const Array<T>& g) {
    T* dx = x.node()->grad_ref().data();
    for (int64_t i = 0; i < g.size(); ++i) dx[i] += g[i] * (*mask)[i];
  });
}

#define LIEGRAD_INSTANTIATE(T)                                                                     \
  template Var<T> softmax(const Var<T>&);                                                          \
  template Var<T> log_softmax(const Var<T>&);                                                      \
  template Var<T> cross_entropy(const Var<T>&, const std::vector<int32_t>&);                       \
  template std::vector<double> row_nll(const Array<T>&, const std::vector<int32_t>&);              \
  template Var<T> layer_norm(const Var<T>&, const Var<T>&, const Var<T>&, T);                      \
  template Var<T> embedding(const Var<T>&, const std::vector<int32_t>&, const std::vector<int64_t>&); \
  template Var<T> modrelu(const Var<T>&, const Var<T>&);                                         \
  template Var<T> dropout(const Var<T>&, double, Rng&);
LIEGRAD_INSTANTIATE(float)
LIEGRAD_INSTANTIATE(double)
#undef LIEGRAD_INSTANTIATE

}  // namespace liegrad::ag
