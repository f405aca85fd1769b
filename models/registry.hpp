// The model registry: model types defined outside liegrad's models/ folder (in a
// program or a plugin library built on the installed package) become known to
// make_model, and so to the trainer, `liegrad eval`, `liegrad sample`, checkpoints and
// the Python module, by registering a factory under a new type name.
//
//   template <class T> class MyRnn : public liegrad::models::ModelBase<T> {
//     MyRnn(const nlohmann::json& config, int64_t vocab, uint64_t seed);  ...
//   };
//   liegrad::models::register_model<MyRnn>("my_rnn");   // then {"type": "my_rnn", ...}
//
// A registered model must behave like the built-in ones: config() returns the complete
// configuration with "type" set to the registered name (make_model rebuilds the model
// from it when a checkpoint is loaded), and parameters() lists every trained tensor
// under a stable name. Registration is thread-safe; names are never unregistered.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/model.hpp"

namespace liegrad::models {

template <class T>
using ModelFactory = std::function<std::unique_ptr<Model<T>>(const nlohmann::json& config, int64_t vocab, uint64_t seed)>;

// Registers `type` for both scalar types. Throws ValueError when the name is empty, is a
// built-in type, or is registered already (a plugin loaded twice is harmless: see
// load_plugin).
void register_model(const std::string& type, ModelFactory<float> make_float, ModelFactory<double> make_double);

// The same for a model class template M<T> with the constructor (config, vocab, seed).
template <template <class> class M>
void register_model(const std::string& type) {
  register_model(
      type,
      [](const nlohmann::json& c, int64_t v, uint64_t s) -> std::unique_ptr<Model<float>> {
        return std::make_unique<M<float>>(c, v, s);
      },
      [](const nlohmann::json& c, int64_t v, uint64_t s) -> std::unique_ptr<Model<double>> {
        return std::make_unique<M<double>>(c, v, s);
      });
}

// True when `type` names a registered (not built-in) model.
bool is_registered_model(const std::string& type);
// The registered type names, sorted.
std::vector<std::string> registered_model_types();

// The factory registered under `type`, or an empty function.
template <class T>
ModelFactory<T> registered_model_factory(const std::string& type);

}  // namespace liegrad::models
