// The small command-line parser shared by the subcommands (see commands.hpp).
#include <cstdlib>
#include <algorithm>
#include <cstdio>

#include "apps/commands.hpp"

namespace liegrad::app {

Args::Args(const std::vector<std::string>& argv, const std::vector<std::string>& flags,
           const std::vector<std::string>& options, const std::vector<std::string>& repeatable) {
  auto known = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0) {
      positional_.push_back(a);
      continue;
    }
    std::string key = a.substr(2), value;
    const size_t eq = key.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    }
    if (known(flags, key)) {
      if (inline_value) throw UsageError("--" + key + " takes no value");
      flags_set_.push_back(key);
    } else if (known(options, key) || known(repeatable, key)) {
      if (!inline_value) {
        if (i + 1 >= argv.size()) throw UsageError("--" + key + " needs a value");
        value = argv[++i];
      }
      if (!known(repeatable, key) && values_.count(key)) throw UsageError("--" + key + " given twice");
      values_[key].push_back(value);
    } else {
      throw UsageError("unknown option '" + a + "' (see --help)");
    }
  }
}

bool Args::flag(const std::string& name) const {
  return std::find(flags_set_.begin(), flags_set_.end(), name) != flags_set_.end();
}
bool Args::help(const char* usage) const {
  if (!flag("help")) return false;
  std::fputs(usage, stdout);
  return true;
}
bool Args::has(const std::string& name) const { return values_.count(name) > 0; }
std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}
std::vector<std::string> Args::all(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}
int Args::get_int(const std::string& name, int fallback) const {
  if (!has(name)) return fallback;
  const std::string v = get(name);
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0') throw UsageError("--" + name + " expects an integer, got '" + v + "'");
  return static_cast<int>(x);
}
double Args::get_double(const std::string& name, double fallback) const {
  if (!has(name)) return fallback;
  const std::string v = get(name);
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0') throw UsageError("--" + name + " expects a number, got '" + v + "'");
  return x;
}

}  // namespace liegrad::app
