// Kernel pair and wrapper for causal_attention_scores (see attention.hpp).
#include "autograd/attention.hpp"

#include <cmath>
#include <limits>

#include "autograd/tape.hpp"
#include "core/parallel.hpp"

namespace liegrad::ag {

std::vector<double> alibi_slopes(int heads) {
  std::vector<double> s(static_cast<size_t>(heads));
  for (int k = 0; k < heads; ++k) s[static_cast<size_t>(k)] = std::pow(2.0, -8.0 * (k + 1) / heads);
  return s;
}

namespace {

// out (B*h,T,T) from S (B or B*h, T,T).
template <class T>
void scores_forward(Array<T>& out, const Array<T>& S, const T* scale, const std::vector<T>& slopes, int h,
                    bool per_head) {
  const int64_t T_ = S.shape()[1];
  const int64_t BH = out.shape()[0];
  const T neg_inf = -std::numeric_limits<T>::infinity();
  parallel_for(BH, grain_for(T_ * T_), [&](int64_t bk) {
    const int64_t k = bk % h;
    const T* src = S.data() + (per_head ? bk : bk / h) * T_ * T_;
    T* dst = out.data() + bk * T_ * T_;
    const T sc = scale[k], sl = slopes.empty() ? T(0) : slopes[static_cast<size_t>(k)];
    for (int64_t i = 0; i < T_; ++i)
      for (int64_t j = 0; j < T_; ++j)
        dst[i * T_ + j] = j <= i ? sc * src[i * T_ + j] - sl * static_cast<T>(i - j) : neg_inf;
  });
}

// dS += scale[k] * g on the causal part; dscale[k] += sum g * S on it.
template <class T>
void scores_backward(T* dS, T* dscale, const Array<T>& g, const Array<T>& S, const T* scale, int h, bool per_head) {
  const int64_t T_ = S.shape()[1];
  const int64_t BH = g.shape()[0];
  if (dS) {
    // Shared S receives from h heads: loop over sources so each thread owns its output.
    const int64_t nsrc = S.shape()[0];
    parallel_for(nsrc, grain_for(T_ * T_), [&](int64_t src) {
      const int64_t k0 = per_head ? src % h : 0, k1 = per_head ? k0 + 1 : h;
      T* d = dS + src * T_ * T_;
      for (int64_t k = k0; k < k1; ++k) {
        const int64_t bk = per_head ? src : src * h + k;
        const T* gg = g.data() + bk * T_ * T_;
        for (int64_t i = 0; i < T_; ++i)
          for (int64_t j = 0; j <= i; ++j) d[i * T_ + j] += scale[k] * gg[i * T_ + j];
      }
    });
  }
  if (dscale) {
    std::vector<double> acc(static_cast<size_t>(h), 0.0);
    for (int64_t bk = 0; bk < BH; ++bk) {
      const T* src = S.data() + (per_head ? bk : bk / h) * T_ * T_;
      const T* gg = g.data() + bk * T_ * T_;
      double s = 0;
      for (int64_t i = 0; i < T_; ++i)
        for (int64_t j = 0; j <= i; ++j) s += static_cast<double>(gg[i * T_ + j]) * src[i * T_ + j];
      acc[static_cast<size_t>(bk % h)] += s;
    }
    for (int k = 0; k < h; ++k) dscale[k] += static_cast<T>(acc[static_cast<size_t>(k)]);
  }
}

}  // namespace

template <class T>
Var<T> causal_attention_scores(const Var<T>& S, const Var<T>& scale, const std::vector<T>& slopes, int heads,
                               bool per_head) {
  const Shape& s = S.shape();
  if (heads < 1) throw ValueError("causal_attention_scores: heads must be >= 1, got " + std::to_string(heads));
  if (s.ndim != 3 || s[1] != s[2])
    throw ShapeError("causal_attention_scores: scores must be (B,T,T) or (B*h,T,T), got " + s.str());
  if (per_head && s[0] % heads != 0)
    throw ShapeError("causal_attention_scores: per-head scores " + s.str() + " need a leading size divisible by " +
                     std::to_string(heads) + " heads");
  if (scale.size() != heads)
    throw ShapeError("causal_attention_scores: scale " + scale.shape().str() + " must hold one value per head (" +
                     std::to_string(heads) + ")");
  if (!slopes.empty() && static_cast<int>(slopes.size()) != heads)
    throw ShapeError("causal_attention_scores: " + std::to_string(slopes.size()) + " slopes for " +
                     std::to_string(heads) + " heads");
  const int64_t BH = per_head ? s[0] : s[0] * heads;
  Array<T> out(Shape{BH, s[1], s[2]});
  scores_forward(out, S.value(), scale.value().data(), slopes, heads, per_head);
  return record_op<T>(std::move(out), {&S, &scale}, [S, scale, heads, per_head](const Array<T>& g) {
    scores_backward(S.requires_grad() ? S.node()->grad_ref().data() : nullptr,
                    scale.requires_grad() ? scale.node()->grad_ref().data() : nullptr, g, S.value(),
                    scale.value().data(), heads, per_head);
  });
}

namespace {
// Moves between (B,T,h,e) and (B,h,T,e) layouts; to_heads selects the direction.
// Each output element is written once, so the loop over B*h runs in parallel.
template <class T>
void permute_heads(const T* src, T* dst, int64_t B, int64_t T_, int64_t h, int64_t e, bool to_heads,
                   bool accumulate) {
  parallel_for(B * h, grain_for(T_ * e), [&](int64_t bk) {
    const int64_t b = bk / h, k = bk % h;
    for (int64_t t = 0; t < T_; ++t) {
      const int64_t flat = ((b * T_ + t) * h + k) * e;  // (B,T,h,e)
      const int64_t head = (bk * T_ + t) * e;           // (B*h,T,e)
      const T* s = src + (to_heads ? flat : head);
      T* d = dst + (to_heads ? head : flat);
      for (int64_t i = 0; i < e; ++i) d[i] = accumulate ? d[i] + s[i] : s[i];
    }
  });
}
}  // namespace

template <class T>
Var<T> split_heads(const Var<T>& x, int heads) {
  const Shape& s = x.shape();
  if (s.ndim != 3 || heads < 1 || s[2] % heads != 0)
    throw ShapeError("split_heads: expected (B,T,h*e) with h = " + std::to_string(heads) + ", got " + s.str());
  const int64_t B = s[0], T_ = s[1], e = s[2] / heads;
  Array<T> out(Shape{B * heads, T_, e});
  permute_heads(x.value().data(), out.data(), B, T_, heads, e, true, false);
  return record_op<T>(std::move(out), {&x}, [x, B, T_, heads, e](const Array<T>& g) {
    permute_heads(g.data(), x.node()->grad_ref().data(), B, T_, heads, e, false, true);
  });
}

template <class T>
Var<T> merge_heads(const Var<T>& x, int heads) {
  const Shape& s = x.shape();
  if (s.ndim != 3 || heads < 1 || s[0] % heads != 0)
    throw ShapeError("merge_heads: expected (B*h,T,e) with h = " + std::to_string(heads) + ", got " + s.str());
  const int64_t B = s[0] / heads, T_ = s[1], e = s[2];
  Array<T> out(Shape{B, T_, heads * e});
  permute_heads(x.value().data(), out.data(), B, T_, heads, e, false, false);
  return record_op<T>(std::move(out), {&x}, [x, B, T_, heads, e](const Array<T>& g) {
    permute_heads(g.data(), x.node()->grad_ref().data(), B, T_, heads, e, true, true);
  });
}

#define LIEGRAD_INSTANTIATE(T)                                                                              \
  template Var<T> causal_attention_scores(const Var<T>&, const Var<T>&, const std::vector<T>&, int, bool); \
  template Var<T> split_heads(const Var<T>&, int);                                                          \
  template Var<T> merge_heads(const Var<T>&, int);
LIEGRAD_INSTANTIATE(float)
LIEGRAD_INSTANTIATE(double)
#undef LIEGRAD_INSTANTIATE

}  // namespace liegrad::ag
