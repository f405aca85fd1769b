// The registry of liegrad subcommands and a small argument parser shared by them.
#pragma once
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace liegrad::app {

// Wrong command-line usage (exit code 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Command {
  std::string name;
  std::string summary;
  std::function<int(const std::vector<std::string>&)> run;
};

const std::vector<Command>& commands();

// Parses "--key value" and "--flag" arguments. Known flags (no value) and known
// options (one value; repeatable ones collect every value) are declared up front;
// anything else is a UsageError naming the argument.
class Args {
 public:
  Args(const std::vector<std::string>& argv, const std::vector<std::string>& flags,
       const std::vector<std::string>& options, const std::vector<std::string>& repeatable = {});
  bool flag(const std::string& name) const;
  // With --help: prints `usage` to stdout and returns true (the command then exits 0).
  bool help(const char* usage) const;
  bool has(const std::string& name) const;
  std::string get(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> all(const std::string& name) const;
  int get_int(const std::string& name, int fallback) const;
  double get_double(const std::string& name, double fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> flags_set_;
  std::vector<std::string> positional_;
};

int cmd_gradcheck(const std::vector<std::string>& args);
int cmd_groupcheck(const std::vector<std::string>& args);
int cmd_train(const std::vector<std::string>& args);
int cmd_eval(const std::vector<std::string>& args);
int cmd_probe(const std::vector<std::string>& args);
int cmd_sample(const std::vector<std::string>& args);
int cmd_params(const std::vector<std::string>& args);
int cmd_plot(const std::vector<std::string>& args);
int cmd_bench(const std::vector<std::string>& args);

}  // namespace liegrad::app
