// The batched matrix exponential, its fast exact pullback and the `expm` tape op.
//
// Forward: scaling and squaring (Higham 2005) with polynomial approximants of exp,
//   exp(A) ~ P(2^-s A)^(2^s), the cheapest (P, s) with ||2^-s A||_1 <= theta_P, and on a
//   tie the fewer squarings (each squaring amplifies the rounding error),
// where theta_P is the largest norm at which P's backward error stays below the unit
// roundoff of the working precision, and P is one of
//   T_1, T_2, T_4, T_8, T_18: the optimized Taylor polynomials of Bader, Blanes & Casas
//     2019 ("Computing the matrix exponential with an optimized Taylor polynomial
//     approximation", Mathematics 7(12):1174), 0, 1, 2, 3, 5 products, with their
//     thetas (as PyTorch's linalg.matrix_exp, aten/src/ATen/native/LinearAlgebra.cpp);
//   15+: the degree-16 polynomial of Sastre, Ibanez & Defez 2019 ("Boosting the
//     computation of the matrix exponential", Appl. Math. Comput. 340:206-220) that
//     matches Taylor to degree 15 in 4 products. It replaces BBC's T_12 (4 products,
//     theta 1.46 in float, 0.30 in double; 15+: 2.35 and 0.68), and with squarings it
//     covers more at every cost: 4 + s products cover 2.35 2^s in float where T_18's
//     cover 1.51 2^s (0.68 2^s and 0.55 2^s in double). T_18 stays for the norms in
//     (theta_15+ 2^s, theta_18 2^s], s >= 0, where the two cost the same products and
//     T_18 squares once less.
// The thetas of 15+ are ours, from BBC's bound (the largest t with
// sum_k |h_k| t^(k-1) <= u, h(x) = log(e^-x P(x)), as an exact rational series):
// scripts/expm_thetas.py computes them and reproduces BBC's T_8, T_12, T_18 thetas.
//
// Pullback: once (m, s) are fixed the computed approximant F is a real polynomial
// sum_k c_k A^k, whose Frechet derivative L_F(A, E) = sum_k c_k sum_j A^j E A^(k-1-j)
// has the adjoint L_F(A)^*(G) = L_F(A^T, G) = L_F(A, G^T)^T (transpose the sum).
// We get L_F(A, G^T) by forward-mode differentiation of the very same straight-line
// program, as Al-Mohy & Higham 2009 do for Pade scaling and squaring: every product
// C = X Y also propagates dC = dX Y + X dY, every squaring Q <- Q^2 propagates
// dQ <- dQ Q + Q dQ. This is the exact derivative of the computed forward (same m and
// s, chosen from A), equal to L(A^T, G) (Mathias 1996's block formula, kept as the
// reference in expm_reference.cpp) to working precision. It costs 3 products per
// forward product (2 when the tape op replays cached forward products), all n x n.
//
// Shapes: A, Q, G, dA are (N, n, n) row-major batches. Every matrix of a batch is
// computed by the same code path, independently of its neighbours, with OpenMP over
// the batch for n <= 64 (small_gemm) and a serial loop over BLAS gemm above.
#include "groups/expm.hpp"
#include "groups/expm_kernel.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <type_traits>
#include <memory>
#include <vector>

#include "autograd/tape.hpp"
#include "core/errors.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"
#include "core/profile.hpp"
#include "core/simd.hpp"
#include "core/small_gemm.hpp"

namespace liegrad::groups {

namespace {

// ---------------------------------------------------------------------------
// Degree selection

constexpr int kNumDegrees = 6;
constexpr int64_t kMaxSmallSide = 64;  // stack buffers of the per-matrix helpers below
constexpr std::array<int, kNumDegrees> kProducts = {0, 1, 2, 3, 4, 5};  // of T_1 .. T_18

// Largest ||A||_1 for which T_1, T_2, T_4, T_8, 15+, T_18 reach the unit roundoff
// (BBC 2019, as PyTorch's thetas_double and thetas_float; 15+ computed as in the head
// comment, from its coefficients with the Taylor coefficients 1/k! for k <= 15).
template <class T>
constexpr std::array<double, kNumDegrees> kTheta = {2.220446049250313e-16, 2.580956802971767e-08,
                                                    3.397168839976962e-04, 4.991228871115323e-02,
                                                    6.764217495424514e-01, 1.090863719290036e+00};
template <>
constexpr std::array<double, kNumDegrees> kTheta<float> = {1.192092800768788e-07, 5.978858893805233e-04,
                                                           5.116619363445086e-02, 5.800524627688768e-01,
                                                           2.346206912756923e+00, 3.010066362817634e+00};


#if LIEGRAD_SIMD
// GCC 12's reduction intrinsics, inlined here, trip -Wmaybe-uninitialized on their own
// undefined-vector idiom (core/simd.hpp silences it only where they are defined).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// norm1 below for float and n <= NV kLanes: the column sums stay in NV registers, each
// summed over the rows in order as in the scalar loop (the same plan, bit for bit). It
// was a store-to-load chain through col[] plus a scalar pass, two products' time for
// the two norms of every plan. With `squares` it also returns sum of squares of the
// entries (for paired_spectrum_bound) from the same loads, in float lanes, even and odd
// rows in separate registers so that two FMA chains of n/2 run side by side; their
// rounding, at most n u of the sum, is of the order of A^2's own, which the plan accepts
// (it bounds from the rounded A^2); past entries of about 1e19 they overflow to inf, and
// the plan's min() then takes the 1-norm bound. A separate pass in double with one
// accumulator chain (n^2/8 dependent FMAs) cost about as much as the plan's product.
template <int NV>
double norm1_registers(int64_t n, const float* A, double* squares = nullptr) {
  using namespace simd;
  const Mask last = tail_mask(n - (NV - 1) * kLanes);
  V col[NV], even[NV], odd[NV];
  for (int v = 0; v < NV; ++v) col[v] = even[v] = odd[v] = zero();
  auto row_at = [&](int64_t i, V* sq) {
    const float* row = A + i * n;
    for (int v = 0; v < NV; ++v) {
      const V x = v + 1 < NV ? load(row + v * kLanes) : load(last, row + v * kLanes);
      col[v] = add(col[v], abs(x));
      if (squares) sq[v] = fmadd(x, x, sq[v]);
    }
  };
  int64_t i = 0;
  for (; i + 1 < n; i += 2) {
    row_at(i, even);
    row_at(i + 1, odd);
  }
  if (i < n) row_at(i, even);
  V best = col[0];  // masked lanes hold 0, which no column sum is below
  bool nan = any_nan(col[0]);
  for (int v = 1; v < NV; ++v) {
    nan = nan || any_nan(col[v]);
    best = max(best, col[v]);
  }
  if (squares) {
    double sum = 0;
    for (int v = 0; v < NV; ++v) sum += static_cast<double>(reduce_add(add(even[v], odd[v])));
    *squares = sum;
  }
  return nan ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(reduce_max(best));
}
#pragma GCC diagnostic pop
#endif

// Max column sum of |A|, A (n, n), row by row so the inner loop is contiguous; NaN if
// any entry is NaN. With `squares`, also the sum of squares of A's entries there.
template <class T>
double norm1(int64_t n, const T* A, double* squares = nullptr) {
#if LIEGRAD_SIMD
  if constexpr (std::is_same_v<T, float>) {
    switch ((n + simd::kLanes - 1) / simd::kLanes) {
      case 1: return norm1_registers<1>(n, A, squares);
      case 2: return norm1_registers<2>(n, A, squares);
      case 3: return norm1_registers<3>(n, A, squares);
      case 4: return norm1_registers<4>(n, A, squares);
      default: break;
    }
  }
#endif
  if (squares) {
    double sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n * n; ++i) sum += static_cast<double>(A[i]) * static_cast<double>(A[i]);
    *squares = sum;
  }
  T col[kMaxSmallSide];
  if (n > kMaxSmallSide) {  // large matrices: column by column
    double best = 0;
    for (int64_t j = 0; j < n; ++j) {
      double c = 0;
      for (int64_t i = 0; i < n; ++i) c += std::abs(static_cast<double>(A[i * n + j]));
      if (std::isnan(c)) return c;
      best = std::max(best, c);
    }
    return best;
  }
  std::fill(col, col + n, T(0));
  for (int64_t i = 0; i < n; ++i) {
    const T* row = A + i * n;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) col[j] += std::abs(row[j]);
  }
  double best = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (std::isnan(col[j])) return static_cast<double>(col[j]);
    best = std::max(best, static_cast<double>(col[j]));
  }
  return best;
}

