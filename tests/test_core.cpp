// Tests of core/: shapes and arrays (element-count overflow, AllocationLimit), the gemm
// wrappers and the small-matrix batched kernel against a naive reference, reproducible
// random streams, and arrays to and from checkpoint JSON.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "core/alloc_limit.hpp"
#include "core/array.hpp"
#include "core/array_json.hpp"
#include "core/errors.hpp"
#include "core/linalg.hpp"
#include "core/rng.hpp"

using namespace liegrad;

namespace {
// Naive op(A) op(B) in double for reference.
template <class T>
std::vector<double> naive(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* A, const T* B) {
  std::vector<double> C(static_cast<size_t>(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double a = ta ? A[k * M + i] : A[i * K + k];
        const double b = tb ? B[j * K + k] : B[k * N + j];
        s += a * b;
      }
      C[static_cast<size_t>(i * N + j)] = s;
    }
  return C;
}
}  // namespace

TEST_CASE("Shape and Array basics") {
  Shape s{2, 3, 4};
  CHECK(s.numel() == 24);
  CHECK(s.rows() == 3);
  CHECK(s.cols() == 4);
  CHECK(s.batch() == 2);
  CHECK(s.str() == "(2,3,4)");
  CHECK(Shape{}.numel() == 1);
  Array<float> a(s, 1.5f);
  CHECK(a.size() == 24);
  a.at(1, 2, 3) = 7;
  CHECK(a[23] == 7);
  CHECK(a.reshaped(Shape{6, 4}).at(5, 3) == 7);
  CHECK_THROWS_AS(a.reshaped(Shape{5, 5}), ShapeError);
  CHECK_THROWS_AS((Shape{1, 2, 3, 4}), ShapeError);
  CHECK_THROWS_AS(Array<float>(Shape{2, 2}, std::vector<float>{1, 2, 3}), ShapeError);
  CHECK(Array<double>::eye(3).at(1, 1) == 1.0);
  CHECK(Array<double>::eye(3).at(1, 2) == 0.0);
}

TEST_CASE("shape errors carry a readable message") {
  Array<float> a(Shape{2, 3});
  try {
    a.reshaped(Shape{4, 4});
    FAIL("no exception");
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()).find("(2,3)") != std::string::npos);
    CHECK(std::string(e.what()).find("(4,4)") != std::string::npos);
  }
}

TEST_CASE("Shape: an element count that overflows int64 is a ShapeError, not undefined behaviour") {
  const int64_t big = int64_t(1) << 40;
  CHECK_THROWS_AS(Shape({big, big, big}), ShapeError);
  CHECK_THROWS_AS(Shape::of({big, big}), ShapeError);
  CHECK_THROWS_WITH(Shape::of({big, big}), doctest::Contains("too many elements"));
  CHECK(Shape::of({big}).numel() == big);  // large but representable: fine
}

TEST_CASE("AllocationLimit: new arrays are charged while a limit is in scope, nested limits all apply") {
  Array<float> before(Shape{100});  // no limit in scope: nothing to charge
  {
    const AllocationLimit outer(1000, "outer");
    Array<float> a(Shape{600});
    const Array<float> copy = a;  // copies are not charged
    {
      const AllocationLimit inner(300, "inner");
      Array<double> b(Shape{300});
      CHECK_THROWS_WITH_AS(Array<double>(Shape{1}), doctest::Contains("inner: needs more than 300 array elements"),
                           ValueError);
    }
    // The inner scope's 300 elements were charged to the outer limit too: 900 of 1000.
    CHECK_THROWS_WITH_AS(Array<float>(Shape{101}), doctest::Contains("outer: needs more than 1000"), ValueError);
    Array<float> c(Shape{100});
    CHECK_THROWS_AS(Array<float>(Shape{1}, std::vector<float>{1.0f}), ValueError);
  }
  {
    // An allocation beyond both limits is reported by the tighter one, whatever the nesting.
    const AllocationLimit tight(10, "tight");
    const AllocationLimit loose(1000, "loose");
    CHECK_THROWS_WITH(Array<float>(Shape{5000}), doctest::Contains("tight: needs more than 10"));
    Array<float> fits(Shape{10});  // nothing was charged by the refused allocation
  }
  Array<float> after(Shape{1 << 20});  // out of scope: no limit again
  CHECK(after.size() == 1 << 20);
}

