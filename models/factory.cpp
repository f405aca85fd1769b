// make_model: builds any model from its config section by its "type", the built-in
// ones here and registered ones (models/registry.hpp) by their factories, under an
// AllocationLimit of kMaxModelElements, so an absurd size is a ValueError.
#include <algorithm>

#include "core/alloc_limit.hpp"
#include "core/config.hpp"
#include "models/exprnn.hpp"
#include "models/lstm.hpp"
#include "models/osm_rnn.hpp"
#include "models/osmformer.hpp"
#include "models/registry.hpp"
#include "models/transformer.hpp"

namespace liegrad::models {

const std::vector<std::string>& builtin_model_types() {
  static const std::vector<std::string> types = {"osmformer", "osm_rnn", "transformer", "lstm", "exprnn"};
  return types;
}

std::vector<std::string> model_types() {
  std::vector<std::string> types = builtin_model_types();
  for (auto& t : registered_model_types()) types.push_back(std::move(t));
  return types;
}

template <class T>
std::unique_ptr<Model<T>> make_model(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes) {
  if (!config.is_object()) throw ConfigError("model: expected a JSON object with a \"type\" key");
  if (vocab < 1) throw ValueError("model: vocabulary size must be >= 1, got " + std::to_string(vocab));
  if (classes <= 0) classes = vocab;
  ConfigReader c(config, "model");
  std::string type;
  try {
    type = c.get_string("type", "", model_types());
  } catch (const ConfigError& e) {
    if (!config.at("type").is_string()) throw;
    throw ConfigError(std::string(e.what()) +
                      "; a model type defined in a plugin library needs that library loaded first "
                      "(`liegrad ... --plugin LIB.so`, models::load_plugin, liegrad.load_plugin in Python)");
  }
  if (type.empty()) throw ConfigError("model.type: missing (expected one of the model types, e.g. \"osmformer\")");
  const AllocationLimit limit(kMaxModelElements, "model: the configuration is too large to build (reduce the group "
                                                 "size, D, hidden, layers, heads or rank)");
  if (auto make = registered_model_factory<T>(type)) {
    if (classes != vocab)
      throw ConfigError("model.type '" + type + "': a registered (plugin) model is a language model; it cannot be "
                        "trained on a task with " + std::to_string(classes) + " classes and " +
                        std::to_string(vocab) + " input symbols");
    auto model = make(config, vocab, seed);
    if (!model) throw ValueError("model.type '" + type + "': the registered factory returned no model");
    return model;
  }
  if (type == "osmformer") return std::make_unique<OsmFormer<T>>(config, vocab, seed, classes);
  if (type == "osm_rnn") return std::make_unique<OsmRnn<T>>(config, vocab, seed, classes);
  if (type == "transformer") return std::make_unique<Transformer<T>>(config, vocab, seed, classes);
  if (type == "lstm") return std::make_unique<Lstm<T>>(config, vocab, seed, classes);
  return std::make_unique<ExpRnn<T>>(config, vocab, seed, classes);
}

template std::unique_ptr<Model<float>> make_model<float>(const nlohmann::json&, int64_t, uint64_t, int64_t);
template std::unique_ptr<Model<double>> make_model<double>(const nlohmann::json&, int64_t, uint64_t, int64_t);

}  // namespace liegrad::models
