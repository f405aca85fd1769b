// Tests of the float kernels behind the fast paths: the register-blocked small product
// (every transpose, odd sizes, row strides, alpha/beta, untouched padding), the split
// gemm and gemm_group against a double reference, the 16 x 16 tile transpose, and the
// vectorised exp, sigmoid, tanh and GELU against std:: in double, and the SIMD causal
// softmax row against its scalar form in double.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "core/blas_core.hpp"
#include "core/fp_mode.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "core/skew_pack.hpp"
#include "core/small_gemm.hpp"
#include "core/vmath.hpp"
#include "kernels/causal_softmax.hpp"

using namespace liegrad;

namespace {

// alpha op(A) op(B) + beta C0 in double, with row strides.
double ref_entry(bool ta, bool tb, int64_t i, int64_t j, int64_t K, const float* a, int64_t lda, const float* b,
                 int64_t ldb) {
  double s = 0;
  for (int64_t k = 0; k < K; ++k)
    s += static_cast<double>(ta ? a[k * lda + i] : a[i * lda + k]) * static_cast<double>(tb ? b[j * ldb + k] : b[k * ldb + j]);
  return s;
}

std::vector<float> normals(Rng& rng, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<float>(rng.normal());
  return v;
}

}  // namespace

TEST_CASE("sgemm_small matches a double reference for every transpose, odd sizes and strides") {
  Rng rng(11);
  double worst = 0;
  int padding_touched = 0;
  for (int64_t M : {1, 3, 16, 23, 33})
    for (int64_t N : {1, 7, 16, 23, 64, 65, 130})
      for (int64_t K : {1, 5, 16, 70})
        for (int t = 0; t < 4; ++t) {
          const bool ta = t & 1, tb = t & 2;
          const int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 2, ldc = N + 5;
          auto A = normals(rng, (ta ? K : M) * lda), B = normals(rng, (tb ? N : K) * ldb), C = normals(rng, M * ldc);
          const auto C0 = C;
          const float alpha = 0.75f, beta = (M + N + K) % 3 == 0 ? 0.0f : ((M + N + K) % 3 == 1 ? 1.0f : -0.5f);
          sgemm_small(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
          for (int64_t i = 0; i < M; ++i) {
            for (int64_t j = 0; j < N; ++j) {
              const double want = alpha * ref_entry(ta, tb, i, j, K, A.data(), lda, B.data(), ldb) +
                                  (beta == 0.0f ? 0.0 : beta * static_cast<double>(C0[static_cast<size_t>(i * ldc + j)]));
              worst = std::max(worst, std::abs(C[static_cast<size_t>(i * ldc + j)] - want) / (1.0 + std::abs(want)));
            }
            for (int64_t j = N; j < ldc; ++j)
              padding_touched += C[static_cast<size_t>(i * ldc + j)] != C0[static_cast<size_t>(i * ldc + j)];
          }
        }
  INFO("worst relative error " << worst);
  CHECK(worst < 1e-5);
  CHECK(padding_touched == 0);
}

TEST_CASE("sgemm_small's dense n x n x n kernels equal the general kernel bit for bit") {
  // Dense n x n operands with 8 <= n <= 16 take product_n, with 16 < n <= 24 product_n2
  // (AVX-512 builds); the same values with padded rows take the general register blocks.
  // All sum over k in the same order. n = 8, 16, 17 and 24 are the ends of the two
  // ranges, 12, 15, 20 and 23 masked sizes; above 16 the last n - 16 columns of two rows
  // share a vector, and 17 and 23 split their rows into an even and an odd block.
  Rng rng(12);
  for (const int64_t n : {8, 12, 15, 16, 17, 20, 23, 24}) {
  const int64_t pad = n + 3;
  auto padded = [&](const std::vector<float>& dense) {
    std::vector<float> out(static_cast<size_t>(n * pad), 0.0f);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) out[static_cast<size_t>(i * pad + j)] = dense[static_cast<size_t>(i * n + j)];
    return out;
  };
  const std::pair<float, float> scalings[] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {0.75f, -0.5f}};
  for (int t = 0; t < 4; ++t)
    for (const auto& [alpha, beta] : scalings)
      for (int64_t ldc : {n, n + 5}) {
        const bool ta = t & 1, tb = t & 2;
        auto A = normals(rng, n * n), B = normals(rng, n * n), C = normals(rng, n * ldc);
        if (beta == 0.0f) std::fill(C.begin(), C.end(), NAN);  // beta = 0 overwrites C
        auto C_general = C;
        const auto Ap = padded(A), Bp = padded(B);
        sgemm_small(ta, tb, n, n, n, alpha, A.data(), n, B.data(), n, beta, C.data(), ldc);
        sgemm_small(ta, tb, n, n, n, alpha, Ap.data(), pad, Bp.data(), pad, beta, C_general.data(), ldc);
        int differ = 0;
        double worst = 0;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const float got = C[static_cast<size_t>(i * ldc + j)];
            differ += got != C_general[static_cast<size_t>(i * ldc + j)];
            const double want = alpha * ref_entry(ta, tb, i, j, n, A.data(), n, B.data(), n);
            if (beta == 0.0f) worst = std::max(worst, std::abs(got - want) / (1.0 + std::abs(want)));
          }
        INFO("n " << n << " ta " << ta << " tb " << tb << " alpha " << alpha << " beta " << beta << " ldc " << ldc);
        CHECK(differ == 0);
        CHECK(worst < 1e-5);
      }
  }
}

