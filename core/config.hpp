// ConfigReader: typed, validated access to one JSON object of a configuration
// (e.g. the "model" or "train" section). Every read records the key; finish()
// rejects keys nobody read, suggesting the nearest known key, so a typo never
// silently falls back to a default. ConfigKeyRecorder lists the keys the readers of a
// section read while it lives, e.g. what a model's constructor reads: the model
// registry's key lists come from it (models/registry.hpp), so they are the same reads
// that decide which keys are unknown. Errors are ConfigError naming the section, the
// key, the value and what was expected. It lives in core/ because models/ (the model
// sections), optim/ (optimizer options) and train/ (run configurations) all read
// configuration, and core is the one layer below all three.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace liegrad {

class ConfigKeyRecorder;

class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& object, std::string section);

  bool has(const std::string& key) const;
  int64_t get_int(const std::string& key, int64_t fallback, int64_t min = INT64_MIN, int64_t max = INT64_MAX);
  double get_double(const std::string& key, double fallback, double min = -1e300, double max = 1e300);
  bool get_bool(const std::string& key, bool fallback);
  // allowed empty = any string.
  std::string get_string(const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& allowed = {});
  // A number, or the string "none"/null meaning off (returns `off`).
  double get_double_or_none(const std::string& key, double fallback, double off, double min = -1e300);
  // Marks keys as known without reading them (e.g. comments).
  void allow(const std::vector<std::string>& keys);
  // Throws ConfigError for keys never read or allowed.
  void finish() const;

  const nlohmann::json& json() const { return j_; }

 private:
  const nlohmann::json& value(const std::string& key) const;
  // Records a read of `key` (known_ and the thread's ConfigKeyRecorder, if any).
  void note(const std::string& key);
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const;
  nlohmann::json j_;
  std::string section_;
  std::set<std::string> known_;
};

// While it lives, records every key that a ConfigReader of `section` on this thread
// reads (get_*; not the keys only allow()ed), once each in the order of the first read.
// Recorders nest: the innermost one records.
class ConfigKeyRecorder {
 public:
  explicit ConfigKeyRecorder(std::string section);
  ~ConfigKeyRecorder();
  ConfigKeyRecorder(const ConfigKeyRecorder&) = delete;
  ConfigKeyRecorder& operator=(const ConfigKeyRecorder&) = delete;
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  friend class ConfigReader;
  void note(const std::string& section, const std::string& key);
  std::string section_;
  std::vector<std::string> keys_;
  ConfigKeyRecorder* outer_;
};

// The option closest to `word` by edit distance ("" when none is close).
std::string nearest_word(const std::string& word, const std::vector<std::string>& options);

// Sets a dotted key ("model.layers") in a JSON object from a command-line string:
// the value is parsed as JSON when it parses (numbers, true/false, null, quoted),
// else taken as a plain string. Intermediate objects must exist (ConfigError otherwise).
void set_dotted(nlohmann::json& root, const std::string& dotted_key, const std::string& value);

}  // namespace liegrad
