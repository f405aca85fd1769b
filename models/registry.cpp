// The model registry (see registry.hpp): a mutex-guarded map from type name to the
// float and double factories.
#include "models/registry.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>

#include "core/errors.hpp"

namespace liegrad::models {

namespace {

struct Entry {
  ModelFactory<float> make_float;
  ModelFactory<double> make_double;
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, Entry> entries;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_model(const std::string& type, ModelFactory<float> make_float, ModelFactory<double> make_double) {
  if (type.empty()) throw ValueError("register_model: the model type name is empty");
  if (!make_float || !make_double) throw ValueError("register_model: '" + type + "' needs a float and a double factory");
  const auto& builtin = builtin_model_types();
  if (std::find(builtin.begin(), builtin.end(), type) != builtin.end())
    throw ValueError("register_model: '" + type + "' is a built-in model type");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.entries.count(type)) throw ValueError("register_model: model type '" + type + "' is registered already");
  r.entries.emplace(type, Entry{std::move(make_float), std::move(make_double)});
}

bool is_registered_model(const std::string& type) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.entries.count(type) > 0;
}

std::vector<std::string> registered_model_types() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> out;
  for (const auto& [name, entry] : r.entries) out.push_back(name);
  return out;
}

template <class T>
ModelFactory<T> registered_model_factory(const std::string& type) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.entries.find(type);
  if (it == r.entries.end()) return {};
  if constexpr (std::is_same_v<T, float>)
    return it->second.make_float;
  else
    return it->second.make_double;
}

template ModelFactory<float> registered_model_factory<float>(const std::string&);
template ModelFactory<double> registered_model_factory<double>(const std::string&);

}  // namespace liegrad::models