TEST_CASE("gemm and batched_gemm match a naive product for every transpose") {
  Rng rng(7);
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    SUBCASE("small and large") {
      for (int64_t n : {3, 16, 70}) {
        const int64_t M = n, N = n + 1, K = n + 2, batch = 3;
        Array<double> A = rng.normal_array<double>(Shape{batch, M, K});
        Array<double> B = rng.normal_array<double>(Shape{batch, K, N});
        Array<double> C(Shape{batch, M, N}, 1.0);
        batched_gemm<double>(batch, ta, tb, M, N, K, 2.0, A.data(), M * K, B.data(), K * N, 0.5, C.data(), M * N);
        for (int64_t b = 0; b < batch; ++b) {
          auto ref = naive(ta, tb, M, N, K, A.data() + b * M * K, B.data() + b * K * N);
          double err = 0;
          for (int64_t i = 0; i < M * N; ++i)
            err = std::max(err, std::abs(C[b * M * N + i] - (2.0 * ref[static_cast<size_t>(i)] + 0.5)));
          INFO("n=" << n << " ta=" << ta << " tb=" << tb);
          CHECK(err < 1e-11);
        }
      }
    }
  }
}

TEST_CASE("float small_gemm agrees with double reference") {
  Rng rng(3);
  const int64_t n = 16;
  Array<float> A = rng.normal_array<float>(Shape{n, n}), B = rng.normal_array<float>(Shape{n, n});
  Array<float> C(Shape{n, n});
  small_gemm<float>(false, true, n, n, n, 1.0f, A.data(), B.data(), 0.0f, C.data());
  auto ref = naive(false, true, n, n, n, A.data(), B.data());
  for (int64_t i = 0; i < n * n; ++i) CHECK(C[i] == doctest::Approx(ref[static_cast<size_t>(i)]).epsilon(1e-5));
}

TEST_CASE("RNG streams are reproducible and restorable") {
  Rng a(42), b(42), c(43);
  std::vector<double> xa, xb;
  for (int i = 0; i < 100; ++i) {
    xa.push_back(a.normal());
    xb.push_back(b.normal());
  }
  CHECK(xa == xb);
  CHECK(c.normal() != doctest::Approx(Rng(42).normal()));
  // Pinned values: the stream must not change between versions (checkpoints rely on it).
  Rng p(1);
  CHECK(p.next_u64() == 0xb3f2af6d0fc710c5ULL);
  // Save mid-stream (with a cached normal) and restore.
  Rng s(9);
  s.normal();
  const std::string st = s.state();
  std::vector<double> after1, after2;
  for (int i = 0; i < 5; ++i) after1.push_back(s.normal());
  Rng r(0);
  r.set_state(st);
  for (int i = 0; i < 5; ++i) after2.push_back(r.normal());
  CHECK(after1 == after2);
  CHECK_THROWS_AS(r.set_state("garbage"), ValueError);
}

TEST_CASE("a dropout mask draws what uniform() < p would, in the same order, and leaves the same state") {
  for (const double p : {0.0, 0.05, 0.5, 0.999}) {
    CAPTURE(p);
    Rng bulk(77), one_by_one(77);
    std::vector<uint8_t> keep(10007);
    bulk.draw_keep_mask(p, keep.data(), static_cast<int64_t>(keep.size()));
    int64_t dropped = 0;
    for (const uint8_t k : keep) {
      CHECK(k == (one_by_one.uniform() < p ? 0 : 1));
      dropped += k == 0;
    }
    CHECK(bulk.next_u64() == one_by_one.next_u64());
    CHECK(std::abs(static_cast<double>(dropped) / static_cast<double>(keep.size()) - p) < 0.02);
  }
  // A threshold between two representable uniforms: the byte compare keeps the exact rule.
  Rng a(3), b(3);
  const double u = b.uniform();
  uint8_t k[2];
  a.draw_keep_mask(u, k, 1);                    // u < u is false: kept
  CHECK(k[0] == 1);
  Rng c(3);
  c.draw_keep_mask(std::nextafter(u, 1.0), k + 1, 1);  // u < next(u): dropped
  CHECK(k[1] == 0);
}

