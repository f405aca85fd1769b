// OsmFormer::probe (see osmformer.hpp): what each layer's attention and grounding do
// to the states, for `liegrad probe`. The layer is replayed step by step without the
// tape: the attention tangent u_att = Gamma_att vee(H* A), the grounding tangent at the
// H where the reading takes it (relative: after the attention step; combined: before
// it; token: Gamma_gnd b_x), and how far the attention step alone and the whole layer
// move each state. For the first specification's reading with Gamma_gnd = I the
// grounding tangent is about -u_att and the layer barely moves (docs/models.md §5).
#include <cmath>

#include "autograd/ops.hpp"
#include "autograd/tape.hpp"
#include "groups/group_ops.hpp"
#include "kernels/relative_update.hpp"
#include "kernels/token_update.hpp"
#include "models/osmformer.hpp"

namespace liegrad::models {

namespace {

// Coordinates Gamma vee(H* P) (N,m) of the relative tangent towards P.
template <class T>
Array<T> relative_tangent(const groups::Group& g, const ag::Var<T>& H, const ag::Var<T>& P, const ag::Var<T>& Gamma) {
  ag::Var<T> r = groups::vee(g, groups::compose(g, H, P, /*conj_h=*/true));
  if (Gamma.defined()) r = ag::matmul(r, Gamma, false, true);
  return r.value();
}

// Mean over i < N of sqrt(sum_j value(i, j)^2), j < k.
template <class F>
double mean_root_sum_squares(int64_t N, int64_t k, F value) {
  double sum = 0;
  for (int64_t i = 0; i < N; ++i) {
    double s = 0;
    for (int64_t j = 0; j < k; ++j) {
      const double v = value(i, j);
      s += v * v;
    }
    sum += std::sqrt(s);
  }
  return sum / static_cast<double>(N);
}

// Mean over rows of the Euclidean norm of the rows of x (N,k).
template <class T>
double mean_row_norm(const Array<T>& x) {
  const int64_t N = x.shape()[0], k = x.size() / N;
  return mean_root_sum_squares(N, k, [&](int64_t i, int64_t j) { return static_cast<double>(x[i * k + j]); });
}

// Mean over rows of <a_i, b_i> / (|a_i| |b_i|); rows with a zero vector count 0.
template <class T>
double mean_cosine(const Array<T>& a, const Array<T>& b) {
  const int64_t N = a.shape()[0], k = a.size() / N;
  double sum = 0;
  for (int64_t i = 0; i < N; ++i) {
    double ab = 0, aa = 0, bb = 0;
    for (int64_t j = 0; j < k; ++j) {
      const double x = a[i * k + j], y = b[i * k + j];
      ab += x * y;
      aa += x * x;
      bb += y * y;
    }
    if (aa > 0 && bb > 0) sum += ab / std::sqrt(aa * bb);
  }
  return sum / static_cast<double>(N);
}

// Mean over matrices of ||X_i - Y_i||_F, X and Y (N,n,n).
template <class T>
double mean_distance(const Array<T>& X, const Array<T>& Y) {
  const int64_t N = X.shape()[0], nn = X.size() / N;
  return mean_root_sum_squares(N, nn, [&](int64_t i, int64_t j) {
    return static_cast<double>(X[i * nn + j]) - static_cast<double>(Y[i * nn + j]);
  });
}

}  // namespace

template <class T>
std::vector<LayerProbe> OsmFormer<T>::probe(const std::vector<int32_t>& inputs, int64_t B, int64_t T_) {
  using ag::Var;
  const ag::NoGrad no_tape;
  const bool was_training = training();
  set_training(false);  // no update dropout: the model as evaluated
  const groups::Group& g = *cfg_.group;
  const int64_t N = B * T_;
  if (static_cast<int64_t>(inputs.size()) != N)
    throw ShapeError("osmformer probe: " + std::to_string(inputs.size()) + " inputs for a (" + std::to_string(B) +
                     "," + std::to_string(T_) + ") batch");
  const Var<T> M = ag::embedding(embed_.elements(), inputs, {N});
  Var<T> H = M;
  std::vector<LayerProbe> out;
  for (const Layer& layer : blocks_) {
    LayerProbe p;
    const Var<T> A = attention(layer, H, B, T_);
    const Var<T> gamma_att = layer.mix_att.dense();
    const Array<T> u_att = relative_tangent(g, H, A, gamma_att);
    const Var<T> H_att = kernels::relative_update(g, H, A, gamma_att);  // the attention step alone
    const Var<T> gamma_ground = gamma_gnd(layer, gamma_att);
    Array<T> u_gnd;
    Var<T> H_out = H_att;
    switch (grounding_) {
      case Grounding::Relative:
        u_gnd = relative_tangent(g, H_att, M, gamma_ground);
        H_out = kernels::relative_update(g, H_att, M, gamma_ground);
        break;
      case Grounding::Combined:
        u_gnd = relative_tangent(g, H, M, gamma_ground);
        H_out = kernels::combined_update(g, H, A, gamma_att, M, gamma_ground);
        break;
      case Grounding::Token: {
        Var<T> b = ag::reshape(ag::embedding(token_coords(), inputs, {N}), Shape{N, g.dim()});
        const Var<T>& gamma = gamma_ground;
        u_gnd = (gamma.defined() ? ag::matmul(b, gamma, false, true) : b).value();
        H_out = kernels::token_update(g, H_att, token_coords(), gamma, inputs);
        break;
      }
      case Grounding::Off: break;
    }
    p.attention_norm = mean_row_norm(u_att);
    if (!u_gnd.empty()) {
      p.grounding_norm = mean_row_norm(u_gnd);
      p.cosine = mean_cosine(u_att, u_gnd);
    }
    p.attention_move = mean_distance(H_att.value(), H.value());
    p.layer_move = mean_distance(H_out.value(), H.value());
    out.push_back(p);
    H = H_out;
  }
  set_training(was_training);
  return out;
}

template std::vector<LayerProbe> OsmFormer<float>::probe(const std::vector<int32_t>&, int64_t, int64_t);
template std::vector<LayerProbe> OsmFormer<double>::probe(const std::vector<int32_t>&, int64_t, int64_t);

}  // namespace liegrad::models
