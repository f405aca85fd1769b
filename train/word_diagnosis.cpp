// The group-structure diagnosis of word models (see word_diagnosis.hpp).
#include "train/word_diagnosis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "autograd/tape.hpp"
#include "core/errors.hpp"
#include "core/small_gemm.hpp"
#include "models/osm_rnn.hpp"

namespace liegrad::train {

namespace {

// ||X - Y||_F of two n x n matrices.
double distance(const float* X, const float* Y, int64_t nn) {
  double s = 0;
  for (int64_t k = 0; k < nn; ++k) {
    const double d = static_cast<double>(X[k]) - static_cast<double>(Y[k]);
    s += d * d;
  }
  return std::sqrt(s);
}

}  // namespace

nlohmann::json WordDiagnosis::to_json() const {
  nlohmann::json j = {{"state_independent", state_independent}};
  if (state_independent) {
    j["homomorphism_defect_max"] = homomorphism_defect_max;
    j["homomorphism_defect_mean"] = homomorphism_defect_mean;
    j["homomorphism_pairs"] = pairs;
    j["order_defect_max"] = order_defect_max;
  }
  j["drift"] = nlohmann::json::array();
  for (const DriftPoint& d : drift)
    j["drift"].push_back({{"length", d.length}, {"to_true_prototype", d.to_true_prototype},
                          {"to_nearest_prototype", d.to_nearest_prototype}, {"accuracy", d.accuracy}});
  return j;
}

WordDiagnosis transition_defects(const data::WordTask& task, const Array<float>& N) {
  const int64_t V = task.input_vocab();
  if (N.shape().ndim != 3 || N.shape()[0] != V || N.shape()[1] != N.shape()[2])
    throw ShapeError("word diagnosis: transitions " + N.shape().str() + " do not fit " + std::to_string(V) +
                     " input symbols");
  const int64_t n = N.shape()[1], nn = n * n;
  const data::FiniteGroup& G = task.group();
  std::map<int32_t, int32_t> symbol_of;  // element id -> input symbol
  for (int32_t s = 0; s < V; ++s) symbol_of.emplace(task.element_of(s), s);
  WordDiagnosis d;
  d.state_independent = true;
  std::vector<float> prod(static_cast<size_t>(nn)), power(static_cast<size_t>(nn));
  double sum = 0;
  for (int32_t a = 0; a < V; ++a)
    for (int32_t b = 0; b < V; ++b) {
      const auto c = symbol_of.find(G.multiply(task.element_of(a), task.element_of(b)));
      if (c == symbol_of.end()) continue;
      small_gemm_ld<float>(false, false, n, n, n, 1.0f, N.data() + a * nn, n, N.data() + b * nn, n, 0.0f, prod.data(), n);
      const double e = distance(prod.data(), N.data() + static_cast<int64_t>(c->second) * nn, nn);
      d.homomorphism_defect_max = std::max(d.homomorphism_defect_max, e);
      sum += e;
      ++d.pairs;
    }
  d.homomorphism_defect_mean = d.pairs > 0 ? sum / static_cast<double>(d.pairs) : 0.0;
  std::vector<float> eye(static_cast<size_t>(nn), 0.0f);
  for (int64_t i = 0; i < n; ++i) eye[static_cast<size_t>(i * n + i)] = 1.0f;
  for (int32_t g = 0; g < V; ++g) {
    const int32_t e = task.element_of(g);
    int64_t order = 1;  // the least k >= 1 with e^k the identity
    for (int32_t p = e; p != G.identity(); p = G.multiply(p, e)) ++order;
    std::copy(N.data() + g * nn, N.data() + (g + 1) * nn, power.begin());  // N_g^1
    for (int64_t k = 1; k < order; ++k) {
      small_gemm_ld<float>(false, false, n, n, n, 1.0f, power.data(), n, N.data() + g * nn, n, 0.0f, prod.data(), n);
      power.swap(prod);
    }
    d.order_defect_max = std::max(d.order_defect_max, distance(power.data(), eye.data(), nn));
  }
  return d;
}

std::vector<int64_t> drift_lengths(const std::vector<int64_t>& eval_lengths) {
  std::vector<int64_t> out = eval_lengths;
  out.push_back(std::min<int64_t>(4096, data::kMaxWordLength));
  for (int64_t& l : out) l = std::min<int64_t>(l, data::kMaxWordLength);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<WordDiagnosis> diagnose_word_model(models::Model<float>& model, const data::WordTask& task,
                                                 uint64_t run_seed, const std::vector<int64_t>& lengths,
                                                 int64_t words) {
  auto* rnn = dynamic_cast<models::OsmRnn<float>*>(&model);
  if (!rnn || lengths.empty()) return std::nullopt;
  WordDiagnosis d;
  if (rnn->state_independent()) d = transition_defects(task, rnn->transitions());
  const Array<float> P = rnn->prototypes();
  const int64_t C = P.shape()[0], n = P.shape()[1], nn = n * n;
  const int64_t L = *std::max_element(lengths.begin(), lengths.end());
  const data::Batch w = data::word_eval_set(task, run_seed, data::WordSplit::Test, L, words);
  const bool was_training = model.training();
  model.set_training(false);
  const ag::NoGrad no_tape;
  const Array<float> H = rnn->encode(w.inputs, w.B, L, nullptr).value();  // (B*L,n,n)
  const Array<float> logits = model.forward(w.inputs, w.B, L, nullptr).value();  // (B,L,C)
  model.set_training(was_training);
  for (int64_t len : lengths) {
    DriftPoint p;
    p.length = len;
    for (int64_t b = 0; b < w.B; ++b) {
      const int64_t i = b * L + len - 1;
      const float* h = H.data() + i * nn;
      const int32_t y = w.targets[static_cast<size_t>(i)];
      p.to_true_prototype += distance(h, P.data() + static_cast<int64_t>(y) * nn, nn);
      double nearest = INFINITY;
      for (int64_t c = 0; c < C; ++c) nearest = std::min(nearest, distance(h, P.data() + c * nn, nn));
      p.to_nearest_prototype += nearest;
      const float* row = logits.data() + i * C;
      p.accuracy += (std::max_element(row, row + C) - row) == y ? 1.0 : 0.0;
    }
    p.to_true_prototype /= static_cast<double>(w.B);
    p.to_nearest_prototype /= static_cast<double>(w.B);
    p.accuracy /= static_cast<double>(w.B);
    d.drift.push_back(p);
  }
  return d;
}

}  // namespace liegrad::train
