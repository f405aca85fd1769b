// The model registry: one entry (ModelSpec) per model type, for the built-in models
// (models/builtin_models.cpp) and for models defined in a program or a plugin library
// built on the installed package alike. An entry holds everything liegrad knows about
// a type by name:
//   - the float and double factories, which make_model calls (and so the trainer,
//     `liegrad eval`, `liegrad sample`, checkpoints and the Python module);
//   - the config keys the model reads besides "type" and "comment" (`liegrad params
//     --help`), recorded from what its constructor reads (config_keys), never listed by hand;
//   - optionally the size knob `liegrad params --match N` searches (param_search.hpp);
//   - optionally the training FLOPs per token `liegrad bench` reports (measure/bench.hpp),
//     and their split per op family with the bytes each family moves (models/roofline.hpp).
// make_model, match_parameter_count and training_flops_per_token look the type up
// here; an unknown type is the same one-line ConfigError from each (find_model_spec).
//
// Adding a model type is its class plus one registration:
//
//   template <class T> class MyRnn : public liegrad::models::ModelBase<T> {
//     MyRnn(const nlohmann::json& config, int64_t vocab, uint64_t seed);  ...
//   };
//   liegrad::models::register_model<MyRnn>("my_rnn");   // then {"type": "my_rnn", ...}
//
// or, with a --match knob and a FLOP count:
//
//   register_model(model_spec<MyRnn>("my_rnn", {.knob = integer_knob("hidden", 1, 4096),
//                                               .flops_per_token = my_rnn_flops}));
//
// (integer_knob: models/param_search.hpp; my_rnn_flops: a FlopsPerToken below).
//
// A class whose constructor also takes the class count C, (config, vocab, seed,
// classes), serves classification tasks (group words); one without serves language
// models (C = V) and make_model refuses other tasks for it. A registered model must
// behave like the built-in ones: config() returns the complete configuration with
// "type" set to the registered name (make_model rebuilds the model from it when a
// checkpoint is loaded), and parameters() lists every trained tensor under a stable
// name. Registration is thread-safe; names are never unregistered; built-in names are
// taken. Tools a model type offers beyond training (a layer probe, a group-state
// readout) are capabilities of its class (models/capabilities.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/model.hpp"
#include "models/roofline.hpp"

namespace liegrad::models {

// Builds a model from its config section for V = vocab input symbols and C = classes
// output classes (make_model passes C = V for a language model).
template <class T>
using ModelFactory =
    std::function<std::unique_ptr<Model<T>>(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes)>;

// The parameter count of a model config (vocabulary and classes fixed by the caller).
using ParameterCounter = std::function<int64_t(const nlohmann::json& model_config)>;

// A size knob for `--match N`: given the model config, its resolved form (every
// default filled in, as Model::config() returns it), the target count and a counter,
// returns a copy of the config with the knob's keys set so that the count is closest
// to the target. Throws ConfigError when the config has no such knob (e.g. a product
// group's d).
struct SizeKnob {
  std::string description;  // what it varies, e.g. "hidden" or "d of the group, then layers"
  std::function<nlohmann::json(const nlohmann::json& config, const nlohmann::json& resolved, int64_t target,
                               const ParameterCounter& count)>
      match;
  explicit operator bool() const { return static_cast<bool>(match); }
};

// Matrix-product FLOPs of one training step per token (conventions in measure/bench.hpp)
// of a resolved model config, for V input symbols, windows of seq_len tokens and the
// measured forward products of exponentials per token.
using FlopsPerToken = std::function<double(const nlohmann::json& resolved, int64_t vocab, int64_t seq_len,
                                           double exp_products_per_token)>;

// What a model type declares besides its factories; every field may stay empty.
struct ModelInfo {
  SizeKnob knob{};                // empty: `--match` is a ConfigError naming the type
  FlopsPerToken flops_per_token{};  // empty: `liegrad bench` reports no FLOP count
  // Per-family FLOPs and bytes (models/roofline.hpp) for `liegrad bench`'s roofline;
  // empty: the roofline names the model families underived. When both are set,
  // flops_per_token should be flops_from_costs(costs_per_token), one count (model_spec
  // sets it so when only the costs are given).
  CostsPerToken costs_per_token{};
};

struct ModelSpec {
  std::string name;
  ModelFactory<float> make_float;
  ModelFactory<double> make_double;
  ModelInfo info;
  template <class T>
  const ModelFactory<T>& factory() const {
    if constexpr (std::is_same_v<T, float>)
      return make_float;
    else
      return make_double;
  }
};

// Throws ConfigError when a language model (built without a class count) is asked for
// `classes` != `vocab` outputs.
void require_language_model(const std::string& type, int64_t vocab, int64_t classes);

namespace detail {
template <template <class> class M, class T>
ModelFactory<T> constructor_factory(const std::string& type) {
  return [type](const nlohmann::json& c, int64_t v, uint64_t s, int64_t classes) -> std::unique_ptr<Model<T>> {
    if constexpr (std::is_constructible_v<M<T>, const nlohmann::json&, int64_t, uint64_t, int64_t>) {
      return std::make_unique<M<T>>(c, v, s, classes);
    } else {
      require_language_model(type, v, classes);
      return std::make_unique<M<T>>(c, v, s);
    }
  };
}
}  // namespace detail

// The entry of a model class template M<T>, constructed from (config, vocab, seed,
// classes) when it has that constructor, else from (config, vocab, seed) as a
// language model. An entry with costs_per_token and no flops_per_token gets its FLOP
// count from the costs (flops_from_costs).
template <template <class> class M>
ModelSpec model_spec(const std::string& type, ModelInfo info = {}) {
  if (!info.flops_per_token && info.costs_per_token) info.flops_per_token = flops_from_costs(info.costs_per_token);
  return {type, detail::constructor_factory<M, float>(type), detail::constructor_factory<M, double>(type),
          std::move(info)};
}

// Registers a model type. Throws ValueError when the name is empty, is a built-in
// type, or is registered already (a plugin loaded twice is harmless: see load_plugin),
// or when a factory is missing.
void register_model(ModelSpec spec);

// The factories-only entry of M (no knob, no FLOP count).
template <template <class> class M>
void register_model(const std::string& type) {
  register_model(model_spec<M>(type));
}

// The entry of `type`, built-in or registered. An unknown type throws the one
// ConfigError every caller gives: "model.type: unknown model type 'X' (known: ...)",
// with a nearest-name suggestion and the plugin route.
const ModelSpec& find_model_spec(const std::string& type);
// The entry of model_config["type"]: ConfigError also when model_config is not an
// object or its "type" is missing or not a string.
const ModelSpec& model_spec_of(const nlohmann::json& model_config);

// Reads `key` of a resolved model config (knobs and FLOP counts read no defaults);
// ConfigError naming the key and the type when it is missing.
const nlohmann::json& resolved_key(const nlohmann::json& resolved, const std::string& key);

// The config keys a type's constructor reads besides "type" and "comment", in the
// order it first reads them: recorded (ConfigKeyRecorder, core/config.hpp) while the
// type's factory builds the model at every default ({"type": name}, 4 symbols and
// classes). The same reads decide which keys make_model rejects as unknown. Empty when
// the type cannot be built at its defaults (a registered type with a required key).
std::vector<std::string> config_keys(const ModelSpec& spec);

// True when `type` names a registered (not built-in) model.
bool is_registered_model(const std::string& type);
// The registered (not built-in) type names, sorted.
std::vector<std::string> registered_model_types();

// The built-in entries, one line per type in models/builtin_models.cpp.
const std::vector<ModelSpec>& builtin_model_specs();

}  // namespace liegrad::models
