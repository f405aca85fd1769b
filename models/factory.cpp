// make_model: builds any model from its config section by its "type".
#include <algorithm>

#include "models/config.hpp"
#include "models/exprnn.hpp"
#include "models/lstm.hpp"
#include "models/osm_rnn.hpp"
#include "models/osmformer.hpp"
#include "models/transformer.hpp"

namespace liegrad::models {

const std::vector<std::string>& model_types() {
  static const std::vector<std::string> types = {"osmformer", "osm_rnn", "transformer", "lstm", "exprnn"};
  return types;
}

template <class T>
std::unique_ptr<Model<T>> make_model(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes) {
  if (!config.is_object()) throw ConfigError("model: expected a JSON object with a \"type\" key");
  if (vocab < 1) throw ValueError("model: vocabulary size must be >= 1, got " + std::to_string(vocab));
  if (classes <= 0) classes = vocab;
  ConfigReader c(config, "model");
  const std::string type = c.get_string("type", "", model_types());
  if (type.empty()) throw ConfigError("model.type: missing (expected one of the model types, e.g. \"osmformer\")");
  if (type == "osmformer") return std::make_unique<OsmFormer<T>>(config, vocab, seed, classes);
  if (type == "osm_rnn") return std::make_unique<OsmRnn<T>>(config, vocab, seed, classes);
  if (type == "transformer") return std::make_unique<Transformer<T>>(config, vocab, seed, classes);
  if (type == "lstm") return std::make_unique<Lstm<T>>(config, vocab, seed, classes);
  return std::make_unique<ExpRnn<T>>(config, vocab, seed, classes);
}

template std::unique_ptr<Model<float>> make_model<float>(const nlohmann::json&, int64_t, uint64_t, int64_t);
template std::unique_ptr<Model<double>> make_model<double>(const nlohmann::json&, int64_t, uint64_t, int64_t);

}  // namespace liegrad::models
