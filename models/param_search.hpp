// Parameter-count utilities: the per-tensor breakdown of a model, and a search over
// a model's size knob for the configuration whose count is closest to a target
// (docs/models.md §7: models compared "at 100K" are within +-10% of 100,000).
//
// The knob is the one the type's registry entry declares (models/registry.hpp); the
// built-in ones: the OSM models vary d (the matrix size of a single group SO/O/U/SU/T,
// from its kind's smallest d with a non-zero algebra, groups/group_kinds.hpp), then
// layers (osmformer); the transformer varies D (a multiple of heads); lstm and exprnn
// vary hidden. The helpers below build such knobs.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/registry.hpp"

namespace liegrad::models {

struct ParamBreakdownRow {
  std::string name, shape, role;
  int64_t dof;
};

// The rows of a model built from `model_config` for vocabulary size V and C output
// classes (C <= 0: C = V, a language model).
std::vector<ParamBreakdownRow> parameter_breakdown(const nlohmann::json& model_config, int64_t V, int64_t C = 0);
int64_t count_parameters(const nlohmann::json& model_config, int64_t V, int64_t C = 0);

// The model config (a copy of `model_config` with the knob changed) whose count is
// closest to `target`. Throws ConfigError for an unknown type (find_model_spec), a type
// without a knob, or a config the knob cannot vary (a product group's d).
nlohmann::json match_parameter_count(const nlohmann::json& model_config, int64_t V, int64_t target, int64_t C = 0);

// The value in lo, lo + step, ... <= hi whose count_at is closest to target (the first
// of equals); stops once the count passes 2 target + 1000, since counts grow with a knob.
int64_t closest_value(int64_t lo, int64_t hi, int64_t step, int64_t target,
                      const std::function<int64_t(int64_t)>& count_at);

// A knob varying the integer key `key` over lo..hi by `step`.
SizeKnob integer_knob(const std::string& key, int64_t lo, int64_t hi, int64_t step = 1);

// The OSM models' knob: d of the resolved single group (SO/O/U/SU/T) from its kind's
// smallest d with a non-zero algebra to 128, then, when `then_layers`, layers over 1..48.
// ConfigError for a product group.
SizeKnob group_size_knob(bool then_layers);

}  // namespace liegrad::models
