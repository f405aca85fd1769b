// Reading runs for the plots: a run directory's JSON files (config.json, result.json),
// its label in a legend, and a finished run's result.json with its test scores by
// length (the "test" array of tasks/word_eval.hpp and tasks/rotation_eval.hpp), which
// plot_words.cpp and plot_rotations.cpp turn into curves.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace liegrad::report {

// A JSON file of a run, parsed. IoError naming the file when it cannot be read or is
// not valid JSON.
nlohmann::json read_run_json(const std::filesystem::path& file);

// A run's name in legends: the directory's own name ("runs/a" and "runs/a/" -> "a").
std::string run_label(const std::string& dir);

// A finished run's scores by length.
struct ScoredRun {
  std::filesystem::path file;  // DIR/result.json, for messages
  nlohmann::json result;       // its contents; result["test"] is a non-empty array
  std::string label;           // run_label(DIR)
  int64_t max_len = 0;         // the config's data.max_len (the longest training length); 0 when absent
};

// DIR/result.json. IoError when it does not exist (an unfinished run), cannot be read
// or parsed, or has no non-empty "test" array: "... holds no test scores by length"
// followed by `no_scores_hint` (e.g. " (not a group word run?)").
ScoredRun read_scored_run(const std::string& dir, const std::string& no_scores_hint = "");

}  // namespace liegrad::report
