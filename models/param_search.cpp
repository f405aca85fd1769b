// Breakdown and knob search (see param_search.hpp). The search builds each
// candidate in float with a fixed seed and reads its count, so it always agrees
// with what `liegrad train` will build.
#include "models/param_search.hpp"

#include <cstdlib>

#include "core/errors.hpp"
#include "groups/group_kinds.hpp"
#include "models/model.hpp"

namespace liegrad::models {

std::vector<ParamBreakdownRow> parameter_breakdown(const nlohmann::json& model_config, int64_t V, int64_t C) {
  auto m = make_model<float>(model_config, V, 0, C);
  std::vector<ParamBreakdownRow> rows;
  for (const auto& p : m->parameters())
    rows.push_back({p.name, p.var.shape().str(), ag::role_name(p.role), p.dof});
  return rows;
}

int64_t count_parameters(const nlohmann::json& model_config, int64_t V, int64_t C) {
  return make_model<float>(model_config, V, 0, C)->parameter_count();
}

int64_t closest_value(int64_t lo, int64_t hi, int64_t step, int64_t target,
                      const std::function<int64_t(int64_t)>& count_at) {
  if (step < 1) throw ValueError("closest_value: step must be >= 1, got " + std::to_string(step));
  int64_t best = lo, best_err = INT64_MAX;
  for (int64_t v = lo; v <= hi; v += step) {
    const int64_t c = count_at(v);
    const int64_t err = std::llabs(c - target);
    if (err < best_err) {
      best_err = err;
      best = v;
    }
    if (c > 2 * target + 1000) break;  // counts grow with the knob
  }
  return best;
}

SizeKnob integer_knob(const std::string& key, int64_t lo, int64_t hi, int64_t step) {
  return {key, [=](const nlohmann::json& config, const nlohmann::json&, int64_t target, const ParameterCounter& count) {
            nlohmann::json cfg = config;
            cfg[key] = closest_value(lo, hi, step, target, [&](int64_t v) {
              nlohmann::json c = config;
              c[key] = v;
              return count(c);
            });
            return cfg;
          }};
}

SizeKnob group_size_knob(bool then_layers) {
  return {then_layers ? "d of the group, then layers" : "d of the group",
          [then_layers](const nlohmann::json& config, const nlohmann::json& resolved, int64_t target,
                        const ParameterCounter& count) {
            const std::string group = resolved_key(resolved, "group").get<std::string>();
            const auto factors = groups::parse_group_spelling(group);
            if (factors.size() != 1)
              throw ConfigError("--match: model.group '" + group +
                                "' is not a single group like SO(16); choose d by hand for products");
            const groups::GroupKind& kind = *factors.front().kind;
            auto with_d = [&](int64_t d) {
              nlohmann::json c = config;
              c["group"] = kind.spelling(d);
              return c;
            };
            nlohmann::json cfg = with_d(closest_value(kind.min_d, 128, 1, target, [&](int64_t d) { return count(with_d(d)); }));
            if (then_layers) cfg = integer_knob("layers", 1, 48).match(cfg, resolved, target, count);
            return cfg;
          }};
}

nlohmann::json match_parameter_count(const nlohmann::json& model_config, int64_t V, int64_t target, int64_t C) {
  const ModelSpec& spec = model_spec_of(model_config);
  if (target < 1) throw ValueError("--match: target count must be positive, got " + std::to_string(target));
  if (!spec.info.knob)
    throw ConfigError("--match: model type '" + spec.name + "' declares no size knob (its registry entry has none)");
  const nlohmann::json resolved = make_model<float>(model_config, V, 0, C)->config();
  return spec.info.knob.match(model_config, resolved, target,
                              [&](const nlohmann::json& c) { return count_parameters(c, V, C); });
}

}  // namespace liegrad::models