TEST_CASE("sgemm_small gives the same bits for op(A) = A and for A stored transposed") {
  // ta = true takes the register blocks' UnitRows form (core/small_gemm.cpp block()), with
  // the broadcasts of op(A) at fixed offsets; op(A) = A takes A's strided rows. Both sum
  // over k in the same order, so they must give the same bits. M = 16 (one block of
  // one-vector panels), 23 (blocks of 7-8), 5; N = 16, 40, 70; K up to 600.
  Rng rng(13);
  int differ = 0, cases = 0;
  for (int64_t M : {5, 16, 23})
    for (int64_t N : {16, 40, 70})
      for (int64_t K : {7, 128, 600}) {
        const int64_t lda = K + 3, ldat = M + 1;
        auto A = normals(rng, M * lda), B = normals(rng, K * N);
        std::vector<float> At(static_cast<size_t>(K * ldat));
        for (int64_t i = 0; i < M; ++i)
          for (int64_t k = 0; k < K; ++k) At[static_cast<size_t>(k * ldat + i)] = A[static_cast<size_t>(i * lda + k)];
        std::vector<float> C(static_cast<size_t>(M * N), NAN), Ct(static_cast<size_t>(M * N), NAN);
        sgemm_small(false, false, M, N, K, 0.5f, A.data(), lda, B.data(), N, 0.0f, C.data(), N);
        sgemm_small(true, false, M, N, K, 0.5f, At.data(), ldat, B.data(), N, 0.0f, Ct.data(), N);
        for (size_t j = 0; j < C.size(); ++j) differ += !(C[j] == Ct[j]);
        ++cases;
      }
  CHECK(cases == 27);
  CHECK(differ == 0);
}

TEST_CASE("sgemm_small's single-row panels give each row the bits of the same row in a larger product") {
  // M = 1 (decoding at batch 1) runs panels of up to eight vectors (core/small_gemm.cpp
  // gemm_row), larger M four; both sum over k in the same order, so row i of an M-row
  // product and the one-row product of A's row i must agree bit for bit. N covers one to
  // eight vectors, a masked tail and two panels; beta 0 and 1.
  Rng rng(17);
  int differ = 0, cases = 0;
  for (int64_t N : {7, 16, 65, 128, 130, 335})
    for (int64_t K : {5, 335})
      for (float beta : {0.0f, 1.0f}) {
        const int64_t M = 3;
        auto A = normals(rng, M * K), B = normals(rng, K * N), C0 = normals(rng, M * N);
        std::vector<float> C = C0;
        sgemm_small(false, false, M, N, K, 1.0f, A.data(), K, B.data(), N, beta, C.data(), N);
        for (int64_t i = 0; i < M; ++i) {
          std::vector<float> row(C0.begin() + i * N, C0.begin() + (i + 1) * N);
          sgemm_small(false, false, 1, N, K, 1.0f, A.data() + i * K, K, B.data(), N, beta, row.data(), N);
          for (int64_t j = 0; j < N; ++j) differ += !(row[static_cast<size_t>(j)] == C[static_cast<size_t>(i * N + j)]);
        }
        ++cases;
      }
  CHECK(cases == 24);
  CHECK(differ == 0);
}

