// Reading runs for the plots (see run_result.hpp).
#include "report/run_result.hpp"

#include <fstream>

#include "core/errors.hpp"

namespace liegrad::report {

namespace fs = std::filesystem;

nlohmann::json read_run_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw IoError("plot: cannot read '" + file.string() + "'");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw IoError("plot: '" + file.string() + "' is not valid JSON");
  return j;
}

std::string run_label(const std::string& dir) {
  std::string label = fs::path(dir).filename().string();
  if (label.empty()) label = fs::path(dir).parent_path().filename().string();
  return label;
}

ScoredRun read_scored_run(const std::string& dir, const std::string& no_scores_hint) {
  ScoredRun run;
  run.file = fs::path(dir) / "result.json";
  if (!fs::exists(run.file))
    throw IoError("plot: '" + run.file.string() + "' does not exist (is the run in '" + dir + "' finished?)");
  run.result = read_run_json(run.file);
  const nlohmann::json& r = run.result;
  if (!r.contains("test") || !r.at("test").is_array() || r.at("test").empty())
    throw IoError("plot: '" + run.file.string() + "' holds no test scores by length" + no_scores_hint);
  run.label = run_label(dir);
  run.max_len = r.contains("config") ? r["config"]["data"].value("max_len", int64_t{0}) : 0;
  return run;
}

}  // namespace liegrad::report
