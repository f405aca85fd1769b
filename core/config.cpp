// ConfigReader, ConfigKeyRecorder and the dotted-key setter used by `--set key=value`.
#include "core/config.hpp"

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"

namespace liegrad {

namespace {
thread_local ConfigKeyRecorder* t_recorder = nullptr;  // the innermost live recorder
}  // namespace

ConfigKeyRecorder::ConfigKeyRecorder(std::string section) : section_(std::move(section)), outer_(t_recorder) {
  t_recorder = this;
}

ConfigKeyRecorder::~ConfigKeyRecorder() { t_recorder = outer_; }

void ConfigKeyRecorder::note(const std::string& section, const std::string& key) {
  if (section == section_ && std::find(keys_.begin(), keys_.end(), key) == keys_.end()) keys_.push_back(key);
}

void ConfigReader::note(const std::string& key) {
  known_.insert(key);
  if (t_recorder) t_recorder->note(section_, key);
}

ConfigReader::ConfigReader(const nlohmann::json& object, std::string section)
    : j_(object.is_null() ? nlohmann::json::object() : object), section_(std::move(section)) {
  if (!j_.is_object()) throw ConfigError(section_ + ": expected a JSON object, got " + std::string(j_.type_name()));
}

bool ConfigReader::has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }

const nlohmann::json& ConfigReader::value(const std::string& key) const { return j_.at(key); }

void ConfigReader::fail(const std::string& key, const std::string& expected) const {
  throw ConfigError(section_ + "." + key + ": expected " + expected + ", got " + j_.at(key).dump());
}

int64_t ConfigReader::get_int(const std::string& key, int64_t fallback, int64_t min, int64_t max) {
  note(key);
  if (!has(key)) return fallback;
  const auto& v = value(key);
  if (!v.is_number() || (v.is_number_float() && v.get<double>() != std::floor(v.get<double>())))
    fail(key, "an integer");
  // Outside int64_t (1e300, 2^64 - 1) is out of every range; converting it would be
  // undefined (a float) or wrap around (an unsigned).
  const bool fits = v.is_number_float() ? std::abs(v.get<double>()) < 9.2e18
                    : v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)
                                             : true;
  const int64_t x = fits ? v.get<int64_t>() : (v.get<double>() < 0 ? INT64_MIN : INT64_MAX);
  if (!fits || x < min || x > max)
    fail(key, "an integer" + (min > INT64_MIN ? " >= " + std::to_string(min) : std::string()) +
                  (max < INT64_MAX ? " and <= " + std::to_string(max) : std::string()));
  return x;
}

double ConfigReader::get_double(const std::string& key, double fallback, double min, double max) {
  note(key);
  if (!has(key)) return fallback;
  const auto& v = value(key);
  if (!v.is_number()) fail(key, "a number");
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < min || x > max) {
    std::string range;
    if (min > -1e300) range += " >= " + nlohmann::json(min).dump();
    if (max < 1e300) range += (range.empty() ? " <= " : " and <= ") + nlohmann::json(max).dump();
    fail(key, "a finite number" + range);
  }
  return x;
}

double ConfigReader::get_double_or_none(const std::string& key, double fallback, double off, double min) {
  note(key);
  if (!j_.contains(key)) return fallback;
  const auto& v = j_.at(key);
  if (v.is_null() || (v.is_string() && v.get<std::string>() == "none")) return off;
  return get_double(key, fallback, min);
}

bool ConfigReader::get_bool(const std::string& key, bool fallback) {
  note(key);
  if (!has(key)) return fallback;
  if (!value(key).is_boolean()) fail(key, "true or false");
  return value(key).get<bool>();
}

std::string ConfigReader::get_string(const std::string& key, const std::string& fallback,
                                     const std::vector<std::string>& allowed) {
  note(key);
  if (!has(key)) return fallback;
  if (!value(key).is_string()) fail(key, "a string");
  const std::string s = value(key).get<std::string>();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    const std::string near = nearest_word(s, allowed);
    throw ConfigError(section_ + "." + key + ": unknown value '" + printable(s) + "' (expected one of: " + list + ")" +
                      (near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  return s;
}

void ConfigReader::allow(const std::vector<std::string>& keys) { known_.insert(keys.begin(), keys.end()); }

void ConfigReader::finish() const {
  std::vector<std::string> known(known_.begin(), known_.end());
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (known_.count(it.key())) continue;
    const std::string near = nearest_word(it.key(), known);
    throw ConfigError(section_ + ": unknown key '" + printable(it.key()) + "'" +
                      (near.empty() ? "" : " (did you mean '" + near + "'?)"));
  }
}

std::string nearest_word(const std::string& word, const std::vector<std::string>& options) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= b.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      std::swap(prev, cur);
    }
    return prev[b.size()];
  };
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& o : options) {
    const size_t d = distance(word, o);
    if (d < best_d) {
      best_d = d;
      best = o;
    }
  }
  // Only suggest when reasonably close: at most a third of the word's letters differ.
  return best_d <= std::max<size_t>(2, word.size() / 3) ? best : "";
}

void set_dotted(nlohmann::json& root, const std::string& dotted_key, const std::string& value) {
  if (dotted_key.empty()) throw ConfigError("--set: empty key");
  nlohmann::json* node = &root;
  size_t start = 0;
  std::string path;
  while (true) {
    const size_t dot = dotted_key.find('.', start);
    const std::string part = dotted_key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) throw ConfigError("--set: malformed key '" + printable(dotted_key) + "'");
    if (dot == std::string::npos) {
      nlohmann::json parsed = nlohmann::json::parse(value, nullptr, false);
      (*node)[part] = parsed.is_discarded() ? nlohmann::json(value) : parsed;
      return;
    }
    path += (path.empty() ? "" : ".") + part;
    if (!node->contains(part)) (*node)[part] = nlohmann::json::object();
    node = &(*node)[part];
    if (!node->is_object()) throw ConfigError("--set " + printable(dotted_key) + ": '" + printable(path) + "' is not an object");
    start = dot + 1;
  }
}

}  // namespace liegrad