TEST_CASE("sgemm_small with beta = 0 ignores NaNs already in C") {
  std::vector<float> A(9, 1.0f), B(9, 2.0f), C(9, NAN);
  sgemm_small(false, false, 3, 3, 3, 1.0f, A.data(), 3, B.data(), 3, 0.0f, C.data(), 3);
  for (float c : C) CHECK(c == 6.0f);
}

TEST_CASE("float gemm and gemm_group split over threads match the reference, with every backend") {
  Rng rng(12);
  set_num_threads(2);
  const GemmBackend saved = gemm_backend();
  for (const GemmBackend backend : {GemmBackend::Auto, GemmBackend::Own, GemmBackend::Blas}) {
  set_gemm_backend(backend);
  CAPTURE(static_cast<int>(backend));
  struct Case {
    int64_t M, N, K;
    bool ta, tb;
  };
  for (const Case& c : {Case{4096, 120, 120, false, false}, Case{65, 256, 4096, true, false},
                        Case{4096, 65, 256, false, true}, Case{40, 300, 900, false, false},
                        // weight gradients with few rows: column blocks, or one block (N < 128) beside C2's small product
                        Case{64, 64, 4096, true, false}, Case{128, 130, 300, true, false}}) {
    CAPTURE(c.M);
    CAPTURE(c.N);
    const int64_t lda = c.ta ? c.M : c.K, ldb = c.tb ? c.K : c.N;
    auto A = normals(rng, c.M * c.K), B = normals(rng, c.K * c.N);
    std::vector<float> C1(static_cast<size_t>(c.M * c.N), 1.0f), C2 = C1, small(4, NAN);
    gemm<float>(c.ta, c.tb, c.M, c.N, c.K, 1.0f, A.data(), lda, B.data(), ldb, 1.0f, C1.data(), c.N);
    gemm_group<float>({GemmCall<float>{c.ta, c.tb, c.M, c.N, c.K, 1.0f, A.data(), lda, B.data(), ldb, 0.0f, C2.data(), c.N},
                       GemmCall<float>{false, false, 2, 2, 2, 1.0f, A.data(), 2, B.data(), 2, 0.0f, small.data(), 2}});
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        CHECK(small[static_cast<size_t>(i * 2 + j)] == doctest::Approx(ref_entry(false, false, i, j, 2, A.data(), 2, B.data(), 2)).epsilon(1e-5));
    double worst = 0;
    for (int64_t i = 0; i < c.M; i += 7)
      for (int64_t j = 0; j < c.N; j += 5) {
        const double want = ref_entry(c.ta, c.tb, i, j, c.K, A.data(), lda, B.data(), ldb);
        worst = std::max(worst, std::abs(C1[static_cast<size_t>(i * c.N + j)] - (want + 1.0)) / (1.0 + std::abs(want)));
        worst = std::max(worst, std::abs(C2[static_cast<size_t>(i * c.N + j)] - want) / (1.0 + std::abs(want)));
      }
    CHECK(worst < 1e-4);
  }
  }
  set_gemm_backend(saved);
}

