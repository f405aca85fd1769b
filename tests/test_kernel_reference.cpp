// The fused kernels (kernels/) against central differences and against their unfused
// references (kernels/reference.hpp), forward and backward, in double.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "autograd/ops.hpp"
#include "autograd/tape.hpp"
#include "core/parallel.hpp"
#include "groups/group.hpp"
#include "kernels/causal_mha.hpp"
#include "kernels/kernel_checks.hpp"
#include "kernels/mixing.hpp"
#include "kernels/osm_scan.hpp"
#include "kernels/prototype_logits.hpp"
#include "kernels/reference.hpp"
#include "kernels/relative_update.hpp"
#include "tests/test_helpers.hpp"

using namespace liegrad;

TEST_CASE("every fused kernel passes check_vjp in double") {
  Rng rng(2025);
  const auto checks = kernels::kernel_op_checks();
  CHECK(checks.size() >= 30);
  for (const auto& c : checks) test::require_vjp(c.run(rng));
}

TEST_CASE("every fused kernel equals its unfused reference, forward and backward, in double") {
  Rng rng(17);
  const auto checks = kernels::kernel_reference_checks();
  std::map<std::string, double> worst;  // per kernel
  std::set<std::string> groups_seen;
  for (const auto& c : checks) {
    const ag::EquivalenceResult r = c.run(rng);
    INFO(r.name << " at " << r.shapes << ": forward error " << r.forward_error << ", backward error "
                << r.backward_error);
    CHECK(r.passed);
    const std::string kernel = r.name.substr(0, r.name.find(' '));
    worst[kernel] = std::max({worst[kernel], r.forward_error, r.backward_error});
    for (const char* g : {"U(3)", "SO(2)xU(2)", "T(3)", "SO(6)"})
      if (r.name.find(g) != std::string::npos) groups_seen.insert(g);
  }
  for (const auto& [kernel, err] : worst) MESSAGE("worst fused-vs-reference error of " << kernel << ": " << err);
  // Every fused op the models run has a reference, on complex and product groups too.
  for (const char* k : {"relative_update", "combined_update", "token_update", "osm_scan", "mean_head_attention",
                        "causal_self_attention", "lstm_scan", "exprnn_scan", "linear", "linear_gelu",
                        "linear_residual"})
    CHECK(worst.count(k) == 1);
  CHECK(groups_seen.size() == 4);
}

TEST_CASE("check_equivalent catches a forward or a backward that differs from the reference") {
  Rng rng(5);
  auto g = groups::make_group("SO(4)");
  const std::vector<Array<double>> in = {g->sample<double>(rng, 5), g->sample<double>(rng, 5)};
  const ag::VjpFn reference = [&](const std::vector<ag::Vard>& x) {
    return kernels::relative_update_reference(*g, x[0], x[1], ag::Vard());
  };
  // Forward off by a relative 1e-7: the update towards a slightly scaled target.
  const ag::VjpFn scaled = [&](const std::vector<ag::Vard>& x) {
    return kernels::relative_update(*g, x[0], ag::scale(x[1], 1.0 + 1e-7), ag::Vard());
  };
  const ag::EquivalenceResult f = ag::check_equivalent("scaled", scaled, reference, in, rng);
  CHECK_FALSE(f.passed);
  CHECK(f.forward_error > 1e-9);
  // Same forward, gradient w.r.t. P dropped: only the backward differs.
  const ag::VjpFn detached = [&](const std::vector<ag::Vard>& x) {
    return kernels::relative_update(*g, x[0], ag::Vard::constant(x[1].value()), ag::Vard());
  };
  const ag::EquivalenceResult b = ag::check_equivalent("detached", detached, reference, in, rng);
  CHECK_FALSE(b.passed);
  CHECK(b.forward_error <= 1e-12);
  CHECK(b.backward_error > 1e-3);
  // And the real kernel passes on the same inputs.
  const ag::EquivalenceResult ok = ag::check_equivalent(
      "fused", [&](const std::vector<ag::Vard>& x) { return kernels::relative_update(*g, x[0], x[1], ag::Vard()); },
      reference, in, rng);
  CHECK(ok.passed);
}

TEST_CASE("attention dropout: the fused op drops what ag::dropout drops, and rejects a bad rate") {
  Rng rng(3);
  const ag::Vard qkv = ag::Vard::constant(rng.normal_array<double>(Shape{2, 7, 3 * 4}));
  const std::vector<double> slopes = {0.5, 0.25};
  // Rate 0 is the op without dropout, whatever generator is passed (none is drawn from).
  Rng unused(1);
  const uint64_t before = Rng(1).next_u64();
  CHECK(max_abs_diff(kernels::causal_self_attention(qkv, 2, slopes, 0.5, 0.0, &unused).value(),
                     kernels::causal_self_attention(qkv, 2, slopes, 0.5).value()) == 0.0);
  CHECK(unused.next_u64() == before);
  // A positive rate changes the output, and two generators in one state give one mask.
  Rng a(9), b(9);
  const Array<double> with = kernels::causal_self_attention(qkv, 2, slopes, 0.5, 0.5, &a).value();
  CHECK(max_abs_diff(with, kernels::causal_self_attention(qkv, 2, slopes, 0.5).value()) > 1e-3);
  CHECK(max_abs_diff(with, kernels::causal_self_attention(qkv, 2, slopes, 0.5, 0.5, &b).value()) == 0.0);
  CHECK(a.next_u64() == b.next_u64());
  for (const double bad : {-0.1, 1.0, 1.5}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(kernels::causal_self_attention(qkv, 2, slopes, 0.5, bad, &a),
                         doctest::Contains("dropout must be in [0, 1)"), ValueError);
  }
  CHECK_THROWS_WITH_AS(kernels::causal_self_attention(qkv, 2, slopes, 0.5, 0.1, nullptr),
                       doctest::Contains("needs a random generator"), ValueError);
}

