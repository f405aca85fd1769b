// The warm start at the alphabet curriculum's end (see word_warm_start.hpp).
#include "tasks/word_warm_start.hpp"

#include <algorithm>
#include <deque>
#include <vector>

#include "core/errors.hpp"

namespace liegrad::tasks {

std::string warm_start_from_generators(const data::WordTask& task, models::GroupStateReadout<float>& model) {
  if (task.inputs() != "all")
    throw ValueError("warm start: needs data.inputs \"all\" (one symbol per element), got \"" + task.inputs() + "\"");
  const data::FiniteGroup& G = task.group();
  const int64_t order = G.order();
  const Array<float> N = model.transitions();  // (V,n,n), V = |G|
  const int64_t n = N.shape()[1], nn = n * n;
  const std::vector<int32_t> gens = task.generator_symbols();
  // Breadth-first from the identity: T_g = T_p N_s for g = p . s.
  std::vector<double> T(static_cast<size_t>(order * nn), 0.0);
  std::vector<int64_t> depth(static_cast<size_t>(order), -1);
  for (int64_t i = 0; i < n; ++i) T[static_cast<size_t>(i * n + i)] = 1.0;  // T_e = I (the identity is element 0)
  depth[static_cast<size_t>(G.identity())] = 0;
  std::deque<int32_t> queue{G.identity()};
  int64_t longest = 0;
  while (!queue.empty()) {
    const int32_t p = queue.front();
    queue.pop_front();
    for (int32_t s : gens) {
      const int32_t g = G.multiply(p, task.element_of(s));
      if (depth[static_cast<size_t>(g)] >= 0) continue;
      depth[static_cast<size_t>(g)] = depth[static_cast<size_t>(p)] + 1;
      longest = std::max(longest, depth[static_cast<size_t>(g)]);
      const double* Tp = T.data() + p * nn;
      const float* Ns = N.data() + static_cast<int64_t>(s) * nn;
      double* Tg = T.data() + static_cast<int64_t>(g) * nn;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < n; ++k) {
          const double a = Tp[i * n + k];
          for (int64_t j = 0; j < n; ++j) Tg[i * n + j] += a * static_cast<double>(Ns[k * n + j]);
        }
      queue.push_back(g);
    }
  }
  // Every element but the generators takes its product (the standard generators
  // generate G, so the search reaches every element).
  std::vector<int32_t> symbols;
  for (int32_t g = 0; g < static_cast<int32_t>(order); ++g)
    if (std::find(gens.begin(), gens.end(), g) == gens.end()) symbols.push_back(g);
  Array<float> out(Shape{static_cast<int64_t>(symbols.size()), n, n});
  for (size_t i = 0; i < symbols.size(); ++i)
    for (int64_t j = 0; j < nn; ++j)
      out[static_cast<int64_t>(i) * nn + j] = static_cast<float>(T[static_cast<size_t>(symbols[i] * nn + j)]);
  model.set_transitions(symbols, out);
  return "warm start: the transitions of " + std::to_string(symbols.size()) + " elements set from the " +
         std::to_string(gens.size()) + " generators' words (longest " + std::to_string(longest) + ")";
}

}  // namespace liegrad::tasks