TEST_CASE("OpenBLAS's core against the CPU: ISA of each core name, the suggested OPENBLAS_CORETYPE") {
  CHECK(openblas_core_isa("SkylakeX") == VectorIsa::Avx512);
  CHECK(openblas_core_isa("COOPERLAKE") == VectorIsa::Avx512);
  CHECK(openblas_core_isa("SapphireRapids") == VectorIsa::Avx512);
  CHECK(openblas_core_isa("Haswell") == VectorIsa::Avx2);
  CHECK(openblas_core_isa("Zen") == VectorIsa::Avx2);
  CHECK(openblas_core_isa("Prescott") == VectorIsa::Older);
  CHECK(openblas_core_isa("Sandybridge") == VectorIsa::Older);
  CHECK(openblas_core_isa("") == VectorIsa::Older);

  CHECK(BlasCore{"Prescott", VectorIsa::Older, VectorIsa::Avx512}.suggested_coretype() == "SKYLAKEX");
  CHECK(BlasCore{"Haswell", VectorIsa::Avx2, VectorIsa::Avx512}.suggested_coretype() == "SKYLAKEX");
  CHECK(BlasCore{"Prescott", VectorIsa::Older, VectorIsa::Avx2}.suggested_coretype() == "HASWELL");
  CHECK(BlasCore{"Haswell", VectorIsa::Avx2, VectorIsa::Avx2}.suggested_coretype().empty());
  CHECK(BlasCore{"SkylakeX", VectorIsa::Avx512, VectorIsa::Avx2}.suggested_coretype().empty());

  // The loaded library: a name, classified as above, and a CPU level this build can use.
  const BlasCore& core = openblas_core();
  CHECK_FALSE(core.name.empty());
  CHECK(core.core_isa == openblas_core_isa(core.name));
  CHECK(core.cpu_isa == cpu_vector_isa());
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
  CHECK(core.cpu_isa == VectorIsa::Avx512);  // built with -march=native on this CPU
#elif defined(__AVX2__) && defined(__FMA__)
  CHECK(core.cpu_isa >= VectorIsa::Avx2);
#endif
}

TEST_CASE("transpose_small transposes every size exactly and leaves the rest alone") {
  int bad = 0;
  for (int64_t r = 1; r <= 35; r += 3)
    for (int64_t c = 1; c <= 35; c += 2) {
      std::vector<float> in(static_cast<size_t>(r * (c + 3))), out(static_cast<size_t>(c * (r + 2)), -1.0f);
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
      transpose_small(r, c, in.data(), c + 3, out.data(), r + 2);
      for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < c; ++j) bad += out[static_cast<size_t>(j * (r + 2) + i)] != in[static_cast<size_t>(i * (c + 3) + j)];
      for (int64_t j = 0; j < c; ++j)
        for (int64_t i = r; i < r + 2; ++i) bad += out[static_cast<size_t>(j * (r + 2) + i)] != -1.0f;
    }
  CHECK(bad == 0);
}

TEST_CASE("the skew packing maps and skew_part equal their loops bit for bit, write only their entries, and invert") {
  // d <= 16 take the one-register AVX-512 kernels (where built), 17-32 the two-register
  // ones, 33 and 40 the loops. Entries include
  // +-0 and inf, whose signs a transpose-and-subtract form would get wrong (0 - 0 = +0).
  Rng rng(31);
  const float c = 0.70710678f;
  auto same_bits = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  int differ = 0, touched = 0, roundtrip = 0;
  for (int64_t d : {1, 2, 3, 5, 8, 9, 15, 16, 17, 18, 20, 23, 31, 32, 33, 40}) {
    const int64_t m = d * (d - 1) / 2, ld = d + 3;
    std::vector<float> u = normals(rng, m + 1);
    if (m > 2) u[0] = 0.0f, u[1] = -0.0f, u[2] = INFINITY;
    const float sentinel = 12345.0f;
    std::vector<float> fast(static_cast<size_t>(d * ld), sentinel), loops = fast;
    skew_from_upper(d, u.data(), c, fast.data(), ld);
    skew_from_upper_loops(d, u.data(), c, loops.data(), ld);
    for (size_t k = 0; k < fast.size(); ++k) differ += !same_bits(fast[k], loops[k]);
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = d; j < ld; ++j) touched += fast[static_cast<size_t>(i * ld + j)] != sentinel;

    std::vector<float> X = normals(rng, d * ld);  // not skew: vee reads X - X^T
    std::vector<float> v_fast(static_cast<size_t>(m + 1), sentinel), v_loops = v_fast;
    upper_of_skew(d, X.data(), ld, c, v_fast.data());
    upper_of_skew_loops(d, X.data(), ld, c, v_loops.data());
    for (int64_t p = 0; p <= m; ++p) differ += !same_bits(v_fast[static_cast<size_t>(p)], v_loops[static_cast<size_t>(p)]);
    touched += v_fast[static_cast<size_t>(m)] != sentinel;

    // skew_part: X with +-0 and inf, strided in and out.
    if (d > 2) X[1] = 0.0f, X[static_cast<size_t>(ld)] = -0.0f, X[2] = INFINITY;
    std::vector<float> p_fast(static_cast<size_t>(d * ld), sentinel), p_loops = p_fast;
    skew_part(d, X.data(), ld, 0.5f, p_fast.data(), ld);
    skew_part_loops(d, X.data(), ld, 0.5f, p_loops.data(), ld);
    for (size_t k = 0; k < p_fast.size(); ++k) differ += !same_bits(p_fast[k], p_loops[k]);
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = d; j < ld; ++j) touched += p_fast[static_cast<size_t>(i * ld + j)] != sentinel;

    // upper_of_skew(skew_from_upper(u)) = 2 c^2 u = u for c = 1/sqrt(2), to rounding.
    std::vector<float> w = normals(rng, m), A(static_cast<size_t>(d * d)), back(static_cast<size_t>(m));
    skew_from_upper(d, w.data(), c, A.data(), d);
    upper_of_skew(d, A.data(), d, c, back.data());
    for (int64_t p = 0; p < m; ++p)
      roundtrip += std::abs(back[static_cast<size_t>(p)] - w[static_cast<size_t>(p)]) > 4e-7f * (1 + std::abs(w[static_cast<size_t>(p)]));
  }
  CHECK(differ == 0);
  CHECK(touched == 0);
  CHECK(roundtrip == 0);
}

