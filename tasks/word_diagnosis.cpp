// The group-structure diagnosis of word models (see word_diagnosis.hpp).
#include "tasks/word_diagnosis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "autograd/tape.hpp"
#include "core/errors.hpp"
#include "core/lapack.hpp"
#include "core/small_gemm.hpp"
#include "models/capabilities.hpp"

namespace liegrad::tasks {

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

// ||(X - Y) U||_F for n x n X, Y and U (n, k) row-major.
double distance_on(const float* X, const float* Y, const std::vector<double>& U, int64_t n, int64_t k) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < k; ++c) {
      double v = 0;
      for (int64_t j = 0; j < n; ++j)
        v += (static_cast<double>(X[i * n + j]) - static_cast<double>(Y[i * n + j])) * U[static_cast<size_t>(j * k + c)];
      s += v * v;
    }
  return std::sqrt(s);
}

// S += D^T D for the n x n difference D = X - Y; D (n*n) is scratch.
void add_gram(const float* X, const float* Y, int64_t n, std::vector<double>& D, std::vector<double>& S) {
  for (int64_t k = 0; k < n * n; ++k) D[static_cast<size_t>(k)] = static_cast<double>(X[k]) - static_cast<double>(Y[k]);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < n; ++i) {
      const double dri = D[static_cast<size_t>(r * n + i)];
      for (int64_t j = 0; j < n; ++j) S[static_cast<size_t>(i * n + j)] += dri * D[static_cast<size_t>(r * n + j)];
    }
}

// The defect spectrum, exact subspace and its basis from S = sum D^T D over `pairs` pairs.
void split_spectrum(std::vector<double> S, int64_t n, int64_t pairs, WordDiagnosis& d) {
  if (pairs == 0 || n == 0) return;
  for (double& x : S) x /= static_cast<double>(pairs);
  std::vector<double> w(static_cast<size_t>(n));
  lapack::symmetric_eigen(n, S.data(), w.data());  // S <- eigenvectors (columns), w ascending
  double exact = 0, rest = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double r = std::sqrt(std::max(0.0, w[static_cast<size_t>(i)]));
    d.defect_spectrum.push_back(r);
    if (r < kExactDirection) {
      ++d.exact_dims;
      exact += r * r;
    } else {
      rest += r * r;
    }
  }
  const int64_t k = d.exact_dims;
  d.exact_rms_defect = k > 0 ? std::sqrt(exact / static_cast<double>(k)) : 0.0;
  d.rest_rms_defect = k < n ? std::sqrt(rest / static_cast<double>(n - k)) : 0.0;
  d.exact_basis.assign(static_cast<size_t>(n * k), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < k; ++c) d.exact_basis[static_cast<size_t>(i * k + c)] = S[static_cast<size_t>(i * n + c)];
}

}  // namespace

nlohmann::json WordDiagnosis::to_json() const {
  nlohmann::json j = {{"state_independent", state_independent}};
  if (state_independent) {
    j["homomorphism_defect_max"] = homomorphism_defect_max;
    j["homomorphism_defect_mean"] = homomorphism_defect_mean;
    j["homomorphism_pairs"] = pairs;
    j["order_defect_max"] = order_defect_max;
    j["defect_spectrum"] = defect_spectrum;
    j["exact_dims"] = exact_dims;
    j["exact_rms_defect"] = exact_rms_defect;
    j["rest_rms_defect"] = rest_rms_defect;
  }
  j["drift"] = nlohmann::json::array();
  for (const DriftPoint& d : drift) {
    nlohmann::json p = {{"length", d.length}, {"to_true_prototype", d.to_true_prototype},
                        {"to_nearest_prototype", d.to_nearest_prototype}, {"accuracy", d.accuracy}};
    if (d.on_exact_subspace >= 0) p["on_exact_subspace"] = d.on_exact_subspace;
    j["drift"].push_back(p);
  }
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
  std::vector<double> S(static_cast<size_t>(nn), 0.0), D(static_cast<size_t>(nn));
  double sum = 0;
  for (int32_t a = 0; a < V; ++a)
    for (int32_t b = 0; b < V; ++b) {
      const auto c = symbol_of.find(G.multiply(task.element_of(a), task.element_of(b)));
      if (c == symbol_of.end()) continue;
      small_gemm_ld<float>(false, false, n, n, n, 1.0f, N.data() + a * nn, n, N.data() + b * nn, n, 0.0f, prod.data(), n);
      const float* Nc = N.data() + static_cast<int64_t>(c->second) * nn;
      const double e = distance(prod.data(), Nc, nn);
      add_gram(prod.data(), Nc, n, D, S);
      d.homomorphism_defect_max = std::max(d.homomorphism_defect_max, e);
      sum += e;
      ++d.pairs;
    }
  d.homomorphism_defect_mean = d.pairs > 0 ? sum / static_cast<double>(d.pairs) : 0.0;
  split_spectrum(std::move(S), n, d.pairs, d);
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
  models::GroupStateReadout<float>* readout = model.group_state_readout();
  if (!readout || lengths.empty()) return std::nullopt;
  WordDiagnosis d;
  if (readout->state_independent()) d = transition_defects(task, readout->transitions());
  const Array<float> P = readout->prototypes();
  const int64_t C = P.shape()[0], n = P.shape()[1], nn = n * n;
  const int64_t L = *std::max_element(lengths.begin(), lengths.end());
  const data::Batch w = data::word_eval_set(task, run_seed, data::WordSplit::Test, L, words);
  const bool was_training = model.training();
  model.set_training(false);
  const ag::NoGrad no_tape;
  const Array<float> H = readout->encode(w.inputs, w.B, L, nullptr).value();  // (B*L,n,n)
  const Array<float> logits = model.forward(w.inputs, w.B, L, nullptr).value();  // (B,L,C)
  model.set_training(was_training);
  for (int64_t len : lengths) {
    DriftPoint p;
    p.length = len;
    if (d.exact_dims > 0) p.on_exact_subspace = 0;
    for (int64_t b = 0; b < w.B; ++b) {
      const int64_t i = b * L + len - 1;
      const float* h = H.data() + i * nn;
      const int32_t y = w.targets[static_cast<size_t>(i)];
      p.to_true_prototype += distance(h, P.data() + static_cast<int64_t>(y) * nn, nn);
      if (d.exact_dims > 0)
        p.on_exact_subspace += distance_on(h, P.data() + static_cast<int64_t>(y) * nn, d.exact_basis, n, d.exact_dims);
      double nearest = INFINITY;
      for (int64_t c = 0; c < C; ++c) nearest = std::min(nearest, distance(h, P.data() + c * nn, nn));
      p.to_nearest_prototype += nearest;
      const float* row = logits.data() + i * C;
      p.accuracy += (std::max_element(row, row + C) - row) == y ? 1.0 : 0.0;
    }
    p.to_true_prototype /= static_cast<double>(w.B);
    p.to_nearest_prototype /= static_cast<double>(w.B);
    if (d.exact_dims > 0) p.on_exact_subspace /= static_cast<double>(w.B);
    p.accuracy /= static_cast<double>(w.B);
    d.drift.push_back(p);
  }
  return d;
}

}  // namespace liegrad::tasks
