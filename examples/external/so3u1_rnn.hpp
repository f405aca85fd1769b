// so3u1_rnn: an OSM-RNN variant built outside liegrad, from the installed package's
// public ops only. The state lives on G = SO(3) x U(1) (any group make_group accepts,
// config key "group"); the update is the OSM-RNN's (Nunley 2026, docs/models.md §4), the readout
// is new: a bottleneck of K learned prototypes followed by a linear layer,
//
//   M_v = exp(hat(e_v)), P_k = exp(hat(p_k))           token and prototype elements
//   R_t = H_t* M_{x_t};  u_t = Gamma vee(Pi(R_t));  H_{t+1} = H_t exp(hat(u_t))
//   phi_k = Re tr(H_{t+1}* P_k)   (k < K)             K similarities, |phi_k| <= d
//   logits_t = phi W + b                              W (K,V), b (V)
//
// (the library's OSM readout uses V prototypes and one temperature instead).
// so3u1_logits is the whole computation as a function of the weights, so the model's
// forward() and the gradient check (check_vjp) run the very same code.
//
// Parameters: embed (V,m), proto (K,m) algebra coordinates; mix Gamma (m,m) = I at
// init; out.weight (K,V); out.bias (V). State: H (B,n,n), carried across windows.
// Config: {"type": "so3u1_rnn", "group": "SO(3)xU(1)", "features": 16, "init_scale": 1.0}
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/var.hpp"
#include "groups/group.hpp"
#include "models/model_base.hpp"

namespace so3u1 {

using liegrad::ag::Var;

template <class T>
struct Weights {
  Var<T> embed;  // (V,m)
  Var<T> mix;    // (m,m)
  Var<T> proto;  // (K,m)
  Var<T> out_w;  // (K,V)
  Var<T> out_b;  // (V)
};

// inputs (B*T ids, row-major (B,T)); H: the state (B,n,n), read and replaced by the
// final state (on the tape). Returns logits (B,T,V).
template <class T>
Var<T> so3u1_logits(const liegrad::groups::Group& g, const Weights<T>& w, const std::vector<int32_t>& inputs,
                    int64_t B, int64_t T_, Var<T>& H);

template <class T>
class So3U1Rnn : public liegrad::models::ModelBase<T> {
 public:
  So3U1Rnn(const nlohmann::json& config, int64_t vocab, uint64_t seed);
  std::string type() const override { return "so3u1_rnn"; }
  bool recurrent() const override { return true; }
  Var<T> forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_,
                 liegrad::models::RecurrentState<T>* state) override;
  const liegrad::groups::Group& group() const { return *group_; }
  const Weights<T>& weights() const { return w_; }

 private:
  std::shared_ptr<const liegrad::groups::Group> group_;
  Weights<T> w_;
};

// Registers "so3u1_rnn" with liegrad's model registry (once; later calls do nothing).
void register_so3u1_rnn();

}  // namespace so3u1