TEST_CASE("FlushSubnormals flushes subnormal floats in its scope only, and restores the mode") {
#if LIEGRAD_HAS_MXCSR
  volatile float tiny = 1e-30f, small = 1e-10f;  // volatile: computed at run time
  // The control bits of MXCSR, without the six sticky exception flags (bits 0-5).
  const auto mode = [] { return _mm_getcsr() & ~0x3Fu; };
  const unsigned before = mode();
  {
    const FlushSubnormals flush;
    volatile float r = tiny * small;  // 1e-40 is subnormal: flushed to 0
    CHECK(r == 0.0f);
    volatile float sub = std::numeric_limits<float>::denorm_min();
    volatile float read = sub * 2.0f;  // a subnormal input reads as 0
    CHECK(read == 0.0f);
  }
  CHECK(mode() == before);
  volatile float r = tiny * small;
  CHECK(r > 0.0f);
  CHECK(r < std::numeric_limits<float>::min());
  {
    const FlushSubnormals off(false);  // off: the mode is left alone
    volatile float r2 = tiny * small;
    CHECK(r2 > 0.0f);
  }
  CHECK(mode() == before);
#else
  MESSAGE("no MXCSR on this target: FlushSubnormals is a no-op");
#endif
}

TEST_CASE("vectorised dot product matches a double sum at every length, tails and offsets included") {
  // Lengths around the vector width (16 lanes with AVX-512, 8 with AVX2), two vectors and
  // their tails; unaligned starts. Error bound: len ulps of the sum of |a_j b_j|.
  Rng rng(5);
  const Array<float> a = rng.normal_array<float>(Shape{300}), b = rng.normal_array<float>(Shape{300});
  for (int64_t len : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 225, 256, 299}) {
    for (int64_t off : {0, 1}) {
      CAPTURE(len);
      CAPTURE(off);
      double exact = 0, magnitude = 0;
      for (int64_t j = 0; j < len; ++j) {
        exact += static_cast<double>(a[off + j]) * b[off + j];
        magnitude += std::abs(static_cast<double>(a[off + j]) * b[off + j]);
      }
      const float got = vm::dot_array(len, a.data() + off, b.data() + off);
      CHECK(std::abs(got - exact) <= static_cast<double>(len + 1) * 6e-8 * magnitude);
    }
  }
}