// An upper bound on the largest eigenvalue of M = -A^2 (a2 = A^2, n x n) for a real
// skew A, from two numbers a single pass over a2 gives. The eigenvalues of A are
// +-i sigma_j, so M is symmetric positive semidefinite with each mu_j = sigma_j^2 twice
// (plus one 0 when n is odd): over the k = n/2 values mu_j, sum = tr(M)/2 and sum of
// squares = ||M||_F^2/2. Samuelson's inequality (Samuelson 1968, "How deviant can you
// be?", J. Amer. Statist. Assoc. 63:1522) bounds the largest of k numbers by their mean
// plus sqrt(k-1) times their standard deviation: exact when one mu_j dominates (a rank-2
// exponent) and when all are equal, and never above sqrt(sum of squares). `squares` is
// ||A^2||_F^2 (norm1 computes it in the pass it makes over A^2 anyway).
template <class T>
double paired_spectrum_bound(int64_t n, const T* a2, double squares) {
  const int64_t k = n / 2;
  if (k == 0) return 0;
  double trace = 0;
  for (int64_t i = 0; i < n; ++i) trace -= static_cast<double>(a2[i * n + i]);
  const double mean = trace / 2 / static_cast<double>(k);
  const double mean_square = squares / 2 / static_cast<double>(k);
  const double variance = std::max(0.0, mean_square - mean * mean);
  return mean + std::sqrt(static_cast<double>(k - 1) * variance);
}

// The fewest squarings s >= 0 with norm <= theta 2^s. Doubling is exact in floating
// point, so this is the exact smallest s (and stops at 1025 or so for a finite norm near
// DBL_MAX, where theta 2^s overflows to infinity); a difference of logarithms,
// ceil(log2 norm - log2 theta), cost four log2 calls per plan, about a product's time at
// n = 16, and can be one off where norm / theta is a power of two.
inline int squarings_for(double norm, double theta) {
  int s = 0;
  for (double covered = theta; norm > covered; covered *= 2) ++s;
  return s;
}

// The cheapest plan whose threshold covers `norm`: without squaring the first degree
// whose theta does, else 15+ or T_18 with the squarings each needs, the fewer products
// and on a tie the fewer squarings (each squaring amplifies the rounding error): T_18
// with s squarings for norms in (theta_15+ 2^s, theta_18 2^s], 15+ with s otherwise. A
// non-finite norm takes T_18 without squaring, so NaN and Inf propagate to the result.
template <class T>
ExpmPlan choose_plan(double norm) {
  const auto& theta = kTheta<T>;
  for (int d = 0; d < kNumDegrees; ++d)
    if (norm <= theta[static_cast<size_t>(d)]) return {d, 0};
  if (!std::isfinite(norm)) return {kNumDegrees - 1, 0};
  auto with_squarings = [&](int d) { return ExpmPlan{d, squarings_for(norm, theta[static_cast<size_t>(d)])}; };
  const ExpmPlan sastre = with_squarings(kNumDegrees - 2), taylor18 = with_squarings(kNumDegrees - 1);
  return sastre.products() < taylor18.products() ? sastre : taylor18;  // on a tie T_18 squares less
}

// ---------------------------------------------------------------------------
// A straight-line program over n x n registers, run in one of three modes:
//   forward:  values only, optionally recording every product but the last in a cache;
//   tangent:  values and tangents (forward-mode derivative) from scratch;
//   replay:   tangents, with the products' values read back from a forward's cache.
// In the tangent modes a value nobody will read again (after the last product) is
// not computed, unless the caller asks for the result's value too (keep_all_values).

// The n x n identity's entries for n <= kEyeMax (null above), built once per type. The
// linear combinations add their identity term inside their vector pass, where the
// diagonal is one lane of a row: a scalar `+=` on each diagonal entry after the pass
// stored into rows the pass had just written as vectors, and the next product's vector
// loads of those rows then waited for both stores (a failed store-to-load forward; in
// `perf annotate`, half of combine's samples sat on its stores). They add c * eye[i], one
// FMA per vector (c * 1 is exact, so the diagonal gets the same sum as acc + c; off it,
// acc + 0, which only turns a -0 into +0); a select on eye[i] != 0 compiled to two
// loads of the pattern, two compares, a masked add and a blend.
constexpr int64_t kEyeMax = 32;
template <class T>
const T* identity_pattern(int64_t n) {
  static const std::vector<std::vector<T>> eyes = [] {
    std::vector<std::vector<T>> e(static_cast<size_t>(kEyeMax + 1));
    for (int64_t k = 1; k <= kEyeMax; ++k) {
      e[static_cast<size_t>(k)].assign(static_cast<size_t>(k * k), T(0));
      for (int64_t i = 0; i < k; ++i) e[static_cast<size_t>(k)][static_cast<size_t>(i * k + i)] = T(1);
    }
    return e;
  }();
  return n >= 1 && n <= kEyeMax ? eyes[static_cast<size_t>(n)].data() : nullptr;
}

