// The model interface shared by every sequence model in liegrad.
//
// A model maps a batch of token windows inputs (B,T) to logits (B,T,C) over C
// classes: the next symbol for language models (C = V, the input vocabulary), or
// another label per position, e.g. the running product of a group word
// (data/group_words.hpp), where C need not equal V. Only the readout's size follows C.
// Recurrent models also carry a state across windows: forward() starts from
// `state` (initial state when it is empty) and leaves the final state in it,
// detached from the tape, so evaluation can stream a whole split window by window
// and truncated back-propagation can continue across training windows.
//
// Parameters are named members listed by parameters() as ag::Parameter
// records; their names are the checkpoint keys and follow docs/models.md.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/var.hpp"
#include "autograd/parameter.hpp"

namespace liegrad::models {

template <class T>
struct RecurrentState {
  std::vector<Array<T>> tensors;  // model-specific, e.g. H (B,n,n) or (h, c) per layer
  bool empty() const { return tensors.empty(); }
  void clear() { tensors.clear(); }
};

template <class T>
class LayerProbing;
template <class T>
class GroupStateReadout;
template <class T>
class ContinuousInput;
template <class T>
class IncrementalDecoding;

template <class T>
class Model {
 public:
  virtual ~Model() = default;
  // The spec's model name: "osm_rnn", "osmformer", "transformer", "lstm", "exprnn".
  virtual std::string type() const = 0;
  // V: the number of input symbols (rows of the input embedding).
  virtual int64_t vocab_size() const = 0;
  // C: the number of output classes (rows of the readout); V unless built with classes.
  virtual int64_t num_classes() const = 0;
  virtual bool recurrent() const { return false; }
  // Training mode turns on stochastic layers (dropout); evaluation and sampling
  // switch it off. Models without such layers ignore it.
  virtual void set_training(bool) {}
  virtual bool training() const { return false; }
  // The trainer calls this before every training step with a value that depends only
  // on the run's seed and the step number, so stochastic layers reseed from it and draw
  // the same numbers whether or not the run was interrupted and resumed. Models
  // without such layers ignore it.
  virtual void begin_step(uint64_t /*step_seed*/) {}
  // inputs: B*T token ids, row-major (B,T) (T_ is the window length T; T names the
  // scalar type). Returns logits (B,T,C).
  virtual ag::Var<T> forward(const std::vector<int32_t>& inputs, int64_t B, int64_t T_,
                             RecurrentState<T>* state = nullptr) = 0;
  virtual std::vector<ag::Parameter<T>>& parameters() = 0;
  // The complete model configuration, with defaults filled in.
  virtual const nlohmann::json& config() const = 0;
  // Optional capabilities (models/capabilities.hpp): the interface when the model
  // offers it, else nullptr; the tools that need one name the model type that lacks it.
  virtual LayerProbing<T>* layer_probing() { return nullptr; }
  virtual GroupStateReadout<T>* group_state_readout() { return nullptr; }
  virtual ContinuousInput<T>* continuous_input() { return nullptr; }
  // Incremental decoding (models/decoding.hpp): the attention models' cached steps.
  virtual IncrementalDecoding<T>* incremental_decoding() { return nullptr; }

  // Degrees of freedom: m per group element, else element counts (docs/models.md §2).
  int64_t parameter_count() {
    int64_t n = 0;
    for (const auto& p : parameters()) n += p.dof;
    return n;
  }
  ag::Parameter<T>* find_parameter(const std::string& name) {
    for (auto& p : parameters())
      if (p.name == name) return &p;
    return nullptr;
  }
};

// The most array elements building one model may allocate (its parameters and their
// initialisation): 2^28, 1 GiB of float parameters, far beyond what 2 CPU cores train.
inline constexpr int64_t kMaxModelElements = int64_t(1) << 28;

// Builds a model from its config section (see docs/ and configs/) with the factory of
// its type's registry entry (models/registry.hpp: the built-in types and registered
// ones alike); `vocab` is the input vocabulary size V and `classes` the readout size C
// (<= 0: C = V, a language model); initial weights are drawn from `seed`. An unknown
// type (find_model_spec's one-line message), unknown keys and out-of-range values
// throw ConfigError naming them; a model needing more than kMaxModelElements array
// elements throws ValueError.
template <class T>
std::unique_ptr<Model<T>> make_model(const nlohmann::json& model_config, int64_t vocab, uint64_t seed,
                                     int64_t classes = 0);

// The model type names make_model accepts: the built-in ones, then those registered
// with register_model (models/registry.hpp), e.g. by a plugin (models/plugin.hpp).
std::vector<std::string> model_types();
// The built-in ones only: "osmformer", "osm_rnn", "transformer", "lstm", "exprnn".
const std::vector<std::string>& builtin_model_types();

}  // namespace liegrad::models