TEST_CASE("vectorised exp, sigmoid, tanh and GELU agree with std:: and keep inf and NaN") {
  std::vector<float> x;
  for (double v = -90; v < 88; v += 0.0137) x.push_back(static_cast<float>(v));
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> e(x.size()), s(x.size()), t(x.size()), g(x.size()), dg(x.size(), 0.0f), ones(x.size(), 1.0f);
  vm::exp_array(n, x.data(), e.data());
  vm::sigmoid_array(n, x.data(), s.data());
  vm::tanh_array(n, x.data(), t.data());
  vm::gelu_array(n, x.data(), g.data());
  vm::gelu_grad_array(n, x.data(), ones.data(), dg.data());
  double exp_rel = 0, sig = 0, th = 0, ge = 0, dge = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i], ev = std::exp(v);
    if (ev > 1e-37) exp_rel = std::max(exp_rel, std::abs(e[i] - ev) / ev);
    sig = std::max(sig, std::abs(s[i] - 1.0 / (1.0 + std::exp(-v))));
    th = std::max(th, std::abs(t[i] - std::tanh(v)));
    const double cdf = 0.5 * (1.0 + std::erf(v / std::sqrt(2.0)));
    if (std::abs(v) < 20) {
      ge = std::max(ge, std::abs(g[i] - v * cdf) / (1.0 + std::abs(v)));
      dge = std::max(dge, std::abs(dg[i] - (cdf + v * std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI))));
    }
  }
  INFO("exp rel " << exp_rel << ", sigmoid " << sig << ", tanh " << th << ", gelu " << ge << ", gelu' " << dge);
  CHECK(exp_rel < 3e-7);
  CHECK(sig < 3e-7);
  CHECK(th < 5e-7);
  CHECK(ge < 5e-7);
  CHECK(dge < 5e-7);
  const float special[4] = {INFINITY, -INFINITY, NAN, 200.0f};
  float out[4];
  vm::exp_array(4, special, out);
  CHECK(std::isinf(out[0]));
  CHECK(out[1] == 0.0f);
  CHECK(std::isnan(out[2]));
  CHECK(std::isinf(out[3]));
  vm::tanh_array(4, special, out);
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == -1.0f);
  CHECK(std::isnan(out[2]));
}

TEST_CASE("mean-head attention's float row operations equal the scalar forms in double, for every tail") {
  // add_scaled_row and head_softmax_backward_row (kernels/causal_softmax.hpp), rows of
  // every length 1..140: values, the returned <dsk, s>, and nothing written past the row.
  Rng rng(43);
  const float inv_h = 0.25f, beta = 1.3f, c = 0.4f;
  double worst = 0;
  int64_t untouched = 0, rows = 0;
  auto close = [&](double got, double want, double scale) { worst = std::max(worst, std::abs(got - want) / scale); };
  for (int64_t len = 1; len <= 140; ++len) {
    std::vector<float> p = normals(rng, len), da = normals(rng, len), sv = normals(rng, len);
    for (float& x : p) x = std::abs(x) / static_cast<float>(len);  // a probability-like row
    std::vector<float> a = normals(rng, len + 20), ds = normals(rng, len + 20);
    for (int64_t j = len; j < len + 20; ++j) a[static_cast<size_t>(j)] = ds[static_cast<size_t>(j)] = -1.0f;
    std::vector<double> pd(p.begin(), p.end()), dad(da.begin(), da.end()), sd(sv.begin(), sv.end());
    std::vector<double> ad(a.begin(), a.end()), dsd(ds.begin(), ds.end());
    kernels::add_scaled_row<float>(len, c, p.data(), a.data());
    kernels::add_scaled_row_scalar<double>(len, c, pd.data(), ad.data());
    const float part = kernels::head_softmax_backward_row<float>(len, p.data(), da.data(), sv.data(), inv_h, beta, ds.data());
    const double part_ref = kernels::head_softmax_backward_row_scalar<double>(len, pd.data(), dad.data(), sd.data(), inv_h,
                                                                               beta, dsd.data());
    double mag = 0;  // the size of the sums' terms, for a relative bound
    for (int64_t j = 0; j < len; ++j) mag += std::abs(pd[static_cast<size_t>(j)] * dad[static_cast<size_t>(j)]) + 1e-3;
    for (int64_t j = 0; j < len; ++j) {
      close(a[static_cast<size_t>(j)], ad[static_cast<size_t>(j)], 1 + std::abs(ad[static_cast<size_t>(j)]));
      close(ds[static_cast<size_t>(j)], dsd[static_cast<size_t>(j)], 1 + std::abs(dsd[static_cast<size_t>(j)]));
    }
    close(part, part_ref, 1 + mag);
    for (int64_t j = len; j < len + 20; ++j)
      untouched += (a[static_cast<size_t>(j)] == -1.0f) + (ds[static_cast<size_t>(j)] == -1.0f);
    ++rows;
  }
  INFO("worst relative error " << worst);
  CHECK(worst < 1e-6);
  CHECK(untouched == 40 * rows);
}