enum Reg : int { kX, kX2, kX3, kX6, kT0, kT1, kT2, kT3, kT4, kT5, kT6, kT7, kT8, kP, kSqA, kSqB, kNumRegs };

struct Term {
  double c;
  int reg;
};

template <class T>
class Program {
 public:
  // values, tangents: (kNumRegs, n, n) scratch (tangents null in forward mode);
  // cache: (products - 1, n, n) product outputs, recorded (forward mode) or read back
  // (tangent mode), or null.
  Program(int64_t n, bool use_blas, int total_products, T* values, T* tangents, T* cache)
      : n_(n),
        n2_(n * n),
        use_blas_(use_blas),
        eye_(identity_pattern<T>(n)),
        dense_(std::is_same_v<T, float> && !use_blas ? dense_product_for(n, false, false) : nullptr),
        total_(total_products),
        values_(values),
        tangents_(tangents),
        cache_(cache),
        replay_(tangents && cache) {
    val_.fill(nullptr);
    val_[kX] = slot(kX);
  }

  T* slot(int r) const { return r == placed_reg_ ? placed_ : values_ + r * n2_; }
  // Register r lives at `at` (n,n) instead of in the scratch: the forward's result
  // register placed on the caller's output saves a copy per exponential (2-3% of an
  // OSM-RNN step).
  void place(int r, T* at) {
    placed_reg_ = r;
    placed_ = at;
    if (r == kX) val_[kX] = at;
  }
  // The same for a tangent register (the tangent program's result on its output).
  void place_tangent(int r, T* at) {
    placed_tangent_reg_ = r;
    placed_tangent_ = at;
  }
  T* tangent(int r) const {
    if (r == kX && tangent_x_) return tangent_x_;
    return r == placed_tangent_reg_ ? placed_tangent_ : tangents_ + r * n2_;
  }
  // X and, when dx is not null, its tangent read where they are, not copied into the
  // scratch (the program never writes them): for plans without squarings X = A, and a
  // tangent direction E needs no scaling either.
  void alias_x(const T* x, const T* dx) {
    val_[kX] = const_cast<T*>(x);
    tangent_x_ = const_cast<T*>(dx);
  }
  // In the tangent modes, computes the values after the last product too, so that the
  // result register holds exp(A) beside its tangent (expm_one_tangent_with_value).
  void keep_all_values() { all_values_ = true; }
  const T* value(int r) const { return val_[static_cast<size_t>(r)]; }

  // R[d] = R[a] R[b]
  void mul(int d, int a, int b) {
    const bool last = done_ + 1 == total_;
    T* out = (cache_ && !last) ? cache_ + done_ * n2_ : slot(d);
    const bool needed = !tangents_ || all_values_ || !last;
    if (needed && (!replay_ || last)) product(value(a), value(b), out, false);
    val_[static_cast<size_t>(d)] = needed ? out : nullptr;
    if (tangents_) {
      product(tangent(a), value(b), tangent(d), false);
      product(value(a), tangent(b), tangent(d), true);
    }
    ++done_;
  }

  // Gives X^2 a known value: the plan computed A^2 (groups/expm_kernel.hpp), and
  // X^2 = 4^-s A^2, so the first product of every Taylor scheme need not run again.
  void set_known_square(const T* a2, T scale) {
    known_a2_ = a2;
    known_scale_ = scale;
  }

  // R[d] = X X: the known square when there is one (a copy standing in for the product,
  // cached like one; its tangent is still dX X + X dX), else the product.
  void square_x(int d) {
    if (!known_a2_) return mul(d, kX, kX);
    const bool last = done_ + 1 == total_;
    const bool to_cache = cache_ && !last;
    T* out = to_cache ? cache_ + done_ * n2_ : slot(d);
    const bool needed = !tangents_ || all_values_ || !last;
    if (needed && (!replay_ || last)) {
      if (known_scale_ == T(1) && !to_cache) {
        out = const_cast<T*>(known_a2_);  // no squarings: X^2 = A^2, read in place
      } else {
#pragma omp simd
        for (int64_t i = 0; i < n2_; ++i) out[i] = known_scale_ * known_a2_[i];
      }
    }
    val_[static_cast<size_t>(d)] = needed ? out : nullptr;
    if (tangents_) {
      product(tangent(kX), value(kX), tangent(d), false);
      product(value(kX), tangent(kX), tangent(d), true);
    }
    ++done_;
  }

  // R[d0 + c] = coef[c][0] I + sum_s coef[c][s + 1] R[src[s]] for c < C, in one pass over
  // the sources (the coefficient blocks B_i of T_18 all read the same powers of X, and
  // the two factors of each of 15+'s last two products the same registers). Zero coefficients are multiplied, not skipped: the same values for
  // finite X, and a non-finite X gives a non-finite result either way.
  template <int S, int C>
  void lin_block(int d0, const double (&coef)[C][S + 1], const int (&src)[S]) {
    combine_block<0, S, C>(-1, nullptr, nullptr, d0, coef, src);
  }

  // lin_block whose first source is computed in the same pass: R[dh] = sum_h hc[h]
  // R[hsrc[h]] (no identity term), stored, and used as src[0] (which must be dh) from
  // the register that formed it. 15+ forms y1 and then its last product's two factors
  // from y1: one pass over n^2 instead of two (the 15+ forward at d = 16 8% faster from
  // cache, its tangent 7%). The sums are the same; GCC may contract y1's products into
  // FMAs differently from lin's pass, so y1 can differ in its last bit.
  template <int H, int S, int C>
  void lin_then_block(int dh, const double (&hc)[H], const int (&hsrc)[H], int d0, const double (&coef)[C][S + 1],
                      const int (&src)[S]) {
    if (src[0] != dh)
      throw ValueError("expm program: lin_then_block's first source must be its head register " + std::to_string(dh) +
                       ", got " + std::to_string(src[0]));
    combine_block<H, S, C>(dh, hc, hsrc, d0, coef, src);
  }

