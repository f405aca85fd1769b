// Parameter-count utilities: the per-tensor breakdown of a model, and a search over
// a model's size knob for the configuration whose count is closest to a target
// (docs/models.md §7: models compared "at 100K" are within +-10% of 100,000).
//
// Size knobs: the OSM models vary d (the matrix size in the group spelling, for
// the single-factor groups SO/O/U/SU/T), then layers (osmformer); the transformer
// varies D (kept a multiple of heads); lstm and exprnn vary hidden.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
// closest to `target`. Throws ConfigError when the model's group has no single d.
nlohmann::json match_parameter_count(const nlohmann::json& model_config, int64_t V, int64_t target, int64_t C = 0);

}  // namespace liegrad::models
