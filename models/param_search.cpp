// Breakdown and knob search (see param_search.hpp). The search builds each
// candidate in float with a fixed seed and reads its count, so it always agrees
// with what `liegrad train` will build.
#include "models/param_search.hpp"

#include <cstdlib>
#include <regex>

#include "core/errors.hpp"
#include "groups/group.hpp"
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

namespace {

// Picks the value in [lo, hi] (stepping by `step`) whose count is closest to target.
template <class Set>
int64_t best_value(int64_t lo, int64_t hi, int64_t step, int64_t target, Set&& count_at) {
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

}  // namespace

nlohmann::json match_parameter_count(const nlohmann::json& model_config, int64_t V, int64_t target, int64_t C) {
  if (target < 1) throw ValueError("--match: target count must be positive, got " + std::to_string(target));
  nlohmann::json cfg = model_config;
  const std::string type = cfg.value("type", "");
  auto count = [&](const nlohmann::json& c) { return count_parameters(c, V, C); };
  if (type == "osmformer" || type == "osm_rnn") {
    const std::string group = cfg.value("group", "SO(16)");
    static const std::regex single(R"(^\s*(SO|O|U|SU|T)\s*\(\s*(\d+)\s*\)\s*$)", std::regex::icase);
    std::smatch mt;
    if (!std::regex_match(group, mt, single))
      throw ConfigError("--match: model.group '" + group +
                        "' is not a single group like SO(16); choose d by hand for products");
    const std::string kind = mt[1].str();
    const int64_t dmin = (kind == "SO" || kind == "O" || kind == "SU") ? 2 : 1;
    auto with_d = [&](int64_t d) {
      nlohmann::json c = cfg;
      c["group"] = kind + "(" + std::to_string(d) + ")";
      return c;
    };
    const int64_t d = best_value(dmin, 128, 1, target, [&](int64_t v) { return count(with_d(v)); });
    cfg = with_d(d);
    if (type == "osmformer") {
      const int64_t L = best_value(1, 48, 1, target, [&](int64_t v) {
        nlohmann::json c = cfg;
        c["layers"] = v;
        return count(c);
      });
      cfg["layers"] = L;
    }
  } else if (type == "transformer") {
    const int64_t heads = cfg.value("heads", 4);
    const int64_t D = best_value(heads, 4096, heads, target, [&](int64_t v) {
      nlohmann::json c = cfg;
      c["D"] = v;
      return count(c);
    });
    cfg["D"] = D;
  } else if (type == "lstm" || type == "exprnn") {
    const int64_t h = best_value(2, 4096, 1, target, [&](int64_t v) {
      nlohmann::json c = cfg;
      c["hidden"] = v;
      return count(c);
    });
    cfg["hidden"] = h;
  } else {
    throw ConfigError("--match: unknown model type '" + type + "'");
  }
  return cfg;
}

}  // namespace liegrad::models