 private:
  // The pass of lin_block and lin_then_block (H head terms hc, hsrc (H); H = 0: no head,
  // and both null).
  template <int H, int S, int C>
  void combine_block(int dh, const double* hc, const int* hsrc, int d0, const double (&coef)[C][S + 1],
                     const int (&src)[S]) {
    T cf[C][S + 1], hcf[H + 1];
    for (int c = 0; c < C; ++c)
      for (int k = 0; k <= S; ++k) cf[c][k] = static_cast<T>(coef[c][k]);
    for (int h = 0; h < H; ++h) hcf[h] = static_cast<T>(hc[h]);
    // WithId: the values, which add coef[c][0] on the diagonal (after the sum, as a
    // separate addition); the tangents have no identity term.
    auto pass = [&](auto get, T* head, T* const* out, auto with_id) {
      constexpr bool WithId = decltype(with_id)::value;
      const T* x[S];
      const T* y[H + 1];
      for (int k = H > 0 ? 1 : 0; k < S; ++k) x[k] = get(src[k]);
      for (int h = 0; h < H; ++h) y[h] = get(hsrc[h]);
      const T* eye = eye_;
#pragma omp simd
      for (int64_t i = 0; i < n2_; ++i) {
        T v[S];
        if constexpr (H > 0) {
          T acc = hcf[0] * y[0][i];
#pragma GCC unroll 4
          for (int h = 1; h < H; ++h) acc += hcf[h] * y[h][i];  // no identity term
          head[i] = acc;
          v[0] = acc;
        } else {
          v[0] = x[0][i];
        }
#pragma GCC unroll 5
        for (int k = 1; k < S; ++k) v[k] = x[k][i];
#pragma GCC unroll 5
        for (int c = 0; c < C; ++c) {
          T acc = cf[c][1] * v[0];
#pragma GCC unroll 5
          for (int k = 1; k < S; ++k) acc += cf[c][k + 1] * v[k];
          if constexpr (WithId) {
            acc += cf[c][0] * eye[i];  // + c_0 on the diagonal, + 0 elsewhere
          }
          out[c][i] = acc;
        }
      }
    };
    T* outs[C];
    if (!tangents_ || all_values_ || done_ < total_) {
      for (int c = 0; c < C; ++c) outs[c] = slot(d0 + c);
      T* head = H > 0 ? slot(dh) : nullptr;
      auto values = [this](int r) { return value(r); };
      if (eye_) {
        pass(values, head, outs, std::true_type{});
      } else {
        pass(values, head, outs, std::false_type{});
        for (int c = 0; c < C; ++c)
          for (int64_t i = 0; i < n_; ++i) outs[c][i * n_ + i] += cf[c][0];
      }
      if (H > 0) val_[static_cast<size_t>(dh)] = head;
      for (int c = 0; c < C; ++c) val_[static_cast<size_t>(d0 + c)] = outs[c];
    } else {
      if (H > 0) val_[static_cast<size_t>(dh)] = nullptr;
      for (int c = 0; c < C; ++c) val_[static_cast<size_t>(d0 + c)] = nullptr;
    }
    if (tangents_) {
      for (int c = 0; c < C; ++c) outs[c] = tangent(d0 + c);
      pass([this](int r) { return tangent(r); }, H > 0 ? tangent(dh) : nullptr, outs, std::false_type{});
    }
  }

 public:
  // R[d] = c_id I + sum c R[reg]
  void lin(int d, double c_id, std::initializer_list<Term> terms) {
    if (!tangents_ || all_values_ || done_ < total_) {
      T* out = slot(d);
      auto values = [this](int r) { return value(r); };
      if (eye_) {
        combine<true>(out, terms, values, static_cast<T>(c_id));
      } else {
        combine<false>(out, terms, values);
        for (int64_t i = 0; i < n_; ++i) out[i * n_ + i] += static_cast<T>(c_id);
      }
      val_[static_cast<size_t>(d)] = out;
    } else {
      val_[static_cast<size_t>(d)] = nullptr;
    }
    if (tangents_) combine<false>(tangent(d), terms, [this](int r) { return tangent(r); });
  }

 private:
  // C (+)= X Y, all (n, n); BLAS only outside parallel regions.
  void product(const T* x, const T* y, T* c, bool accumulate) const {
    const T beta = accumulate ? T(1) : T(0);
    if constexpr (std::is_same_v<T, float>) {
      if (dense_) return dense_(x, y, c, n_, 1.0f, beta);
    }
    if (use_blas_)
      gemm(false, false, n_, n_, n_, T(1), x, n_, y, n_, beta, c, n_);
    else
      small_gemm(false, false, n_, n_, n_, T(1), x, y, beta, c);
  }

  // out = sum c get(reg) over the nonzero terms, in one vectorised pass; WithId then adds
  // c_id to each diagonal entry (eye_ marks them), as a separate addition after the sum.
  template <bool WithId, class Get>
  void combine(T* out, std::initializer_list<Term> terms, Get get, T c_id = T(0)) const {
    const T* src[5] = {};
    T c[5] = {};
    int k = 0;
    for (const Term& t : terms) {
      if (t.c == 0) continue;
      src[k] = get(t.reg);
      c[k++] = static_cast<T>(t.c);
    }
    const int64_t len = n2_;
    const T* eye = eye_;
    auto put = [&](int64_t i, T v) {
      if constexpr (WithId) {
        v += c_id * eye[i];  // + c_id on the diagonal, + 0 elsewhere
      }
      out[i] = v;
    };
    switch (k) {
      case 0:
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) put(i, T(0));
        break;
      case 1:
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) put(i, c[0] * src[0][i]);
        break;
      case 2:
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) put(i, c[0] * src[0][i] + c[1] * src[1][i]);
        break;
      case 3:
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) put(i, c[0] * src[0][i] + c[1] * src[1][i] + c[2] * src[2][i]);
        break;
      default:
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) {
          T acc = c[0] * src[0][i] + c[1] * src[1][i] + c[2] * src[2][i] + c[3] * src[3][i];
          if (k == 5) acc += c[4] * src[4][i];
          put(i, acc);
        }
        break;
    }
  }

  int64_t n_, n2_;
  bool use_blas_;
  const T* eye_;  // identity_pattern(n), or null
  // float without BLAS: sgemm_small's n x n kernel, called directly (dense_product_for):
  // an exponential runs 3-20 products of one size, and the calls through small_gemm and
  // sgemm_small's checks and size switch cost a few ns each. Null otherwise.
  DenseProductFn dense_;
  int total_;
  T* values_;
  T* tangents_;
  T* cache_;
  bool replay_;
  bool all_values_ = false;  // see keep_all_values()
  int done_ = 0;  // products run so far
  std::array<T*, kNumRegs> val_{};
  const T* known_a2_ = nullptr;  // A^2 (n,n), when the plan computed it
  T known_scale_ = 1;
  int placed_reg_ = -1;  // see place()
  T* placed_ = nullptr;
  int placed_tangent_reg_ = -1;  // see place_tangent()
  T* tangent_x_ = nullptr;        // see alias_x()
  T* placed_tangent_ = nullptr;
};

