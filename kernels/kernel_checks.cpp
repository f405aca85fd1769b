// The fused kernels' check lists (see kernel_checks.hpp).
#include "kernels/kernel_checks.hpp"

#include <memory>
#include <string>

#include "autograd/elementwise.hpp"
#include "autograd/linear.hpp"
#include "autograd/shape_ops.hpp"
#include "groups/group.hpp"
#include "kernels/causal_mha.hpp"
#include "kernels/exprnn_scan.hpp"
#include "kernels/lstm_scan.hpp"
#include "kernels/mean_attention.hpp"
#include "kernels/osm_scan.hpp"
#include "kernels/prototype_logits.hpp"
#include "kernels/reference.hpp"
#include "kernels/relative_update.hpp"
#include "kernels/token_update.hpp"

namespace liegrad::kernels {

namespace {

using A = Array<double>;
using Vs = std::vector<ag::Vard>;

// A check_vjp over Gaussian inputs of the given shapes.
ag::OpCheck gaussian_check(const std::string& name, std::vector<Shape> shapes, ag::VjpFn f) {
  return {name, [=](Rng& rng) {
            std::vector<A> inputs;
            for (const Shape& s : shapes) inputs.push_back(rng.normal_array<double>(s));
            return ag::check_vjp(name, f, inputs, rng);
          }};
}

// fused == reference on inputs made by `draw`.
ag::EquivalenceCheck equivalence(const std::string& name, std::function<std::vector<A>(Rng&)> draw, ag::VjpFn fused,
                                 ag::VjpFn reference) {
  return {name, [=](Rng& rng) { return ag::check_equivalent(name, fused, reference, draw(rng), rng); }};
}

std::vector<int32_t> random_ids(Rng& rng, int64_t count, int64_t V) {
  std::vector<int32_t> ids(static_cast<size_t>(count));
  for (auto& id : ids) id = static_cast<int32_t>(rng.integer(V));
  return ids;
}

}  // namespace

std::vector<ag::OpCheck> kernel_op_checks() {
  std::vector<ag::OpCheck> c;
  // Head-averaged attention (OSMFormer): one row block, and several (T = 21 > 16).
  const std::vector<double> slopes = {0.5, 0.25, 0.125};
  c.push_back(gaussian_check("mean_head_attention", {{12, 4}, {3}}, [slopes](const Vs& x) {
    return mean_head_attention(x[0], x[1], slopes, 0.5, 2, 6);
  }));
  c.push_back(gaussian_check("mean_head_attention(T=21, no slopes)", {{2 * 21, 2, 2}, {2}}, [](const Vs& x) {
    return mean_head_attention(x[0], x[1], std::vector<double>{}, 1.0, 2, 21);
  }));
  // The recompute path (weights rebuilt in the backward from the row log-normalisers).
  c.push_back(gaussian_check("mean_head_attention(recompute, T=21)", {{2 * 21, 2, 2}, {3}}, [slopes](const Vs& x) {
    return mean_head_attention(x[0], x[1], slopes, 0.5, 2, 21, AttentionMemory::Recompute);
  }));
  // LSTM layer over a window (B=3, T=4, h=5) and a single step; every input
  // (xw, W_hh, h0, c0) differentiable.
  c.push_back(gaussian_check("lstm_scan", {{3, 4, 20}, {5, 20}, {3, 5}, {3, 5}}, [](const Vs& x) {
    Array<double> c_last;
    return lstm_scan(x[0], ag::scale(x[1], 0.5), x[2], x[3], &c_last);
  }));
  // xw also feeds an op recorded later, whose backward runs first: lstm_scan adds its
  // gradient to one that has started instead of writing it in place.
  c.push_back(gaussian_check("lstm_scan(xw's gradient started)", {{3, 4, 20}, {5, 20}, {3, 5}, {3, 5}}, [](const Vs& x) {
    const ag::Vard hs = lstm_scan(x[0], ag::scale(x[1], 0.5), x[2], x[3], static_cast<Array<double>*>(nullptr));
    return ag::add(hs, ag::slice(x[0], 2, 0, 5));
  }));
  c.push_back(gaussian_check("lstm_scan(T=1)", {{2, 1, 8}, {2, 8}, {2, 2}, {2, 2}}, [](const Vs& x) {
    return lstm_scan(x[0], x[1], x[2], x[3], static_cast<Array<double>*>(nullptr));
  }));
  // The expRNN recurrence (B=3, T=4, h=5) and a single step; every input (x, Q, the
  // modReLU bias, h0) differentiable. The bias is scaled to 0.05 as in modrelu's own
  // check, so few entries sit near the kink |z| + b = 0. Q is any square matrix here: the
  // op does not use its orthogonality.
  c.push_back(gaussian_check("exprnn_scan", {{3, 4, 5}, {5, 5}, {5}, {3, 5}}, [](const Vs& x) {
    return exprnn_scan(x[0], ag::scale(x[1], 0.5), ag::scale(x[2], 0.05), x[3]);
  }));
  // x also feeds an op recorded later, whose backward runs first: exprnn_scan adds its
  // gradient to one that has started instead of writing it in place.
  c.push_back(gaussian_check("exprnn_scan(x's gradient started)", {{3, 4, 5}, {5, 5}, {5}, {3, 5}}, [](const Vs& x) {
    return ag::add(exprnn_scan(x[0], ag::scale(x[1], 0.5), ag::scale(x[2], 0.05), x[3]), x[0]);
  }));
  c.push_back(gaussian_check("exprnn_scan(T=1)", {{2, 1, 4}, {4, 4}, {4}, {2, 4}}, [](const Vs& x) {
    return exprnn_scan(x[0], x[1], ag::scale(x[2], 0.05), x[3]);
  }));
  // Causal multi-head attention on qkv (B,T,3D): 2 heads of 3, T = 5 and T = 19 (two row blocks).
  c.push_back(gaussian_check("causal_self_attention", {{2, 5, 18}}, [](const Vs& x) {
    return causal_self_attention(x[0], 2, std::vector<double>{0.5, 0.25}, 0.6);
  }));
  c.push_back(gaussian_check("causal_self_attention(T=19, no slopes)", {{1, 19, 12}}, [](const Vs& x) {
    return causal_self_attention(x[0], 2, std::vector<double>{}, 0.5);
  }));
  // qkv also feeds an op recorded later, whose backward runs first: the attention's
  // products then add to qkv's gradient instead of assigning it.
  c.push_back(gaussian_check("causal_self_attention(qkv's gradient started, T=19)", {{2, 19, 12}}, [](const Vs& x) {
    return ag::add(causal_self_attention(x[0], 2, std::vector<double>{0.5, 0.25}, 0.5), ag::slice(x[0], 2, 0, 4));
  }));
  // The recompute path, alone and with qkv's gradient started by a later use.
  c.push_back(gaussian_check("causal_self_attention(recompute, T=19)", {{2, 19, 12}}, [](const Vs& x) {
    return causal_self_attention(x[0], 2, std::vector<double>{0.5, 0.25}, 0.5, 0.0, nullptr, AttentionMemory::Recompute);
  }));
  c.push_back(gaussian_check("causal_self_attention(recompute, qkv's gradient started, T=19)", {{2, 19, 12}},
                             [](const Vs& x) {
                               return ag::add(causal_self_attention(x[0], 2, std::vector<double>{0.5, 0.25}, 0.5, 0.0,
                                                                    nullptr, AttentionMemory::Recompute),
                                              ag::slice(x[0], 2, 0, 4));
                             }));
  // With attention dropout: a generator made afresh in each call draws the same mask,
  // so the op is one fixed function of qkv for the finite differences.
  c.push_back(gaussian_check("causal_self_attention(dropout 0.3, T=19)", {{2, 19, 12}}, [](const Vs& x) {
    Rng mask_rng(11);
    return causal_self_attention(x[0], 2, std::vector<double>{0.5, 0.25}, 0.5, 0.3, &mask_rng);
  }));
  // The prototype readout on a real, a complex (real_scale 1/2) and a product group, N = 300
  // rows (two of the backward's 256-row chunks, the second partial); then with H's
  // gradient started by a later use of H (the written-in-place path adds instead), and
  // with H as its own prototypes (N = C: both products into one gradient buffer).
  for (const char* spec : {"SO(3)", "U(2)", "SO(2)xU(2)"}) {
    std::shared_ptr<const groups::Group> g = groups::make_group(spec);
    const int64_t n = g->n();
    c.push_back(gaussian_check(std::string("prototype_logits ") + g->name(), {{300, n, n}, {5, n, n}, {}, {5}},
                               [g](const Vs& x) { return prototype_logits(*g, x[0], x[1], ag::scale(x[2], 0.5), x[3]); }));
  }
  {
    std::shared_ptr<const groups::Group> g = groups::make_group("SO(3)");
    c.push_back(gaussian_check("prototype_logits(H's gradient started)", {{7, 3, 3}, {4, 3, 3}, {}, {4}}, [g](const Vs& x) {
      const ag::Vard first = prototype_logits(*g, x[0], x[1], x[2], x[3]);
      return ag::add(first, prototype_logits(*g, ag::scale(x[0], 0.5), x[1], x[2], x[3]));
    }));
    c.push_back(gaussian_check("prototype_logits(H as its own prototypes)", {{4, 3, 3}, {}, {4}}, [g](const Vs& x) {
      return prototype_logits(*g, x[0], x[0], x[1], x[2]);
    }));
  }
  for (ag::OpCheck& u : update_op_checks()) c.push_back(std::move(u));
  for (ag::OpCheck& u : combined_update_op_checks()) c.push_back(std::move(u));
  for (ag::OpCheck& u : token_update_op_checks()) c.push_back(std::move(u));
  for (ag::OpCheck& u : scan_op_checks()) c.push_back(std::move(u));
  return c;
}

std::vector<ag::EquivalenceCheck> kernel_reference_checks() {
  std::vector<ag::EquivalenceCheck> c;
  // The OSM update and scan on real, complex and product groups, with every mixing form
  // the kernels take (identity: no Gamma; a dense Gamma) and inputs away from the identity,
  // so the exponentials need squarings (the Haar samples make H* P of norm ~n).
  for (const char* spec : {"SO(3)", "SO(6)", "U(3)", "SU(2)", "SO(2)xU(2)", "T(3)"}) {
    std::shared_ptr<const groups::Group> g = groups::make_group(spec);
    const int64_t n = g->n(), m = g->dim();
    for (const bool mixed : {false, true}) {
      const std::string tag = std::string(" ") + g->name() + (mixed ? " (Gamma)" : "");
      const int64_t N = 37;  // several chunks of 16 and a partial one
      c.push_back(equivalence(
          "relative_update == reference" + tag,
          [=](Rng& rng) {
            std::vector<A> in = {g->sample<double>(rng, N), g->sample<double>(rng, N)};
            if (mixed) in.push_back(rng.normal_array<double>(Shape{m, m}, 0.5));
            return in;
          },
          [g, mixed](const Vs& x) { return relative_update(*g, x[0], x[1], mixed ? x[2] : ag::Vard()); },
          [g, mixed](const Vs& x) { return relative_update_reference(*g, x[0], x[1], mixed ? x[2] : ag::Vard()); }));
      for (const bool second_mixed : {false, true}) {
        const std::string tag2 = std::string(" ") + g->name() + (mixed ? " (Gamma1" : " (no Gamma1") +
                                 (second_mixed ? ", Gamma2)" : ", no Gamma2)");
        c.push_back(equivalence(
            "combined_update == reference" + tag2,
            [=](Rng& rng) {
              std::vector<A> in = {g->sample<double>(rng, N), g->sample<double>(rng, N), g->sample<double>(rng, N),
                                   rng.normal_array<double>(Shape{m, m}, 0.5), rng.normal_array<double>(Shape{m, m}, 0.5)};
              return in;
            },
            [g, mixed, second_mixed](const Vs& x) {
              return combined_update(*g, x[0], x[1], mixed ? x[3] : ag::Vard(), x[2], second_mixed ? x[4] : ag::Vard());
            },
            [g, mixed, second_mixed](const Vs& x) {
              return combined_update_reference(*g, x[0], x[1], mixed ? x[3] : ag::Vard(), x[2],
                                               second_mixed ? x[4] : ag::Vard());
            }));
      }
      if (mixed)  // one Gamma for both targets: the kernel's merged term (Term::P2)
        c.push_back(equivalence(
            "combined_update == reference" + std::string(" ") + g->name() + " (one shared Gamma)",
            [=](Rng& rng) {
              return std::vector<A>{g->sample<double>(rng, N), g->sample<double>(rng, N), g->sample<double>(rng, N),
                                    rng.normal_array<double>(Shape{m, m}, 0.5)};
            },
            [g](const Vs& x) { return combined_update(*g, x[0], x[1], x[3], x[2], x[3]); },
            [g](const Vs& x) { return combined_update_reference(*g, x[0], x[1], x[3], x[2], x[3]); }));
      {
        const int64_t V_tok = 6;
        const std::vector<int32_t> tok_ids = [&] {
          Rng r(5);
          return random_ids(r, N, V_tok - 1);  // the last token unused: its gradient row stays zero
        }();
        c.push_back(equivalence(
            "token_update == reference" + tag,
            [=](Rng& rng) {
              std::vector<A> in = {g->sample<double>(rng, N), rng.normal_array<double>(Shape{V_tok, m}, 1.5)};
              if (mixed) in.push_back(rng.normal_array<double>(Shape{m, m}, 0.5));
              return in;
            },
            [=](const Vs& x) { return token_update(*g, x[0], x[1], mixed ? x[2] : ag::Vard(), tok_ids); },
            [=](const Vs& x) { return token_update_reference(*g, x[0], x[1], mixed ? x[2] : ag::Vard(), tok_ids); }));
      }
      const int64_t B = 3, T_ = 9, V = 5;
      for (const ScanDrive drive : {ScanDrive::Relative, ScanDrive::Token, ScanDrive::Both}) {
        const char* label = drive == ScanDrive::Relative ? "relative" : (drive == ScanDrive::Token ? "token" : "both");
        const int64_t renorm = drive == ScanDrive::Relative ? 4 : 0;  // renormalisation at t = 4, 8
        const std::string name = std::string("osm_scan ") + label + (renorm ? " renormalize 4" : "") + " == reference" + tag;
        // The ids are drawn once per check from a fixed seed so both routes see the same sequence.
        const std::vector<int32_t> ids = [&] {
          Rng r(7);
          return random_ids(r, B * T_, V);
        }();
        c.push_back(equivalence(
            name,
            [=](Rng& rng) {
              std::vector<A> in = {g->sample<double>(rng, B), g->sample<double>(rng, V)};
              if (mixed) in.push_back(rng.normal_array<double>(Shape{m, m}, 0.5));
              return in;
            },
            [=](const Vs& x) { return osm_scan(*g, x[0], x[1], ids, B, T_, mixed ? x[2] : ag::Vard(), drive, renorm); },
            [=](const Vs& x) {
              return osm_scan_reference(*g, x[0], x[1], ids, B, T_, mixed ? x[2] : ag::Vard(), drive, renorm);
            }));
      }
      {  // The token drive's per-row path with renormalisation, and a table row no id uses
         // (its gradient row stays zero).
        const std::vector<int32_t> ids = [&] {
          Rng r(11);
          return random_ids(r, B * T_, V - 1);
        }();
        c.push_back(equivalence(
            "osm_scan token renormalize 3, a row unused == reference" + tag,
            [=](Rng& rng) {
              std::vector<A> in = {g->sample<double>(rng, B), g->sample<double>(rng, V)};
              if (mixed) in.push_back(rng.normal_array<double>(Shape{m, m}, 0.5));
              return in;
            },
            [=](const Vs& x) { return osm_scan(*g, x[0], x[1], ids, B, T_, mixed ? x[2] : ag::Vard(), ScanDrive::Token, 3); },
            [=](const Vs& x) {
              return osm_scan_reference(*g, x[0], x[1], ids, B, T_, mixed ? x[2] : ag::Vard(), ScanDrive::Token, 3);
            }));
      }
      (void)n;
    }
  }
  // Group-similarity attention on OSM states (D = n^2, s = 1/2 for complex storage) and on
  // plain rows; with ALiBi slopes and without; T = 21 spans two row blocks.
  struct AttentionCase {
    const char* group;
    int64_t B, T_;
    bool alibi;
  };
  for (const AttentionCase& k : {AttentionCase{"SO(4)", 2, 21, true}, AttentionCase{"U(2)", 3, 7, false},
                                 AttentionCase{"SO(2)xU(2)", 1, 17, true}}) {
    std::shared_ptr<const groups::Group> g = groups::make_group(k.group);
    const int heads = 3;
    const std::vector<double> slopes = k.alibi ? std::vector<double>{0.5, 0.25, 0.125} : std::vector<double>{};
    const double s = g->real_scale();
    const int64_t B = k.B, T_ = k.T_;
    c.push_back(equivalence(
        std::string("mean_head_attention == reference ") + g->name() + (k.alibi ? " alibi" : ""),
        [=](Rng& rng) { return std::vector<A>{g->sample<double>(rng, B * T_), rng.normal_array<double>(Shape{heads}, 0.5)}; },
        [=](const Vs& x) { return mean_head_attention(x[0], x[1], slopes, s, B, T_); },
        [=](const Vs& x) { return mean_head_attention_reference(x[0], x[1], slopes, s, B, T_); }));
    c.push_back(equivalence(
        std::string("mean_head_attention recompute == kept weights ") + g->name() + (k.alibi ? " alibi" : ""),
        [=](Rng& rng) { return std::vector<A>{g->sample<double>(rng, B * T_), rng.normal_array<double>(Shape{heads}, 0.5)}; },
        [=](const Vs& x) { return mean_head_attention(x[0], x[1], slopes, s, B, T_, AttentionMemory::Recompute); },
        [=](const Vs& x) { return mean_head_attention(x[0], x[1], slopes, s, B, T_, AttentionMemory::Keep); }));
  }
  // Transformer attention: 2 and 4 heads, T across one and two row blocks.
  for (const int64_t T_ : {int64_t(5), int64_t(19)}) {
    for (const int heads : {2, 4}) {
      const std::vector<double> slopes = T_ == 5 ? std::vector<double>{} : std::vector<double>(static_cast<size_t>(heads), 0.3);
      const std::string name = "causal_self_attention == reference h=" + std::to_string(heads) + " T=" + std::to_string(T_);
      c.push_back(equivalence(
          name, [=](Rng& rng) { return std::vector<A>{rng.normal_array<double>(Shape{2, T_, 3 * 4 * heads})}; },
          [=](const Vs& x) { return causal_self_attention(x[0], heads, slopes, 0.5); },
          [=](const Vs& x) { return causal_self_attention_reference(x[0], heads, slopes, 0.5); }));
      c.push_back(equivalence(
          "causal_self_attention recompute == kept weights h=" + std::to_string(heads) + " T=" + std::to_string(T_),
          [=](Rng& rng) { return std::vector<A>{rng.normal_array<double>(Shape{2, T_, 3 * 4 * heads})}; },
          [=](const Vs& x) { return causal_self_attention(x[0], heads, slopes, 0.5, 0.0, nullptr, AttentionMemory::Recompute); },
          [=](const Vs& x) { return causal_self_attention(x[0], heads, slopes, 0.5, 0.0, nullptr, AttentionMemory::Keep); }));
    }
  }
  // With attention dropout, both sides drawing from generators in the same state: the
  // fused op's mask is ag::dropout's on the (B*h,T,T) probabilities.
  for (const double p : {0.1, 0.5}) {
    const std::vector<double> slopes = {0.3, 0.2};
    c.push_back(equivalence(
        "causal_self_attention == reference, dropout " + std::to_string(p).substr(0, 3) + " h=2 T=19",
        [](Rng& rng) { return std::vector<A>{rng.normal_array<double>(Shape{2, 19, 3 * 8})}; },
        [=](const Vs& x) {
          Rng mask_rng(5);
          return causal_self_attention(x[0], 2, slopes, 0.5, p, &mask_rng);
        },
        [=](const Vs& x) {
          Rng mask_rng(5);
          return causal_self_attention_reference(x[0], 2, slopes, 0.5, p, &mask_rng);
        }));
  }
  // The LSTM window: B = 3 lanes, T = 6 steps, h = 5.
  c.push_back(equivalence(
      "lstm_scan == reference B=3 T=6 h=5",
      [](Rng& rng) {
        return std::vector<A>{rng.normal_array<double>(Shape{3, 6, 20}), rng.normal_array<double>(Shape{5, 20}, 0.5),
                              rng.normal_array<double>(Shape{3, 5}), rng.normal_array<double>(Shape{3, 5})};
      },
      [](const Vs& x) { return lstm_scan(x[0], x[1], x[2], x[3], static_cast<Array<double>*>(nullptr)); },
      [](const Vs& x) { return lstm_scan_reference(x[0], x[1], x[2], x[3]); }));
  // The expRNN window: B = 3 lanes, T = 7 steps, h = 6, a bias with both signs (some
  // units switched off by modReLU).
  c.push_back(equivalence(
      "exprnn_scan == reference B=3 T=7 h=6",
      [](Rng& rng) {
        return std::vector<A>{rng.normal_array<double>(Shape{3, 7, 6}), rng.normal_array<double>(Shape{6, 6}, 0.5),
                              rng.normal_array<double>(Shape{6}, 0.3), rng.normal_array<double>(Shape{3, 6})};
      },
      [](const Vs& x) { return exprnn_scan(x[0], x[1], x[2], x[3]); },
      [](const Vs& x) { return exprnn_scan_reference(x[0], x[1], x[2], x[3]); }));
  // The fused dense layers (autograd/linear.hpp) on 2 x 150 = 300 rows, three of
  // linear_gelu's 128-row blocks, a partial one last; with and without bias.
  const auto normals = [](std::vector<Shape> shapes) {
    return [shapes](Rng& rng) {
      std::vector<A> in;
      for (const Shape& s : shapes) in.push_back(rng.normal_array<double>(s));
      return in;
    };
  };
  c.push_back(equivalence("linear == reference R=300 K=6 N=5", normals({{2, 150, 6}, {6, 5}, {5}}),
                          [](const Vs& x) { return ag::linear(x[0], x[1], x[2]); },
                          [](const Vs& x) { return linear_reference(x[0], x[1], x[2]); }));
  c.push_back(equivalence("linear_gelu == reference R=300 K=6 N=5", normals({{2, 150, 6}, {6, 5}, {5}}),
                          [](const Vs& x) { return ag::linear_gelu(x[0], x[1], x[2]); },
                          [](const Vs& x) { return linear_gelu_reference(x[0], x[1], x[2]); }));
  c.push_back(equivalence("linear_gelu == reference, no bias R=300 K=6 N=5", normals({{300, 6}, {6, 5}}),
                          [](const Vs& x) { return ag::linear_gelu(x[0], x[1], ag::Vard()); },
                          [](const Vs& x) { return linear_gelu_reference(x[0], x[1], ag::Vard()); }));
  c.push_back(equivalence("linear_residual == reference R=300 K=6 N=5", normals({{2, 150, 6}, {6, 5}, {5}, {2, 150, 5}}),
                          [](const Vs& x) { return ag::linear_residual(x[0], x[1], x[2], x[3]); },
                          [](const Vs& x) { return linear_residual_reference(x[0], x[1], x[2], x[3]); }));
  // The residual is the input (x + x W + b): both gradients add into one buffer.
  c.push_back(equivalence("linear_residual == reference, r = x R=6 K=N=4", normals({{2, 3, 4}, {4, 4}, {4}}),
                          [](const Vs& x) { return ag::linear_residual(x[0], x[1], x[2], x[0]); },
                          [](const Vs& x) { return linear_residual_reference(x[0], x[1], x[2], x[0]); }));
  // The prototype readout against inner_all -> mul(exp(log_tau)) -> add(bias), on the
  // groups of the updates above, N = 300 rows.
  for (const char* spec : {"SO(3)", "U(3)", "SU(2)", "SO(2)xU(2)"}) {
    std::shared_ptr<const groups::Group> g = groups::make_group(spec);
    const int64_t n = g->n();
    c.push_back(equivalence(std::string("prototype_logits == reference ") + g->name(),
                            normals({{300, n, n}, {6, n, n}, {}, {6}}),
                            [g](const Vs& x) { return prototype_logits(*g, x[0], x[1], x[2], x[3]); },
                            [g](const Vs& x) { return prototype_logits_reference(*g, x[0], x[1], x[2], x[3]); }));
  }
  return c;
}

}  // namespace liegrad::kernels
