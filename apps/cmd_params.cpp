// `liegrad params --config FILE [--set k=v ...] [--match N] [--json]`: the model's
// parameter count (m degrees of freedom per group element) with a per-tensor
// breakdown; --match N prints the config whose size knob (the model type's registry
// entry, models/registry.hpp) gives the count closest to N; --help lists every type's
// knob and config keys.
#include <cstdio>

#include "apps/commands.hpp"
#include "models/param_search.hpp"
#include "models/registry.hpp"
#include "tasks/registry.hpp"
#include "train/run_config.hpp"

namespace liegrad::app {


int cmd_params(const std::vector<std::string>& argv) {
  Args args(argv, {"help", "json"}, {"config", "match", "data-dir"}, {"set"});
  if (args.flag("help")) {
    std::printf(
        "usage: liegrad params --config FILE [--set key=value ...] [--match N] [--json]\n"
        "Prints the parameter count and a per-tensor breakdown. With --match N, searches the\n"
        "model's size knob for the count closest to N and prints that config.\n"
        "Model types (with --plugin LIB.so, its types too), their --match knob and model keys:\n");
    for (const std::string& type : models::model_types()) {
      const models::ModelSpec& spec = models::find_model_spec(type);
      std::string keys;
      for (const auto& k : models::config_keys(spec)) keys += (keys.empty() ? "" : ", ") + k;
      std::printf("  %s: --match varies %s; keys: %s\n", type.c_str(),
                  spec.info.knob ? spec.info.knob.description.c_str() : "nothing (no knob)",
                  keys.empty() ? "(not listed)" : keys.c_str());
    }
    return 0;
  }
  if (!args.has("config")) throw UsageError("--config FILE is required");
  nlohmann::json config = train::read_json_file(args.get("config"));
  train::apply_overrides(config, args.all("set"));
  const train::RunConfig rc = train::parse_run_config(config);
  // The task sizes the model: V input symbols, and C classes (a language model predicts
  // one of its V symbols); known corpora are sized without reading their data.
  const auto task = tasks::make_task({rc.data.section, args.get("data-dir"), /*vocab_record=*/nullptr, /*source=*/""});
  const int64_t V = task->input_vocab();
  const int64_t C = task->classes() > 0 ? task->classes() : V;
  nlohmann::json model = rc.model;
  if (args.has("match")) {
    model = models::match_parameter_count(model, V, args.get_int("match", 0), C);
    config["model"] = model;
  }
  const auto rows = models::parameter_breakdown(model, V, C);
  int64_t total = 0;
  for (const auto& r : rows) total += r.dof;
  if (args.flag("json")) {
    nlohmann::json j = {{"total", total}, {"vocab", V}, {"classes", C}, {"model", model}, {"tensors", nlohmann::json::array()}};
    for (const auto& r : rows) j["tensors"].push_back({{"name", r.name}, {"shape", r.shape}, {"role", r.role}, {"dof", r.dof}});
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%-28s %-14s %-16s %10s\n", "parameter", "shape", "role", "count");
  for (const auto& r : rows) std::printf("%-28s %-14s %-16s %10lld\n", r.name.c_str(), r.shape.c_str(), r.role.c_str(), static_cast<long long>(r.dof));
  std::printf("%-28s %-14s %-16s %10lld\n", "total", "", "", static_cast<long long>(total));
  if (args.has("match")) std::printf("\nconfig reaching it:\n%s\n", config.dump(2).c_str());
  return 0;
}

}  // namespace liegrad::app
