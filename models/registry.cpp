// The model registry (see registry.hpp): a mutex-guarded map from type name to entry,
// filled with the built-in entries on first use, and the one unknown-type error.
#include "models/registry.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "core/alloc_limit.hpp"
#include "core/config.hpp"
#include "core/errors.hpp"

namespace liegrad::models {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, ModelSpec> entries;  // nodes never move or go: references stay valid
  Registry() {
    for (const ModelSpec& s : builtin_model_specs()) entries.emplace(s.name, s);
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

bool is_builtin(const std::string& type) {
  const auto& b = builtin_model_types();
  return std::find(b.begin(), b.end(), type) != b.end();
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : ", ") + w;
  return s;
}

}  // namespace

const std::vector<std::string>& builtin_model_types() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> t;
    for (const ModelSpec& s : builtin_model_specs()) t.push_back(s.name);
    return t;
  }();
  return types;
}

std::vector<std::string> model_types() {
  std::vector<std::string> types = builtin_model_types();
  for (auto& t : registered_model_types()) types.push_back(std::move(t));
  return types;
}

void require_language_model(const std::string& type, int64_t vocab, int64_t classes) {
  if (classes != vocab)
    throw ConfigError("model.type '" + type + "': a registered (plugin) model is a language model; it cannot be "
                      "trained on a task with " + std::to_string(classes) + " classes and " +
                      std::to_string(vocab) + " input symbols");
}

void register_model(ModelSpec spec) {
  const std::string type = spec.name;
  if (type.empty()) throw ValueError("register_model: the model type name is empty");
  if (!spec.make_float || !spec.make_double)
    throw ValueError("register_model: '" + type + "' needs a float and a double factory");
  if (is_builtin(type)) throw ValueError("register_model: '" + type + "' is a built-in model type");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.entries.count(type)) throw ValueError("register_model: model type '" + type + "' is registered already");
  r.entries.emplace(type, std::move(spec));
}

const ModelSpec& find_model_spec(const std::string& type) {
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.entries.find(type);
    if (it != r.entries.end()) return it->second;
  }
  const std::vector<std::string> known = model_types();
  const std::string near = nearest_word(type, known);
  throw ConfigError("model.type: unknown model type '" + printable(type) + "' (known: " + joined(known) + ")" +
                    (near.empty() ? "" : "; did you mean '" + near + "'?") +
                    "; a model type defined in a plugin library needs that library loaded first "
                    "(`liegrad ... --plugin LIB.so`, models::load_plugin, liegrad.load_plugin in Python)");
}

const ModelSpec& model_spec_of(const nlohmann::json& config) {
  if (!config.is_object()) throw ConfigError("model: expected a JSON object with a \"type\" key");
  if (!config.contains("type") || config.at("type").is_null())
    throw ConfigError("model.type: missing (expected one of the model types: " + joined(model_types()) + ")");
  if (!config.at("type").is_string())
    throw ConfigError("model.type: expected a string, got " + config.at("type").dump());
  const std::string type = config.at("type").get<std::string>();
  if (type.empty())
    throw ConfigError("model.type: missing (expected one of the model types: " + joined(model_types()) + ")");
  return find_model_spec(type);
}

const nlohmann::json& resolved_key(const nlohmann::json& resolved, const std::string& key) {
  if (!resolved.is_object() || !resolved.contains(key) || resolved.at(key).is_null()) {
    const bool typed = resolved.is_object() && resolved.contains("type") && resolved.at("type").is_string();
    throw ConfigError("model." + key + ": missing from the resolved configuration of model type '" +
                      printable(typed ? resolved.at("type").get<std::string>() : std::string("?")) +
                      "' (pass Model::config(), which has every default filled in)");
  }
  return resolved.at(key);
}

std::vector<std::string> config_keys(const ModelSpec& spec) {
  constexpr int64_t kSymbols = 4;  // any vocabulary builds the same keys
  const ConfigKeyRecorder recorder("model");
  try {
    const AllocationLimit limit(kMaxModelElements, "model: the configuration is too large to build");
    spec.make_double({{"type", spec.name}}, kSymbols, 0, kSymbols);
  } catch (const Error&) {
    return {};
  }
  return recorder.keys();
}

bool is_registered_model(const std::string& type) {
  if (is_builtin(type)) return false;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.entries.count(type) > 0;
}

std::vector<std::string> registered_model_types() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> out;
  for (const auto& [name, entry] : r.entries)
    if (!is_builtin(name)) out.push_back(name);
  return out;
}

}  // namespace liegrad::models