TEST_CASE("attention dropout on two threads: the reference's values in double, one thread's bits in float") {
  // B = 8 rows of h = 4 heads, T = 128, e = 8: 4 B h T^2 e = 2^24 FLOPs, the kernel's
  // threshold for its OpenMP split, so each thread runs its own scratch rows.
  const int64_t B = 8, T_ = 128, D = 32;
  const int heads = 4;
  const std::vector<double> slopes = {0.5, 0.25, 0.125, 0.0625};
  const int threads_before = num_threads();
  set_num_threads(2);
  Rng rng(21);
  const Array<double> x = rng.normal_array<double>(Shape{B, T_, 3 * D});
  const ag::EquivalenceResult r = ag::check_equivalent(
      "causal_self_attention, dropout 0.2, two threads",
      [&](const std::vector<ag::Vard>& v) {
        Rng mask_rng(4);
        return kernels::causal_self_attention(v[0], heads, slopes, 0.5, 0.2, &mask_rng);
      },
      [&](const std::vector<ag::Vard>& v) {
        Rng mask_rng(4);
        return kernels::causal_self_attention_reference(v[0], heads, slopes, 0.5, 0.2, &mask_rng);
      },
      {x}, rng);
  INFO("forward error " << r.forward_error << ", backward error " << r.backward_error);
  CHECK(r.passed);
  // Float: the same op on one thread and on two, forward and backward, bit for bit.
  const std::vector<float> slopes_f(slopes.begin(), slopes.end());
  Array<float> xf(x.shape()), seed(Shape{B, T_, D});
  for (int64_t i = 0; i < x.size(); ++i) xf[i] = static_cast<float>(x[i]);
  for (int64_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<float>(rng.normal());
  auto run = [&](int threads, Array<float>& grad) {
    set_num_threads(threads);
    auto& tape = ag::Tape<float>::current();
    tape.clear();
    ag::Varf q = ag::Varf::parameter(xf);
    Rng mask_rng(4);
    ag::Varf y = kernels::causal_self_attention(q, heads, slopes_f, 0.5f, 0.2, &mask_rng);
    tape.backward(y, seed);
    grad = q.grad();
    tape.clear();
    return y.value();
  };
  Array<float> g1, g2;
  const Array<float> y1 = run(1, g1), y2 = run(2, g2);
  CHECK(max_abs_diff(y1, y2) == 0.0);
  CHECK(max_abs_diff(g1, g2) == 0.0);
  CHECK(max_abs_diff(g1, Array<float>(g1.shape(), 0.0f)) > 0.0);
  set_num_threads(threads_before);
}

TEST_CASE("generation's one-lane paths equal the fused ops' rows bit for bit in float") {
  // The decoding cache forms the prototypes transposed and Gamma transposed once per stream
  // and reads one row at a time (kernels/prototype_logits.hpp, kernels/osm_scan.hpp); the
  // rows must be the fused ops' own, or sampled text drifts from a forward over the text.
  const std::shared_ptr<const groups::Group> g = groups::make_group("SO(5)");
  Rng rng(3);
  const int64_t n = g->n(), nn = n * n, m = g->dim(), C = 7, N = 6;
  const Array<float> H = g->sample<float>(rng, N), P = g->sample<float>(rng, C);
  const Array<float> log_tau = Array<float>::scalar(0.3f), bias = rng.normal_array<float>(Shape{C}, 1.0);
  const ag::NoGrad no_tape;
  const Array<float> fused = kernels::prototype_logits(*g, ag::Varf::constant(H), ag::Varf::constant(P),
                                                       ag::Varf::constant(log_tau), ag::Varf::constant(bias)).value();
  const Array<float> Pt = kernels::prototypes_transposed(P);
  for (int64_t i = 0; i < N; ++i) {
    Array<float> row(Shape{1, n, n});
    std::copy(H.data() + i * nn, H.data() + (i + 1) * nn, row.data());
    const Array<float> one = kernels::prototype_logits_pretransposed(*g, row, Pt, log_tau, bias);
    for (int64_t c = 0; c < C; ++c) CHECK(one[c] == fused[i * C + c]);
  }
  CHECK_THROWS_AS(kernels::prototype_logits_pretransposed(*g, H, P, log_tau, bias), ShapeError);
  // One scan step of one lane, for each drive, with and without Gamma.
  const Array<float> table = g->sample<float>(rng, 3), H0 = g->sample<float>(rng, 1);
  const Array<float> gamma = rng.normal_array<float>(Shape{m, m}, 0.5);
  for (const kernels::ScanDrive drive : {kernels::ScanDrive::Relative, kernels::ScanDrive::Both, kernels::ScanDrive::Token})
    for (const bool mixed : {false, true}) {
      CAPTURE(static_cast<int>(drive));
      CAPTURE(mixed);
      const ag::Varf G = mixed ? ag::Varf::constant(gamma) : ag::Varf();
      const Array<float> scan =
          kernels::osm_scan(*g, ag::Varf::constant(H0), ag::Varf::constant(table), {2}, 1, 1, G, drive, 0).value();
      const Array<float> gammaT = mixed ? kernels::gamma_transposed(G) : Array<float>();
      Array<float> step(Shape{1, n, n});
      kernels::osm_step_one(*g, H0.data(), table.data() + 2 * nn, mixed ? gammaT.data() : nullptr, drive, step.data());
      for (int64_t k = 0; k < nn; ++k) CHECK(step[k] == scan[k]);
    }
}
