// Optional capabilities of a model: interfaces a model class implements besides
// Model<T> when a tool can use them. A tool asks the model for one through Model<T>'s
// accessors (layer_probing(), group_state_readout()), never by its class, and says in
// one line when the model lacks it (nullptr). The built-in OSMFormer offers
// LayerProbing (`liegrad probe`), the OSM-RNN GroupStateReadout (the group-structure
// diagnosis of word tasks, tasks/word_diagnosis.hpp), the OSM-RNN, LSTM and transformer
// ContinuousInput (real-valued inputs, the rotation-tracking task); a registered or plugin model
// offers either by deriving from the interface and overriding the accessor:
//
//   template <class T> class MyRnn : public ModelBase<T>, public GroupStateReadout<T> {
//     GroupStateReadout<T>* group_state_readout() override { return this; }  ...
//   };
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "autograd/var.hpp"
#include "core/errors.hpp"
#include "models/model.hpp"

namespace liegrad::models {

// What one layer of an attention-and-grounding model does to the states, measured by
// LayerProbing::probe (means over tokens; docs/models.md §5.1).
struct LayerProbe {
  double attention_norm = 0;  // |u_att|: coordinates of the attention tangent
  double grounding_norm = 0;  // |u_gnd|: coordinates of the grounding tangent (0 when off)
  double cosine = 0;          // <u_att, u_gnd> / (|u_att| |u_gnd|), per token, averaged
  double attention_move = 0;  // ||H_in exp(hat(u_att)) - H_in||_F: the attention step alone
  double layer_move = 0;      // ||H_out - H_in||_F: the whole layer
  // 1 - layer_move / attention_move: the fraction of the attention step that the
  // grounding takes back (1: all of it, 0: none, < 0: the grounding moves further).
  double undone() const { return attention_move > 0 ? 1.0 - layer_move / attention_move : 0.0; }
};

// A model whose layers each take an attention step and a grounding step on group-valued
// states (the OSMFormer), measured layer by layer (`liegrad probe`).
template <class T>
class LayerProbing {
 public:
  virtual ~LayerProbing() = default;
  // Each layer's tangents and moves on one batch of inputs (B,T), as evaluated (no
  // dropout) and without recording.
  virtual std::vector<LayerProbe> probe(const std::vector<int32_t>& inputs, int64_t B, int64_t T_) = 0;
  // The name of the layers' grounding reading, printed beside the probe (e.g. "relative").
  virtual std::string grounding_reading() const = 0;
};

// A model whose state after each position is a group element H_t (n x n) read out by
// comparing it with one prototype P_c per class (the OSM-RNN), so the group structure
// of a word task can be checked on it (tasks/word_diagnosis.hpp).
template <class T>
class GroupStateReadout {
 public:
  virtual ~GroupStateReadout() = default;
  // The states H_1..H_T of every row of inputs (B,T), (B*T,n,n) row-major over (B,T),
  // from `state` (the initial state when it is null or empty).
  virtual ag::Var<T> encode(const std::vector<int32_t>& inputs, int64_t B, int64_t T_, RecurrentState<T>* state) = 0;
  // True when the step H <- H N_x depends on the input symbol x only.
  virtual bool state_independent() const = 0;
  // The transitions N_v (V,n,n) of every input symbol, without recording; ValueError
  // when state_independent() is false.
  virtual Array<T> transitions() const = 0;
  // The prototypes P_c (C,n,n), without recording.
  virtual Array<T> prototypes() const = 0;
  // Sets the transitions of `symbols` to N (k,n,n), group elements, so that
  // transitions() then returns them (to rounding); a model whose parameters cannot
  // express a chosen transition exactly throws ConfigError saying why (checked even for
  // an empty list, so a caller can ask early). Without recording.
  virtual void set_transitions(const std::vector<int32_t>& symbols, const Array<T>& N) {
    (void)symbols, (void)N;
    throw ConfigError("this model's transitions cannot be set (GroupStateReadout::set_transitions)");
  }
};

// A model that reads real-valued inputs: each position's feature vector x_t in R^F,
// F = vocab_size(), takes the place of a token's one-hot row, so the token v is the
// feature vector e_v and the input map is the model's embedding table read as a linear
// map R^F -> R^D (the OSM-RNN's element drive: R^F -> its Lie algebra). The rest of the
// model is unchanged.
template <class T>
class ContinuousInput {
 public:
  virtual ~ContinuousInput() = default;
  // features (B,T,F) row-major -> outputs (B,T,C), as forward() for tokens, carrying
  // `state` likewise. ValueError for a feature array of another size or a non-finite
  // feature; ConfigError when the model's configuration cannot read features.
  virtual ag::Var<T> forward_features(const Array<T>& features, int64_t B, int64_t T_, RecurrentState<T>* state) = 0;
  // True when every position's C = 9 outputs are a rotation R in SO(3), row-major
  // (model.readout or model.head "rotation").
  virtual bool outputs_rotations() const = 0;
};

}  // namespace liegrad::models
