// Helpers for trainer and CLI tests: temporary directories, a small generated
// corpus, tiny run configs, and running the liegrad binary with captured output.
#pragma once
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "tests/temp_dir.hpp"

namespace liegrad::test {

namespace fs = std::filesystem;

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The lines of DIR/metrics.jsonl that have `key` (e.g. "val_bpc" for evaluations).
inline std::vector<nlohmann::json> metrics_lines(const std::string& dir, const char* key) {
  std::vector<nlohmann::json> out;
  std::istringstream in(read_text(dir + "/metrics.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains(key)) out.push_back(j);
  }
  return out;
}

// Runs call(), which must throw ConfigError with a one-line message holding every needle
// (a bad configuration or model named by its key and value).
template <class Call>
void check_config_error(Call&& call, std::initializer_list<std::string> needles) {
  try {
    call();
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    CHECK(m.find('\n') == std::string::npos);
    for (const auto& n : needles) CHECK(m.find(n) != std::string::npos);
  }
}

// ~6,000 characters of repetitive, learnable text over a 20-symbol alphabet.
inline std::string small_corpus() {
  std::string s;
  const char* words[] = {"the cat sat", "on the mat", "a dog ran", "to the sea", "and back"};
  uint32_t x = 12345;
  while (s.size() < 6000) {
    x = x * 1103515245u + 12345u;
    s += words[(x >> 16) % 5];
    s += (x >> 8) % 7 == 0 ? ".\n" : ", ";
  }
  return s;
}

// The train section of the tiny test runs: `steps` steps of `batch` windows, lr 1e-2
// after 2 warm-up steps, evaluation every 5 steps, a metrics line every step, 1 thread, seed 3.
inline nlohmann::json tiny_train(int64_t steps, int64_t batch) {
  return {{"steps", steps}, {"batch", batch},         {"lr", 1e-2},    {"warmup", 2},
          {"eval_interval", 5}, {"log_interval", 1}, {"threads", 1}, {"seed", 3}};
}

// A tiny run config over text:<path> with the given model section.
inline nlohmann::json tiny_config(const std::string& text_path, const nlohmann::json& model, int64_t steps = 20) {
  nlohmann::json train = tiny_train(steps, 4);
  train["seq_len"] = 16;
  return {{"model", model},
          {"data", {{"dataset", "text:" + text_path}, {"val_frac", 0.1}, {"test_frac", 0.1}}},
          {"train", train}};
}

struct Proc {
  int exit_code = -1;
  std::string out, err;
};

// Runs build/liegrad with arguments (no shell), capturing stdout and stderr.
// Runs the liegrad binary with args in workdir; env: variables to set in the child
// (an empty value unsets the variable).
inline Proc run_liegrad(const std::vector<std::string>& args, const std::string& workdir,
                        const std::vector<std::pair<std::string, std::string>>& env = {}) {
  std::string bin = LIEGRAD_BINARY_DIR;  // appended, not operator+: GCC 12 warns falsely on that (-Warray-bounds)
  bin += "/liegrad";
  const std::string out_file = workdir + "/.stdout", err_file = workdir + "/.stderr";
  std::fflush(stdout);  // the child must not inherit unflushed output
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    freopen(out_file.c_str(), "w", stdout);
    freopen(err_file.c_str(), "w", stderr);
    for (const auto& [name, value] : env) {
      if (value.empty())
        unsetenv(name.c_str());
      else
        setenv(name.c_str(), value.c_str(), 1);
    }
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(bin.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Proc p;
  p.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  p.out = read_text(out_file);
  p.err = read_text(err_file);
  return p;
}

// The JSON a successful `liegrad ... --json` printed (the case stops, showing the
// output, when the command failed).
inline nlohmann::json json_output(const Proc& p) {
  INFO("exit " << p.exit_code << "\nstderr: " << p.err << "\nstdout: " << p.out);
  REQUIRE(p.exit_code == 0);
  return nlohmann::json::parse(p.out);
}

}  // namespace liegrad::test
