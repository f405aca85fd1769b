// expRNN forward pass and registry entry (see exprnn.hpp). Initialisation: the
// transition starts at Henaff et al. (2016)'s block-diagonal rotations with angles
// uniform in [-pi, pi] (the "henaff" init of expRNN); input columns N(0, 1/h); modReLU
// bias U(-0.01, 0.01); head as nn.Linear, U(-1/sqrt(h), 1/sqrt(h)).
#include "models/exprnn.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "autograd/ops.hpp"
#include "core/profile.hpp"
#include "core/small_gemm.hpp"
#include "groups/expm.hpp"
#include "groups/group_ops.hpp"
#include "kernels/exprnn_scan.hpp"
#include "core/config.hpp"
#include "core/errors.hpp"
#include "models/param_search.hpp"

namespace liegrad::models {

using ag::ParamRole;

template <class T>
ExpRnn<T>::ExpRnn(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes)
    : ModelBase<T>(config, vocab, classes) {
  ConfigReader c = this->model_reader(config);
  hidden_ = c.get_int("hidden", 128, 2);
  c.finish();
  this->config_["type"] = "exprnn";
  this->config_["hidden"] = hidden_;
  group_ = groups::make_group("SO(" + std::to_string(hidden_) + ")");
  Rng rng(seed);
  const int64_t h = hidden_, V = vocab, m = group_->dim();
  Array<double> A(Shape{1, h, h});
  for (int64_t i = 0; i + 1 < h; i += 2) {
    const double theta = rng.uniform(-M_PI, M_PI);
    A.at(0, i, i + 1) = theta;
    A.at(0, i + 1, i) = -theta;
  }
  transition_ = this->add_param("transition", group_->vee(A).template cast<T>(), ParamRole::GroupAlgebra, group_, m);
  input_ = this->add_param("input", rng.normal_array<T>(Shape{V, h}, 1.0 / std::sqrt(static_cast<double>(h))),
                           ParamRole::Weight);
  bias_ = this->add_param("modrelu_bias", rng.uniform_array<T>(Shape{h}, -0.01, 0.01), ParamRole::Bias);
  std::tie(head_w_, head_b_) = this->add_linear_head(rng, h);
}

template <class T>
ag::Var<T> ExpRnn<T>::forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) {
  using namespace ag;
  const int64_t h = hidden_;
  Array<T> h0 = state && !state->empty() ? state->tensors.at(0) : Array<T>(Shape{B, h});
  if (h0.shape() != Shape{B, h})
    throw ShapeError("exprnn: carried state " + h0.shape().str() + " does not fit batch " + std::to_string(B));
  const Var<T> Q = reshape(groups::expm(groups::hat(*group_, transition_)), Shape{h, h});  // exp(A), once per window
  const Var<T> x = embedding(input_, inputs, {B, T_});                                     // U e_x, (B,T,h)
  // h_t = modrelu(Q h_{t-1} + U e_{x_t}) for t < T as one fused op (kernels/exprnn_scan.hpp;
  // kernels::exprnn_scan_reference writes the same recurrence with one tape op per step).
  const Var<T> all = kernels::exprnn_scan(x, Q, bias_, Var<T>::constant(std::move(h0)));  // (B,T,h)
  if (state) {
    Array<T> last(Shape{B, h});
    for (int64_t b = 0; b < B; ++b)
      std::copy(all.value().data() + (b * T_ + T_ - 1) * h, all.value().data() + (b * T_ + T_) * h,
                last.data() + b * h);
    state->tensors = {std::move(last)};
  }
  // The linear head is timed as readout, as in the other models (its FLOPs are the
  // readout family's in models/exprnn_cost.cpp); the recurrence stays "other".
  prof::Tag readout(prof::Family::Readout);
  return add(matmul(all, head_w_), head_b_);  // (B,T,C)
}

namespace {

// out (n) += s W for s (rows) and W (rows, n): one row of C through the register-blocked
// small product (accumulators for up to 64 columns of out held in vector registers while
// the rows of W stream past). The plain loop `out[j] += s[k] W[k, j]` that it replaces
// stored out back to memory for every k: one store per 8 floats, the step's bound.
template <class T>
void row_times_matrix(int64_t rows, int64_t n, const T* s, const T* W, T* out) {
  small_gemm_ld<T>(false, false, 1, n, rows, T(1), s, rows, W, n, T(1), out, n);
}

}  // namespace

template <class T>
Array<T> ExpRnn<T>::decode_step(int32_t symbol, DecodingCache<T>& cache) {
  using namespace ag;
  NoGrad no_grad;
  const int64_t h = hidden_, C = this->C_, V = input_.value().shape()[0];
  if (cache.positions == 0 || cache.constants.empty()) {  // a new stream: exp(A)^T once
    cache.clear();
    const Array<T> Q = reshape(groups::expm(groups::hat(*group_, transition_)), Shape{h, h}).value();
    Array<T> Qt(Shape{h, h});
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < h; ++j) Qt[j * h + i] = Q[i * h + j];
    cache.constants.push_back(Var<T>::constant(std::move(Qt)));
    cache.layers.assign(1, std::vector<T>(static_cast<size_t>(h), T(0)));  // h_0 = 0
  }
  if (symbol < 0 || symbol >= V)  // as the forward's embedding says it
    throw ValueError("embedding: id " + std::to_string(symbol) + " outside the table's " + std::to_string(V) + " rows");
  // One step of kernels::exprnn_scan's recurrence for one lane, then the head, without
  // the tape: at batch 1 the tape ops' allocations and dispatch cost more than the work.
  // Both products are one row times a matrix (row_times_matrix).
  const T* Qt = cache.constants[0].value().data();                        // Q^T, (h,h)
  const T* x = input_.value().data() + static_cast<int64_t>(symbol) * h;  // U e_x, (h)
  const T* bias = bias_.value().data();                                   // (h)
  std::vector<T>& state = cache.layers[0];                                // h_{t-1}, then h_t, (h)
  std::vector<T> z(x, x + h);
  // z = x + h_{t-1} Q^T
  row_times_matrix(h, h, state.data(), Qt, z.data());
  for (int64_t j = 0; j < h; ++j) {  // modrelu: sign(z) max(|z| + b, 0), sign(0) = +1
    const T zj = z[static_cast<size_t>(j)], r = std::max(std::abs(zj) + bias[j], T(0));
    state[static_cast<size_t>(j)] = zj >= T(0) ? r : -r;
  }
  cache.positions += 1;
  Array<T> logits(Shape{C});  // h_t W + c, W (h,C) row by row
  std::copy(head_b_.value().data(), head_b_.value().data() + C, logits.data());
  row_times_matrix(h, C, state.data(), head_w_.value().data(), logits.data());
  return logits;
}

template class ExpRnn<float>;
template class ExpRnn<double>;

ModelSpec exprnn_spec() {
  // 6 h^2 + 6 h V + 6 h^3 P FLOPs (measure/bench.hpp), split per family in models/exprnn_cost.cpp.
  return model_spec<ExpRnn>("exprnn", {.knob = integer_knob("hidden", 2, 4096), .costs_per_token = exprnn_costs});
}

}  // namespace liegrad::models