// ---------------------------------------------------------------------------
// The polynomial schemes on X in register kX, result in kP; `degree` indexes
// {T_1, T_2, T_4, T_8, 15+, T_18}.

// T_8 coefficients (BBC 2019), with sqrt(177) written out. Note x7's denominator
// 5040 x3^2: PyTorch's copy had 5040 x3 until pytorch/pytorch#196658 (2026), which
// leaves the degree-8 polynomial only 4th-order accurate. T_8, T_18 and 15+ (below) were
// checked to reproduce 1/k! for k <= m (15 for 15+) by expanding them as scalar
// polynomials; the nilpotent and rotation tests would catch a wrong coefficient.
constexpr double kSqrt177 = 13.30413469565007072504;
constexpr double kX3c = 2.0 / 3.0;
constexpr double kX1c = kX3c * (1.0 + kSqrt177) / 88.0;
constexpr double kX2c = kX3c * (1.0 + kSqrt177) / 352.0;
constexpr double kX4c = (-271.0 + 29.0 * kSqrt177) / (315.0 * kX3c);
constexpr double kX5c = (-11.0 + 11.0 * kSqrt177) / (1260.0 * kX3c);
constexpr double kX6c = (-99.0 + 11.0 * kSqrt177) / (5040.0 * kX3c);
constexpr double kX7c = (89.0 - kSqrt177) / (5040.0 * kX3c * kX3c);
constexpr double kY2c = (857.0 - 58.0 * kSqrt177) / 630.0;

// 15+ (Sastre, Ibanez & Defez 2019, eqs. (10)-(12), their coefficients c_1..c_14):
//   y0 = X^2 (c1 X^2 + c2 X)
//   y1 = (y0 + c3 X^2 + c4 X)(y0 + c5 X^2) + c6 y0 + c7 X^2
//   P  = (y1 + c8 X^2 + c9 X)(y1 + c10 y0 + c11 X) + c12 y1 + c13 y0 + c14 X^2 + X + I,
// a degree-16 polynomial with the Taylor coefficients 1/k! up to k = 15 (checked by
// expanding it as a scalar polynomial: every one to 4.5e-16 relative) and
// 0.5457 / 16! at k = 16 (scripts/expm_thetas.py repeats the check). kSastre16[k - 1] = c_k.
constexpr double kSastre16[14] = {4.018761610201036e-4,  2.945531440279683e-3, -8.709066576837676e-3,
                                  4.017568440673568e-1,  3.230762888122312e-2, 5.768988513026145e0,
                                  2.338576034271299e-2,  2.381070373870987e-1, 2.224209172496374e0,
                                  -5.792361707073261e0,  -4.130276365929783e-2, 1.040801735231354e1,
                                  -6.331712455883370e1, 3.484665863364574e-1};

// T_18: B_i = sum_j kB18[i][j] P_j with P = (I, X, X^2, X^3, X^6);
// X9 = B_3 + B_0 B_4; T_18 = B_1 + (B_2 + X9) X9.
constexpr double kB18[5][5] = {
    {0., -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.},
    {0., 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
     -6.37898194594723280150e-04},
    {-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02, -6.98210122488052056106e-03,
     3.34975017086070470649e-05},
    {-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02, 2.95552570429315521194e-02,
     -1.39180257516060693404e-05},
    {0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05}};

template <class T>
void taylor(Program<T>& p, int degree) {
  switch (degree) {
    case 0:  // I + X
      p.lin(kP, 1, {{1, kX}});
      break;
    case 1:  // I + X + X^2/2
      p.square_x(kX2);
      p.lin(kP, 1, {{1, kX}, {0.5, kX2}});
      break;
    case 2:  // I + X + X^2 (I/2 + X/6 + X^2/24)
      p.square_x(kX2);
      p.lin(kT0, 0.5, {{1.0 / 6, kX}, {1.0 / 24, kX2}});
      p.mul(kT1, kX2, kT0);
      p.lin(kP, 1, {{1, kX}, {1, kT1}});
      break;
    case 3:  // A4 = X^2 (x1 X + x2 X^2); A8 = (x3 X^2 + A4)(x4 I + x5 X + x6 X^2 + x7 A4)
      p.square_x(kX2);
      p.lin(kT0, 0, {{kX1c, kX}, {kX2c, kX2}});
      p.mul(kT1, kX2, kT0);
      {
        // The two factors of the next product in one pass over X, X^2 and A4 (lin_block;
        // each sums its terms in the order lin would, the zero term first).
        const double factors[2][4] = {{0, 0, kX3c, 1}, {kX4c, kX5c, kX6c, kX7c}};
        p.template lin_block<3, 2>(kT2, factors, {kX, kX2, kT1});
      }
      p.mul(kT4, kT2, kT3);
      p.lin(kP, 1, {{1, kX}, {kY2c, kX2}, {1, kT4}});
      break;
    case 4: {  // 15+
      const double* c = kSastre16;
      p.square_x(kX2);
      p.lin(kT0, 0, {{c[0], kX2}, {c[1], kX}});
      p.mul(kT1, kX2, kT0);  // y0
      // The two factors of each product in one pass over their common sources.
      const double y1_factors[2][4] = {{0, 1, c[2], c[3]}, {0, 1, c[4], 0}};
      p.template lin_block<3, 2>(kT2, y1_factors, {kT1, kX2, kX});
      p.mul(kT4, kT2, kT3);
      // y1 and the two factors of the last product, which both start from y1, in one pass.
      const double y1_terms[3] = {1, c[5], c[6]};
      const double p_factors[2][5] = {{0, 1, c[7], 0, c[8]}, {0, 1, 0, c[9], c[10]}};
      p.template lin_then_block<3, 4, 2>(kT5, y1_terms, {kT4, kT1, kX2}, kT6, p_factors, {kT5, kX2, kT1, kX});
      p.mul(kT8, kT6, kT7);
      p.lin(kP, 1, {{1, kT8}, {c[11], kT5}, {c[12], kT1}, {c[13], kX2}, {1, kX}});
      break;
    }
    default:
      p.square_x(kX2);
      p.mul(kX3, kX, kX2);
      p.mul(kX6, kX3, kX3);
      p.template lin_block<4, 5>(kT0, kB18, {kX, kX2, kX3, kX6});
      p.mul(kT5, kT0, kT4);
      p.lin(kT6, 0, {{1, kT3}, {1, kT5}});  // X9
      p.lin(kT7, 0, {{1, kT2}, {1, kT6}});
      p.mul(kT8, kT7, kT6);
      p.lin(kP, 0, {{1, kT1}, {1, kT8}});
      break;
  }
}