TEST_CASE("the float softmax pullback row equals the scalar form in double, for every tail") {
  // softmax_backward_row (kernels/causal_softmax.hpp), d <- p (d - <p, d>) in place,
  // rows of every length 1..140 (two accumulators, a masked tail): values and nothing
  // written past the row.
  Rng rng(44);
  double worst = 0;
  int64_t untouched = 0, rows = 0;
  for (int64_t len = 1; len <= 140; ++len) {
    std::vector<float> p = normals(rng, len), d = normals(rng, len + 20);
    for (float& x : p) x = std::abs(x) / static_cast<float>(len);
    for (int64_t j = len; j < len + 20; ++j) d[static_cast<size_t>(j)] = -1.0f;
    std::vector<double> pd(p.begin(), p.end()), dd(d.begin(), d.end());
    kernels::softmax_backward_row<float>(len, p.data(), d.data());
    kernels::softmax_backward_row_scalar<double>(len, pd.data(), dd.data());
    for (int64_t j = 0; j < len; ++j)
      worst = std::max(worst, std::abs(d[static_cast<size_t>(j)] - dd[static_cast<size_t>(j)]) /
                                  (1e-3 + std::abs(pd[static_cast<size_t>(j)])));
    for (int64_t j = len; j < len + 20; ++j) untouched += d[static_cast<size_t>(j)] == -1.0f;
    ++rows;
  }
  INFO("worst error relative to p_j " << worst);
  CHECK(worst < 1e-5);
  CHECK(untouched == 20 * rows);
}

TEST_CASE("the float causal softmax row equals the scalar form in double, for every tail and in place") {
  Rng rng(41);
  const float scale = 0.7f, slope = 0.05f;
  double worst = 0;
  int64_t untouched = 0, rows = 0;
  for (int64_t i = 0; i < 140; ++i) {
    const std::vector<float> s = normals(rng, i + 1);
    std::vector<double> sd(s.begin(), s.end()), ref(static_cast<size_t>(i + 1));
    kernels::causal_softmax_row_scalar<double>(i, sd.data(), scale, slope, ref.data());
    std::vector<float> p(static_cast<size_t>(i + 1 + 20), -1.0f), inplace = s;
    kernels::causal_softmax_row<float>(i, s.data(), scale, slope, p.data());
    kernels::causal_softmax_row<float>(i, inplace.data(), scale, slope, inplace.data());
    for (int64_t j = 0; j <= i; ++j) {
      const double r = ref[static_cast<size_t>(j)];
      worst = std::max(worst, std::abs(p[static_cast<size_t>(j)] - r) / r);
      worst = std::max(worst, std::abs(inplace[static_cast<size_t>(j)] - r) / r);
    }
    for (int64_t j = i + 1; j < i + 21; ++j) untouched += p[static_cast<size_t>(j)] == -1.0f;
    ++rows;
  }
  INFO("worst relative error " << worst);
  CHECK(worst < 1e-6);
  CHECK(untouched == 20 * rows);  // nothing written past p[i]
  // A NaN logit makes the whole row NaN, as in the scalar form; a row whose logits are
  // far apart keeps its largest entry at 1 and underflows the rest to 0.
  std::vector<float> bad(37, 0.5f), out(37);
  bad[19] = NAN;
  kernels::causal_softmax_row<float>(36, bad.data(), scale, slope, out.data());
  CHECK(std::all_of(out.begin(), out.end(), [](float v) { return std::isnan(v); }));
  std::vector<float> spread(23, -1000.0f);
  spread[22] = 1000.0f;
  kernels::causal_softmax_row<float>(22, spread.data(), 1.0f, 0.0f, out.data());
  CHECK(out[22] == 1.0f);
  CHECK(std::all_of(out.begin(), out.begin() + 22, [](float v) { return v == 0.0f; }));
}
