// Tutorial chapter 6 (docs/tutorial/06-osm-rnn-step.md): one OSM-RNN step (docs/models.md §4),
//
//     R = H* M,   u = Gamma vee(R),   H' = H exp(hat(u)),
//
// written with the plain tape ops of chapters 1-4 on U(2) (stored 4 x 4, m = 4, s = 1/2),
// its gradient checked with check_vjp, then compared with what the model runs: the fused
// tape op kernels::relative_update (one pass per token, backward written by hand) and,
// over a window of 6 steps, the fused scan kernels::osm_scan. ag::check_equivalent runs
// both routes on the same inputs and compares the outputs and, for one shared random
// cotangent, the gradients of every input.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "autograd/tape.hpp"
#include "core/rng.hpp"
#include "groups/group.hpp"
#include "kernels/osm_scan.hpp"
#include "kernels/reference.hpp"
#include "kernels/relative_update.hpp"
#include "osm_step.hpp"
#include "tutorial.hpp"

using namespace liegrad;
using ag::Vard;

using tutorial::osm_step;  // the step itself, six tape ops: examples/tutorial/osm_step.hpp

int main() {
  tutorial::Checks check;
  auto g = groups::make_group("U(2)");
  const int64_t n = g->n(), m = g->dim();
  Rng rng(6);
  const Array<double> H = g->sample<double>(rng, 3), M = g->sample<double>(rng, 3);  // 3 tokens (3,4,4)
  Array<double> Gamma = rng.normal_array<double>(Shape{m, m}, 0.3);
  for (int64_t k = 0; k < m; ++k) Gamma.at(k, k) += 1;  // near I, where training starts

  const Vard H1 = osm_step(*g, Vard::constant(H), Vard::constant(M), Vard::constant(Gamma));
  std::printf("one step on %s for 3 tokens: defect of H' %.1e, Re tr(H'* M) = %.6f (was %.6f)\n", g->name().c_str(),
              g->defect(H1.value()), g->inner(H1.value(), M)[0], g->inner(H, M)[0]);
  check("step_stays_on_group", "defect", g->defect(H1.value()), 1e-13);

  // Tape ops recorded by one step with inputs that need gradients: the plain chain, the fused op.
  auto& tape = ag::Tape<double>::current();
  tape.clear();
  osm_step(*g, Vard::parameter(H), Vard::parameter(M), Vard::parameter(Gamma));
  const size_t plain_ops = tape.size();
  tape.clear();
  kernels::relative_update(*g, Vard::parameter(H), Vard::parameter(M), Vard::parameter(Gamma));
  const size_t fused_ops = tape.size();
  tape.clear();
  std::printf("tape ops recorded by one step: %zu plain (matmul, vee, matmul, hat, expm, matmul), %zu fused\n",
              plain_ops, fused_ops);
  check("plain_step_records_six_tape_ops", "abs_err", std::fabs(double(plain_ops) - 6), 0.5);
  check("fused_step_records_one_tape_op", "abs_err", std::fabs(double(fused_ops) - 1), 0.5);

  // The gradient of the plain step in H, M and Gamma against central differences.
  const ag::VjpFn plain = [&](const std::vector<Vard>& in) { return osm_step(*g, in[0], in[1], in[2]); };
  const ag::VjpResult vjp = ag::check_vjp("osm step", plain, {H, M, Gamma}, rng);
  std::printf("check_vjp of the plain step: max relative error %.1e\n", vjp.max_rel_error);
  check("plain_step_check_vjp", "rel_err", vjp.max_rel_error, 1e-6);

  // The fused op the models run, and the library's own unfused reference.
  const ag::VjpFn fused = [&](const std::vector<Vard>& in) {
    return kernels::relative_update(*g, in[0], in[1], in[2]);
  };
  const ag::VjpFn library_reference = [&](const std::vector<Vard>& in) {
    return kernels::relative_update_reference(*g, in[0], in[1], in[2]);
  };
  for (const auto& [label, other] :
       {std::pair<const char*, ag::VjpFn>{"fused_relative_update", fused}, {"library_reference", library_reference}}) {
    const ag::EquivalenceResult e = ag::check_equivalent(label, other, plain, {H, M, Gamma}, rng);
    std::printf("%s vs the plain step: forward %.1e, backward %.1e\n", label, e.forward_error, e.backward_error);
    check((std::string(label) + "_forward").c_str(), "rel_err", e.forward_error, 1e-12);
    check((std::string(label) + "_backward").c_str(), "rel_err", e.backward_error, 1e-12);
  }

  // A window of 6 steps for 2 lanes from H0 = I, tokens from a table of 3 elements.
  const int64_t B = 2, T = 6, V = 3;
  const std::vector<int32_t> ids = {0, 2, 1, 1, 0, 2, /* lane 1 */ 2, 2, 0, 1, 0, 1};
  const Array<double> table = g->sample<double>(rng, V);
  Array<double> H0(Shape{B, n, n});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < n; ++i) H0.at(b, i, i) = 1;
  const ag::VjpFn scan_by_hand = [&](const std::vector<Vard>& in) {
    const Vard rows = ag::reshape(in[0], Shape{V, n * n});
    Vard state = Vard::constant(H0);
    std::vector<Vard> states;
    for (int64_t t = 0; t < T; ++t) {
      const std::vector<int32_t> step_ids = {ids[static_cast<size_t>(t)], ids[static_cast<size_t>(T + t)]};
      const Vard Mt = ag::reshape(ag::embedding(rows, step_ids, {B}), Shape{B, n, n});  // M_{x_t} per lane
      state = osm_step(*g, state, Mt, in[1]);
      states.push_back(ag::reshape(state, Shape{B, 1, n * n}));
    }
    return ag::reshape(ag::concat(states, 1), Shape{B * T, n, n});  // rows (b, t), as osm_scan returns
  };
  const ag::VjpFn scan_fused = [&](const std::vector<Vard>& in) {
    return kernels::osm_scan(*g, Vard::constant(H0), in[0], ids, B, T, in[1], kernels::ScanDrive::Relative, 0);
  };
  const ag::EquivalenceResult e = ag::check_equivalent("osm_scan", scan_fused, scan_by_hand, {table, Gamma}, rng);
  std::printf("osm_scan vs 6 plain steps (gradients of the table and Gamma): forward %.1e, backward %.1e\n",
              e.forward_error, e.backward_error);
  check("fused_scan_forward", "rel_err", e.forward_error, 1e-12);
  check("fused_scan_backward", "rel_err", e.backward_error, 1e-12);
  return check.status();
}