// The register run() below leaves the result in: kP, then the squarings alternate
// kSqA, kSqB, ... from it.
int result_register(const ExpmPlan& plan) {
  return plan.squarings == 0 ? kP : (plan.squarings % 2 == 1 ? kSqA : kSqB);
}

// T_m(X)^(2^s); returns the register holding the result (result_register(plan)).
template <class T>
int run(Program<T>& p, const ExpmPlan& plan) {
  taylor(p, plan.degree);
  int cur = kP;
  for (int k = 0; k < plan.squarings; ++k) {
    const int next = cur == kSqA ? kSqB : kSqA;
    p.mul(next, cur, cur);
    cur = next;
  }
  return cur;
}

// ---------------------------------------------------------------------------
// Planning one exponential

// out (n,n) = X^T.
template <class T>
void transpose_into(int64_t n, const T* x, T* out) {
  transpose_ld(n, n, x, n, out, n);
}

// Whether A = -A^T exactly: every exponent of an OSM model (so(n), and u(n), su(n) and
// tori in real form) is, bit for bit, since hat writes each coordinate and its negation.
// tmp: n^2 scratch.
template <class T>
bool is_skew(int64_t n, const T* A, T* tmp) {
  transpose_into(n, A, tmp);
  int mismatches = 0;
#pragma omp simd reduction(+ : mismatches)
  for (int64_t i = 0; i < n * n; ++i) mismatches += A[i] != -tmp[i];
  return mismatches == 0;
}

// C (n,n) = X Y; BLAS only outside parallel regions.
template <class T>
void product(int64_t n, const T* X, const T* Y, T* C, bool use_blas) {
  if (use_blas)
    gemm(false, false, n, n, n, T(1), X, n, Y, n, T(0), C, n);
  else
    small_gemm(false, false, n, n, n, T(1), X, Y, T(0), C);
}

// The plan of exp(A) (n,n): from ||A||_1, or, for skew-symmetric A, from a sharper bound
// on ||A||_2. A skew A is normal, so ||A^k||_2 = ||A||_2^k for every k, and the BBC
// backward-error bound sum_k |c_k| ||A^k|| holds with ||A||_2 in place of ||A||_1 (any
// bound on ||A^k||^(1/k) over the remainder's k will do: Al-Mohy & Higham 2009, SIAM J.
// Matrix Anal. Appl. 31(3), section 4). ||A||_2^2 is the largest eigenvalue of -A^2,
// bounded by the smaller of ||A^2||_1 (A^2 is symmetric) and paired_spectrum_bound. For
// a random skew 16 x 16 matrix ||A||_1 / ||A||_2 is about 2.5, one or two squarings
// fewer. Both bounds come from the rounded A^2, as the 1-norm plan comes from the stored
// A. The A^2 computed for the bound is left in a2 (n,n) and *has_a2 set, for the
// program's first product (a2 is scratch otherwise).
// known_skew: the caller vouches that A is skew (ExponentKind::Skew), so the check is skipped.
template <class T>
ExpmPlan plan_of(int64_t n, const T* A, T* a2, bool use_blas, bool* has_a2, bool known_skew = false) {
  *has_a2 = false;
  const double norm = norm1(n, A);
  // T_1 needs no bound sharper than the 1-norm; choose_plan is monotone in the norm, so
  // the plan of the smaller bound is the cheaper one, and one call makes it.
  if (norm <= kTheta<T>[0] || !std::isfinite(norm) || !(known_skew || is_skew(n, A, a2))) return choose_plan<T>(norm);
  product(n, A, A, a2, use_blas);
  *has_a2 = true;
  double squares = 0;
  const double norm_a2 = norm1(n, a2, &squares);
  const double bound = std::sqrt(std::min(norm_a2, paired_spectrum_bound<T>(n, a2, squares)));
  return choose_plan<T>(bound < norm ? bound : norm);
}

// ---------------------------------------------------------------------------
// One exponential and its pullback. Scratch: (kNumRegs + 1) n^2 for the forward,
// (2 kNumRegs + 1) n^2 for the pullback; the last n^2 hold A^2 when the plan made it.

// out = scale * X, X (n, n)
template <class T>
void scaled_copy(int64_t n, T scale, const T* x, T* out) {
#pragma omp simd
  for (int64_t i = 0; i < n * n; ++i) out[i] = scale * x[i];
}

// out = scale * X^T
template <class T>
void scaled_transpose(int64_t n, T scale, const T* x, T* out) {
  transpose_into(n, x, out);
#pragma omp simd
  for (int64_t i = 0; i < n * n; ++i) out[i] *= scale;
}

// Q = exp(A) by `plan`; a2 = A^2 or null; records the products in `cache` when not null.
template <class T>
void one_forward(int64_t n, const T* A, const ExpmPlan& plan, const T* a2, T* Q, T* scratch, T* cache, bool use_blas) {
  const int64_t n2 = n * n;
  Program<T> p(n, use_blas, plan.products(), scratch, nullptr, cache);
  const double scale = std::ldexp(1.0, -plan.squarings);
  if (plan.squarings == 0)
    p.alias_x(A, nullptr);
  else
    scaled_copy(n, static_cast<T>(scale), A, p.slot(kX));
  if (a2) p.set_known_square(a2, static_cast<T>(scale * scale));
  // Each step writes a register other than the ones it reads, so the result register
  // may live in Q. (A plan with no product but I + X leaves its result in kP too.)
  p.place(result_register(plan), Q);
  const T* r = p.value(run(p, plan));
  if (r != Q) std::copy(r, r + n2, Q);
}

