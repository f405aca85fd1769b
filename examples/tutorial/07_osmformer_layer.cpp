// Tutorial chapter 7 (docs/tutorial/07-osmformer-layer.md): one OSMFormer layer (docs/models.md §5)
// on SO(4) for T = 5 positions and h = 2 heads, with H_i = M_{x_i} at the start:
//
//   s^k_ij = beta_k Re tr(H_i* H_j) - slope_k (i - j)   for j <= i (causal), beta_k = exp(log_beta_k)
//   a^k_ij = softmax_j(s^k_ij),    A_i = (1/h) sum_k sum_j a^k_ij H_j        (A_i is not in G)
//   H_i <- H_i exp(hat(Gamma_att vee(H_i* A_i)))                           the attention update
//   H_i <- H_i exp(hat(Gamma_gnd vee(H_i* M_i)))                           grounding
//
// built from plain tape ops (inner_all for the Gram matrix, an additive mask, softmax,
// matmul, the step of osm_step.hpp), gradient-checked, and compared with the fused ops the
// model runs: kernels::mean_head_attention and kernels::relative_update.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "autograd/attention.hpp"
#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "core/rng.hpp"
#include "groups/group.hpp"
#include "groups/group_ops.hpp"
#include "kernels/mean_attention.hpp"
#include "kernels/relative_update.hpp"
#include "osm_step.hpp"
#include "tutorial.hpp"

using namespace liegrad;
using ag::Vard;

int main() {
  tutorial::Checks check;
  auto g = groups::make_group("SO(4)");
  const int64_t n = g->n(), m = g->dim(), T = 5;
  const int h = 2;
  const std::vector<double> slopes = ag::alibi_slopes(h);  // 2^(-8k/h), k = 1..h (ALiBi, Press et al. 2022)
  std::printf("ALiBi slopes, h = %d heads: %.8f %.8f\n", h, slopes[0], slopes[1]);
  Rng rng(7);
  const Array<double> M = g->sample<double>(rng, T);  // token elements M_{x_i} (T,n,n)
  const Array<double> log_beta(Shape{h}, {-0.2, 0.4});
  Array<double> G_att = rng.normal_array<double>(Shape{m, m}, 0.3), G_gnd = rng.normal_array<double>(Shape{m, m}, 0.3);
  for (int64_t k = 0; k < m; ++k) G_att.at(k, k) += 1, G_gnd.at(k, k) += 1;

  // A_i by hand: the Gram matrix once, then per head a masked softmax, averaged.
  const ag::VjpFn attention = [&](const std::vector<Vard>& in) {
    const Vard S = groups::inner_all(*g, in[0], in[0]);  // (T,T), S_ij = Re tr(H_i* H_j)
    Vard Abar;
    for (int k = 0; k < h; ++k) {
      Array<double> bias(Shape{T, T});  // -slope (i - j) on and below the diagonal, -1e30 (probability 0) above
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j)
          bias.at(i, j) = j <= i ? -slopes[static_cast<size_t>(k)] * double(i - j) : -1e30;
      const Vard beta = ag::exp(ag::slice(in[1], 0, k, k + 1));
      const Vard a = ag::softmax(ag::add(ag::mul(S, beta), Vard::constant(bias)));  // a^k (T,T), rows sum to 1
      Abar = k == 0 ? a : ag::add(Abar, a);
    }
    Abar = ag::scale(Abar, 1.0 / h);
    return ag::reshape(ag::matmul(Abar, ag::reshape(in[0], Shape{T, n * n})), Shape{T, n, n});
  };
  const ag::VjpFn attention_fused = [&](const std::vector<Vard>& in) {
    return kernels::mean_head_attention(in[0], in[1], slopes, g->real_scale(), 1, T);
  };
  // The whole layer: attention, the attention update, grounding.
  auto layer = [&](const ag::VjpFn& att, bool fused, const std::vector<Vard>& in) {
    const Vard& Mv = in[0];
    const Vard A = att({Mv, in[1]});
    const Vard H1 = fused ? kernels::relative_update(*g, Mv, A, in[2]) : tutorial::osm_step(*g, Mv, A, in[2]);
    return fused ? kernels::relative_update(*g, H1, Mv, in[3]) : tutorial::osm_step(*g, H1, Mv, in[3]);
  };
  const ag::VjpFn layer_plain = [&](const std::vector<Vard>& in) { return layer(attention, false, in); };
  const ag::VjpFn layer_fused = [&](const std::vector<Vard>& in) { return layer(attention_fused, true, in); };

  // What attention does, on constants (no tape).
  {
    ag::NoGrad no_tape;
    auto A_of = [&](const Array<double>& tokens) {
      return attention({Vard::constant(tokens), Vard::constant(log_beta)}).value();
    };
    const Array<double> A = A_of(M);
    const Array<double> S = g->inner(M, M);  // Re tr(M_i* M_i) per i
    std::printf("Re tr(M_0* M_0) = %.12f (= d for any element of SO(d)); defect of A (averages, not in G): %.2f\n",
                S[0], g->defect(A));
    // Weights are convex: T copies of one element Q average to Q.
    Array<double> same(Shape{T, n, n});
    const Array<double> Q = g->sample<double>(rng);
    for (int64_t i = 0; i < same.size(); ++i) same[i] = Q[i % (n * n)];
    check("equal_tokens_average_to_themselves", "max_abs_err", max_abs_diff(A_of(same), same), 1e-14);
    // Causality: a new last token leaves A_0 .. A_{T-2} exactly as they were.
    Array<double> changed = M;
    const Array<double> other = g->sample<double>(rng);
    for (int64_t i = 0; i < n * n; ++i) changed[(T - 1) * n * n + i] = other[i];
    const Array<double> A2 = A_of(changed);
    double past = 0;
    for (int64_t i = 0; i < (T - 1) * n * n; ++i) past = std::fmax(past, std::fabs(A2[i] - A[i]));
    check("attention_is_causal", "max_abs_change", past, 1e-300);
    const Array<double> H =
        layer_plain({Vard::constant(M), Vard::constant(log_beta), Vard::constant(G_att), Vard::constant(G_gnd)})
            .value();
    std::printf("defect of the layer's output: %.1e\n", g->defect(H));
    check("layer_output_on_group", "defect", g->defect(H), 1e-13);
  }
  const ag::VjpResult vjp = ag::check_vjp("osmformer layer", layer_plain, {M, log_beta, G_att, G_gnd}, rng);
  std::printf("check_vjp of the plain layer (M, log_beta, Gamma_att, Gamma_gnd): max relative error %.1e\n",
              vjp.max_rel_error);
  check("plain_layer_check_vjp", "rel_err", vjp.max_rel_error, 1e-6);

  const ag::EquivalenceResult ea = ag::check_equivalent("attention", attention_fused, attention, {M, log_beta}, rng);
  std::printf("mean_head_attention vs by hand: forward %.1e, backward %.1e\n", ea.forward_error, ea.backward_error);
  check("fused_attention_forward", "rel_err", ea.forward_error, 1e-12);
  check("fused_attention_backward", "rel_err", ea.backward_error, 1e-12);
  const ag::EquivalenceResult el =
      ag::check_equivalent("layer", layer_fused, layer_plain, {M, log_beta, G_att, G_gnd}, rng);
  std::printf("fused layer vs by hand: forward %.1e, backward %.1e\n", el.forward_error, el.backward_error);
  check("fused_layer_forward", "rel_err", el.forward_error, 1e-12);
  check("fused_layer_backward", "rel_err", el.backward_error, 1e-12);
  return check.status();
}