TEST_CASE("RNG distributions have the right moments") {
  Rng rng(5);
  const int n = 200000;
  double s = 0, s2 = 0, u = 0;
  for (int i = 0; i < n; ++i) {
    const double x = rng.normal();
    s += x;
    s2 += x * x;
    u += rng.uniform();
  }
  CHECK(std::abs(s / n) < 0.01);
  CHECK(std::abs(s2 / n - 1.0) < 0.02);
  CHECK(std::abs(u / n - 0.5) < 0.005);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) counts[static_cast<size_t>(rng.integer(7))]++;
  for (int k : counts) CHECK(std::abs(k - 10000) < 500);
  CHECK_THROWS_AS(rng.integer(0), ValueError);
}

TEST_CASE("arrays round-trip through checkpoint JSON bit for bit, non-finite values included") {
  Rng rng(5);
  Array<float> a = rng.normal_array<float>(Shape{2, 3, 4});
  a[1] = NAN;
  a[5] = INFINITY;
  a[7] = -INFINITY;
  a[9] = -0.0f;
  const nlohmann::json j = array_to_json(a, "values");
  CHECK((j.at("shape") == nlohmann::json{2, 3, 4}));
  CHECK(j.at("values")[1] == "nan");
  CHECK(j.at("values")[5] == "inf");
  CHECK(j.at("values")[7] == "-inf");
  CHECK_FALSE(j.contains("data"));
  // Through text, as a checkpoint stores it.
  const Array<float> b = array_from_json<float>(nlohmann::json::parse(j.dump()), "values", "t");
  REQUIRE(b.shape() == a.shape());
  CHECK(std::isnan(b[1]));
  CHECK(std::memcmp(a.data() + 2, b.data() + 2, sizeof(float) * static_cast<size_t>(a.size() - 2)) == 0);
  CHECK(std::memcmp(a.data(), b.data(), sizeof(float)) == 0);
  // A scalar (0-D) and an empty array survive too.
  CHECK(array_from_json<double>(array_to_json(Array<double>::scalar(2.5), "data"), "data", "t")[0] == 2.5);
  CHECK(array_from_json<double>(array_to_json(Array<double>(Shape{0}), "data"), "data", "t").shape() == Shape{0});
}

TEST_CASE("malformed array JSON is refused with a message naming the place") {
  const nlohmann::json good = array_to_json(Array<float>(Shape{2, 2}), "data");
  auto bad = [&](const nlohmann::json& j) { return array_from_json<float>(j, "data", "state of 'w'"); };
  CHECK_THROWS_WITH_AS(array_from_json<float>(good, "values", "state of 'w'"), doctest::Contains("state of 'w'"),
                       ValueError);  // the other key
  nlohmann::json j = good;
  j["data"].push_back(1.0);
  CHECK_THROWS_WITH_AS(bad(j), doctest::Contains("5 values for shape (2,2)"), ValueError);
  j = good;
  j["data"][2] = "many";
  CHECK_THROWS_WITH_AS(bad(j), doctest::Contains("\"many\""), ValueError);
  j = good;
  j["shape"] = {1, 1, 2, 2};
  CHECK_THROWS_WITH_AS(bad(j), doctest::Contains("at most 3"), ValueError);
  j["shape"] = {2, -2};
  CHECK_THROWS_WITH_AS(bad(j), doctest::Contains("bad shape"), ValueError);
  j["shape"] = {2, 1.5};
  CHECK_THROWS_WITH_AS(bad(j), doctest::Contains("bad shape"), ValueError);
  CHECK_THROWS_AS(bad(nlohmann::json::array()), ValueError);
}