// The tangent program of `plan` at A: direction(X) writes the scaled direction
// 2^-s E into X (n,n); returns the register that holds L_F(A, E), F the approximant of
// `plan`, replaying `cache` when given (else recomputing the values, with A^2 from a2).
// With no squarings the program reads A in place, and E at `unscaled` when that is not
// null; the caller passes unscaled only when neither A nor E overlaps an output.
template <class T, class Direction>
int run_tangent(Program<T>& p, int64_t n, const T* A, const ExpmPlan& plan, const T* a2, bool cached,
                Direction direction, const T* unscaled = nullptr) {
  const double scale = std::ldexp(1.0, -plan.squarings);
  if (plan.squarings == 0) {
    p.alias_x(A, unscaled);
  } else {
    scaled_copy(n, static_cast<T>(scale), A, p.slot(kX));
    unscaled = nullptr;
  }
  if (a2 && !cached) p.set_known_square(a2, static_cast<T>(scale * scale));
  if (!unscaled) direction(static_cast<T>(scale), p.tangent(kX));
  return run(p, plan);
}

// dA += L_F(A, G^T)^T: the tangent program in direction G^T, its result transposed.
template <class T>
void one_pullback(int64_t n, const T* A, const ExpmPlan& plan, const T* a2, const T* G, T* dA, T* scratch,
                  const T* cache, bool use_blas) {
  const int64_t n2 = n * n;
  Program<T> p(n, use_blas, plan.products(), scratch, scratch + kNumRegs * n2, const_cast<T*>(cache));
  const int r = run_tangent(p, n, A, plan, a2, cache != nullptr,
                            [&](T scale, T* x) { scaled_transpose(n, scale, G, x); });  // d(2^-s A) for G^T
  T* dt = p.tangent(r == kSqA ? kSqB : kSqA);  // a register the result is not in
  transpose_into(n, p.tangent(r), dt);
#pragma omp simd
  for (int64_t i = 0; i < n * n; ++i) dA[i] += dt[i];
}

// M = L_F(A, E), written: the tangent program in direction E, with no transposes; and
// Q = F(A) as one_forward computes it, when Q is not null.
template <class T>
void one_tangent(int64_t n, const T* A, const ExpmPlan& plan, const T* a2, const T* E, T* M, T* scratch,
                 const T* cache, bool use_blas, T* Q = nullptr) {
  const int64_t n2 = n * n;
  Program<T> p(n, use_blas, plan.products(), scratch, scratch + kNumRegs * n2, const_cast<T*>(cache));
  p.place_tangent(result_register(plan), M);  // as in one_forward: no copy at the end
  if (Q) {
    p.keep_all_values();
    p.place(result_register(plan), Q);
  }
  const int r =
      run_tangent(p, n, A, plan, a2, cache != nullptr, [&](T scale, T* x) { scaled_copy(n, scale, E, x); },
                  E != M && E != Q ? E : nullptr);
  const T* t = p.tangent(r);
  if (t != M) std::copy(t, t + n2, M);
  if (Q) {
    const T* v = p.value(r);
    if (v != Q) std::copy(v, v + n2, Q);
  }
}

// ---------------------------------------------------------------------------
// Batch drivers

// Products the forward keeps for a replayed backward: all but the last.
int cached_products(const ExpmPlan& p) { return std::max(0, p.products() - 1); }

std::atomic<int64_t> g_cache_budget{int64_t(256) << 20};

// Forward products of one expm call, kept for its backward pass (per matrix: the
// plan and cached_products(plan) matrices of n x n at offset[b]).
template <class T>
struct ExpmCache {
  bool valid = false;
  std::vector<ExpmPlan> plans;  // (N)
  std::vector<int64_t> offset;  // (N + 1)
  std::unique_ptr<T[]> data;    // (offset[N])
};

bool blas_ok(int64_t n) { return n > kSmallGemmMaxSide && !in_parallel_region(); }

// Runs body(b, scratch) for b < N, in parallel over the batch when the matrices take
// the small kernel and there is more than a few microseconds of work; each thread
// owns `scratch_size` elements of scratch.
template <class T, class F>
void for_each_matrix(int64_t N, int64_t n, int64_t scratch_size, F&& body) {
  // About 10 n^3 operations per matrix and exponential.
  const bool parallel = n <= kSmallGemmMaxSide && N > 1 && 20 * N * n * n * n >= kMinParallelFlops && !in_parallel_region();
#pragma omp parallel if (parallel)
  {
    std::vector<T> scratch(static_cast<size_t>(scratch_size));
#pragma omp for schedule(static)
    for (int64_t b = 0; b < N; ++b) body(b, scratch.data());
  }
}

// Q_b = exp(A_b); with a cache, also records the forward products (unless they would
// exceed the cache budget, in which case the cache stays invalid). Plans are made in a
// first pass, so the cache can be laid out before the products run.
template <class T>
void forward_impl(int64_t N, int64_t n, const T* A, T* Q, ExpmCache<T>* cache) {
  prof::Scope timed(prof::Family::ExpForward);
  const int64_t n2 = n * n;
  const bool use_blas = blas_ok(n);
  std::vector<ExpmPlan> plans(static_cast<size_t>(N));
  std::vector<T> squares(static_cast<size_t>(N * n2));  // A_b^2 where the plan made it
  for_each_matrix<T>(N, n, 0, [&](int64_t b, T*) {
    bool has_a2 = false;
    plans[static_cast<size_t>(b)] = plan_of(n, A + b * n2, squares.data() + b * n2, use_blas, &has_a2);
    plans[static_cast<size_t>(b)].known_square = has_a2;
  });
  if (prof::enabled()) {
    int64_t products = 0;
    for (const ExpmPlan& p : plans) products += p.products();
    prof::count(prof::Counter::Exponentials, N);
    prof::count(prof::Counter::ExpForwardProducts, products);
  }
  if (cache) {
    cache->offset.assign(static_cast<size_t>(N + 1), 0);
    for (int64_t b = 0; b < N; ++b)
      cache->offset[static_cast<size_t>(b + 1)] =
          cache->offset[static_cast<size_t>(b)] + cached_products(plans[static_cast<size_t>(b)]) * n2;
    const int64_t total = cache->offset.back();
    cache->valid = total * static_cast<int64_t>(sizeof(T)) <= g_cache_budget.load();
    if (cache->valid) {
      cache->data.reset(new T[static_cast<size_t>(total)]);
      cache->plans = plans;
    } else {
      cache = nullptr;
    }
  }
  for_each_matrix<T>(N, n, kNumRegs * n2, [&](int64_t b, T* scratch) {
    const ExpmPlan& plan = plans[static_cast<size_t>(b)];
    T* rec = cache ? cache->data.get() + cache->offset[static_cast<size_t>(b)] : nullptr;
    one_forward(n, A + b * n2, plan, plan.known_square ? squares.data() + b * n2 : nullptr, Q + b * n2, scratch, rec,
                use_blas);
  });
}

