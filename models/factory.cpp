// make_model: builds any model from its config section by the factory of its type's
// registry entry (models/registry.hpp), under an AllocationLimit of kMaxModelElements,
// so an absurd size is a ValueError.
#include "core/alloc_limit.hpp"
#include "core/errors.hpp"
#include "models/registry.hpp"

namespace liegrad::models {

template <class T>
std::unique_ptr<Model<T>> make_model(const nlohmann::json& config, int64_t vocab, uint64_t seed, int64_t classes) {
  const ModelSpec& spec = model_spec_of(config);
  if (vocab < 1) throw ValueError("model: vocabulary size must be >= 1, got " + std::to_string(vocab));
  if (classes <= 0) classes = vocab;
  const AllocationLimit limit(kMaxModelElements, "model: the configuration is too large to build (reduce the group "
                                                 "size, D, hidden, layers, heads or rank)");
  auto model = spec.factory<T>()(config, vocab, seed, classes);
  if (!model) throw ValueError("model.type '" + spec.name + "': the factory returned no model");
  return model;
}

template std::unique_ptr<Model<float>> make_model<float>(const nlohmann::json&, int64_t, uint64_t, int64_t);
template std::unique_ptr<Model<double>> make_model<double>(const nlohmann::json&, int64_t, uint64_t, int64_t);

}  // namespace liegrad::models
