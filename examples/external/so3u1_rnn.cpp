// The so3u1_rnn model (see so3u1_rnn.hpp): the forward pass from liegrad's tape ops
// (autograd/, groups/group_ops.hpp, groups/expm.hpp) and the model class.
#include "so3u1_rnn.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "autograd/elementwise.hpp"
#include "autograd/linear.hpp"
#include "autograd/matmul.hpp"
#include "autograd/nn_ops.hpp"
#include "autograd/shape_ops.hpp"
#include "core/errors.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"
#include "groups/group_ops.hpp"
#include "core/config.hpp"
#include "models/param_search.hpp"
#include "models/registry.hpp"

namespace so3u1 {

using namespace liegrad;

template <class T>
Var<T> so3u1_logits(const groups::Group& g, const Weights<T>& w, const std::vector<int32_t>& inputs, int64_t B,
                    int64_t T_, Var<T>& H) {
  const int64_t n = g.n(), V = w.embed.shape()[0];
  if (static_cast<int64_t>(inputs.size()) != B * T_)
    throw ShapeError("so3u1_rnn: " + std::to_string(inputs.size()) + " inputs for a (" + std::to_string(B) + "," +
                     std::to_string(T_) + ") batch");
  if (H.shape() != Shape{B, n, n}) throw ShapeError("so3u1_rnn: state " + H.shape().str() + " for batch " + std::to_string(B));
  // Group elements of the tokens, flattened to rows for the gather, and the prototypes.
  const Var<T> M = ag::reshape(groups::expm(groups::hat(g, w.embed)), Shape{V, n * n});  // (V,n*n)
  const Var<T> P = groups::expm(groups::hat(g, w.proto));                                 // (K,n,n)
  std::vector<Var<T>> steps;
  std::vector<int32_t> ids(static_cast<size_t>(B));
  for (int64_t t = 0; t < T_; ++t) {
    for (int64_t b = 0; b < B; ++b) ids[static_cast<size_t>(b)] = inputs[static_cast<size_t>(b * T_ + t)];
    const Var<T> Mx = ag::reshape(ag::embedding(M, ids, {B}), Shape{B, n, n});  // (B,n,n)
    const Var<T> R = groups::compose(g, H, Mx, /*conj_h=*/true);                 // H* M_x
    const Var<T> u = ag::matmul(groups::vee(g, R), w.mix, false, true);          // (B,m) Gamma^T
    H = groups::compose(g, H, groups::expm(groups::hat(g, u)));                   // H exp(hat(u))
    const Var<T> phi = groups::inner_all(g, H, P);                                // (B,K)
    steps.push_back(ag::reshape(ag::linear(phi, w.out_w, w.out_b), Shape{B, 1, V}));
  }
  return ag::concat(steps, 1);  // (B,T,V)
}

template <class T>
So3U1Rnn<T>::So3U1Rnn(const nlohmann::json& config, int64_t vocab, uint64_t seed)
    : models::ModelBase<T>(config, vocab) {
  ConfigReader c(config, "model");
  c.allow({"type", "comment"});
  const std::string group = c.get_string("group", "SO(3)xU(1)");
  const int64_t K = c.get_int("features", 16, 1, 4096);
  const double init_scale = c.get_double("init_scale", 1.0, 0.0, 100.0);
  c.finish();
  group_ = groups::make_group(group);
  const int64_t m = group_->dim();
  if (m < 1) throw ConfigError("model.group: '" + group + "' has no Lie algebra (m = 0)");
  // The complete configuration: what make_model rebuilds this model from.
  this->config_ = {{"type", "so3u1_rnn"}, {"group", group_->name()}, {"features", K}, {"init_scale", init_scale}};
  Rng rng(seed);
  const double coord_std = init_scale / std::sqrt(static_cast<double>(m));
  using ag::ParamRole;
  w_.embed = this->add_param("embed", rng.normal_array<T>(Shape{vocab, m}, coord_std), ParamRole::GroupAlgebra,
                             group_, vocab * m);
  w_.proto = this->add_param("proto", rng.normal_array<T>(Shape{K, m}, coord_std), ParamRole::GroupAlgebra, group_,
                             K * m);
  w_.mix = this->add_param("mix", Array<T>::eye(m), ParamRole::Mixing);
  w_.out_w = this->add_param("out.weight", rng.normal_array<T>(Shape{K, vocab}, 1.0 / std::sqrt(double(K))),
                             ParamRole::Weight);
  w_.out_b = this->add_param("out.bias", Array<T>(Shape{vocab}), ParamRole::Bias);
}

template <class T>
Var<T> So3U1Rnn<T>::forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_,
                            models::RecurrentState<T>* state) {
  Var<T> H;
  if (state && !state->empty()) {
    H = Var<T>::constant(state->tensors.at(0));
  } else {
    const Array<T> I = group_->template identity<T>();  // (n,n)
    const int64_t nn = I.size();
    Array<T> H0(Shape{B, group_->n(), group_->n()});
    for (int64_t b = 0; b < B; ++b) std::copy(I.data(), I.data() + nn, H0.data() + b * nn);
    H = Var<T>::constant(std::move(H0));
  }
  Var<T> logits = so3u1_logits(*group_, w_, inputs, B, T_, H);
  if (state) state->tensors = {H.value()};  // detached: truncated back-propagation
  return logits;
}

template Var<float> so3u1_logits(const groups::Group&, const Weights<float>&, const std::vector<int32_t>&, int64_t,
                                 int64_t, Var<float>&);
template Var<double> so3u1_logits(const groups::Group&, const Weights<double>&, const std::vector<int32_t>&, int64_t,
                                  int64_t, Var<double>&);
template class So3U1Rnn<float>;
template class So3U1Rnn<double>;

void register_so3u1_rnn() {
  static std::once_flag once;
  // The registry entry: the factories from the class and the knob `liegrad params
  // --match N` searches (the number of features K); the keys it reads are recorded from
  // its constructor. It declares no FLOP count (`liegrad bench` says so);
  // register_model<So3U1Rnn>("so3u1_rnn") alone would register the factories only.
  std::call_once(once, [] {
    models::register_model(models::model_spec<So3U1Rnn>(
        "so3u1_rnn", {.knob = models::integer_knob("features", 1, 4096)}));
  });
}

}  // namespace so3u1