// dA_b += L_F(A_b, G_b^T)^T, F the forward's approximant; replays the cache if given.
template <class T>
void pullback_impl(int64_t N, int64_t n, const T* A, const T* G, T* dA, const ExpmCache<T>* cache) {
  prof::Scope timed(prof::Family::ExpPullback);
  const int64_t n2 = n * n;
  const bool use_blas = blas_ok(n);
  for_each_matrix<T>(N, n, (2 * kNumRegs + 1) * n2, [&](int64_t b, T* scratch) {
    T* a2 = scratch + 2 * kNumRegs * n2;
    bool has_a2 = false;
    const ExpmPlan plan = cache ? cache->plans[static_cast<size_t>(b)] : plan_of(n, A + b * n2, a2, use_blas, &has_a2);
    const T* rec = cache ? cache->data.get() + cache->offset[static_cast<size_t>(b)] : nullptr;
    one_pullback(n, A + b * n2, plan, has_a2 ? a2 : nullptr, G + b * n2, dA + b * n2, scratch, rec, use_blas);
  });
}

}  // namespace

void set_expm_cache_budget(int64_t bytes) {
  if (bytes < 0) throw ValueError("set_expm_cache_budget: budget must be >= 0 bytes, got " + std::to_string(bytes));
  g_cache_budget.store(bytes);
}

int ExpmPlan::products() const { return kProducts[static_cast<size_t>(degree)] + squarings; }

int64_t expm_forward_scratch(int64_t n) { return (kNumRegs + 1) * n * n; }
int64_t expm_pullback_scratch(int64_t n) { return (2 * kNumRegs + 1) * n * n; }
int64_t expm_cache_size(const ExpmPlan& plan, int64_t n) { return cached_products(plan) * n * n; }

template <class T>
ExpmPlan expm_plan(int64_t n, const T* A, T* scratch, ExponentKind kind) {
  bool has_a2 = false;
  ExpmPlan plan = plan_of(n, A, scratch + kNumRegs * n * n, false, &has_a2, kind == ExponentKind::Skew);
  plan.known_square = has_a2;
  return plan;
}

template <class T>
void expm_one_forward(int64_t n, const T* A, const ExpmPlan& plan, T* Q, T* scratch, T* cache) {
  one_forward(n, A, plan, plan.known_square ? scratch + kNumRegs * n * n : nullptr, Q, scratch, cache, false);
}

// For a tangent program without a cache: A^2 recomputed into the pullback scratch when
// the plan took it (plan.known_square; the plan is the forward's, not made again), else
// null; with a cache the values are replayed and A^2 unused.
template <class T>
const T* square_for_tangent(int64_t n, const T* A, const ExpmPlan& plan, T* scratch, const T* cache) {
  if (cache || !plan.known_square) return nullptr;
  T* a2 = scratch + 2 * kNumRegs * n * n;
  product(n, A, A, a2, false);
  return a2;
}

template <class T>
void expm_one_pullback(int64_t n, const T* A, const ExpmPlan& plan, const T* G, T* dA, T* scratch, const T* cache) {
  one_pullback(n, A, plan, square_for_tangent(n, A, plan, scratch, cache), G, dA, scratch, cache, false);
}

template <class T>
void expm_one_tangent(int64_t n, const T* A, const ExpmPlan& plan, const T* E, T* M, T* scratch, const T* cache) {
  one_tangent(n, A, plan, square_for_tangent(n, A, plan, scratch, cache), E, M, scratch, cache, false);
}

template <class T>
void expm_one_tangent_with_value(int64_t n, const T* A, const ExpmPlan& plan, const T* E, T* M, T* Q, T* scratch) {
  one_tangent(n, A, plan, square_for_tangent(n, A, plan, scratch, static_cast<const T*>(nullptr)), E, M, scratch,
              static_cast<const T*>(nullptr), false, Q);
}

template <class T>
void expm_forward(int64_t N, int64_t n, const T* A, T* Q) {
  forward_impl<T>(N, n, A, Q, nullptr);
}

template <class T>
void expm_pullback(int64_t N, int64_t n, const T* A, const T* G, T* dA) {
  pullback_impl<T>(N, n, A, G, dA, nullptr);
}

template <class T>
ag::Var<T> expm(const ag::Var<T>& A) {
  const Shape& s = A.shape();
  if ((s.ndim != 2 && s.ndim != 3) || s.rows() != s.cols())
    throw ShapeError("expm: expected a square matrix (n,n) or a batch of square matrices (N,n,n), got " + s.str());
  const int64_t N = s.batch(), n = s.cols();
  Array<T> Q(s);
  auto cache = std::make_shared<ExpmCache<T>>();
  const bool keep = A.requires_grad() && ag::grad_enabled();
  forward_impl(N, n, A.value().data(), Q.data(), keep ? cache.get() : nullptr);
  return ag::record_op<T>(std::move(Q), {&A}, [A, cache, N, n](const Array<T>& g) {
    pullback_impl(N, n, A.value().data(), g.data(), A.node()->grad_ref().data(), cache->valid ? cache.get() : nullptr);
  });
}

#define LIEGRAD_INSTANTIATE(T)                                              \
  template ExpmPlan expm_plan<T>(int64_t, const T*, T*, ExponentKind);      \
  template void expm_one_forward<T>(int64_t, const T*, const ExpmPlan&, T*, T*, T*); \
  template void expm_one_pullback<T>(int64_t, const T*, const ExpmPlan&, const T*, T*, T*, const T*); \
  template void expm_one_tangent<T>(int64_t, const T*, const ExpmPlan&, const T*, T*, T*, const T*); \
  template void expm_one_tangent_with_value<T>(int64_t, const T*, const ExpmPlan&, const T*, T*, T*, T*); \
  template void expm_forward<T>(int64_t, int64_t, const T*, T*);            \
  template void expm_pullback<T>(int64_t, int64_t, const T*, const T*, T*); \
  template ag::Var<T> expm<T>(const ag::Var<T>&);
LIEGRAD_INSTANTIATE(float)
LIEGRAD_INSTANTIATE(double)
#undef LIEGRAD_INSTANTIATE

}  // namespace liegrad::groups
