// Checkpoints read by other languages (numpy and PyTorch): tiny models are
// trained through train::run_training on a small generated text, then
// examples/load_checkpoint.py (numpy) and bench/torch_reference.py (PyTorch) reload
// last.json and recompute the BPC / mean loss on the same text, which must agree with
// tasks::evaluate_bpc to 1e-4. Each check runs only when /usr/bin/python3 can import
// numpy (and torch for the second); otherwise it is reported as skipped
// (LIEGRAD_SKIP_TEST, tests/test_helpers.hpp).
#include <doctest/doctest.h>

#include "tests/temp_dir.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/datasets.hpp"
#include "train/checkpoint.hpp"
#include "tasks/evaluate.hpp"
#include "train/trainer.hpp"
#include "tests/test_helpers.hpp"

namespace fs = std::filesystem;
using namespace liegrad;

namespace {

const char* kPython = "/usr/bin/python3";

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// True when `/usr/bin/python3 -c "import <module>"` succeeds.
bool python_has(const std::string& module) {
  if (::access(kPython, X_OK) != 0) return false;
  const std::string cmd = std::string(kPython) + " -c 'import " + module + "' > /dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// Runs a command; returns its exit status and everything it printed (stdout and stderr).
int run_command(const std::string& cmd, std::string& output) {
  output.clear();
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, got);
  const int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The last line of the output that parses as a JSON object.
nlohmann::json last_json_line(const std::string& out) {
  nlohmann::json found;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    nlohmann::json j = nlohmann::json::parse(out.substr(start, end - start), nullptr, false);
    if (!j.is_discarded() && j.is_object()) found = j;
    start = end + 1;
  }
  return found;
}

// About 4,000 characters of word salad from a fixed LCG (no dependence on <random>).
std::string generated_text() {
  const char* words[] = {"the", "group", "of", "rotations", "acts", "on", "a", "sphere", "and", "every",
                         "token", "is", "an", "element", "while", "states", "move", "by", "exponentials"};
  uint64_t x = 12345;
  std::string text;
  while (text.size() < 4000) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    text += words[(x >> 33) % (sizeof words / sizeof *words)];
    text += ((x >> 20) % 9 == 0) ? ".\n" : " ";
  }
  return text;
}

struct Trained {
  std::string checkpoint;
  double bpc = 0, nats = 0;
};

// Trains `model` for a few steps on `text_path` and evaluates the saved last.json with the
// library on the same text, as `liegrad eval --text` does.
Trained train_tiny(const test::TempDir& dir, const std::string& tag, const nlohmann::json& model,
                   const std::string& text_path, int64_t seq_len) {
  nlohmann::json config = {{"model", model},
                           {"data", {{"dataset", "text:" + text_path}}},
                           {"train",
                            {{"steps", 12},
                             {"batch", 4},
                             {"seq_len", seq_len},
                             {"lr", 0.01},
                             {"warmup", 2},
                             {"eval_interval", 1000},
                             {"log_interval", 1000},
                             {"threads", 2}}}};
  train::TrainOptions opt;
  opt.out_dir = (dir.path / tag).string();
  opt.force = true;
  train::run_training(config, opt);
  Trained t;
  t.checkpoint = (dir.path / tag / "last.json").string();
  train::LoadedModel m = train::load_model(t.checkpoint);
  const std::vector<int32_t> ids = m.task->text_vocab()->encode(data::read_file_bytes(text_path));
  const tasks::EvalResult r = tasks::evaluate_bpc(*m.model, ids, seq_len);
  t.bpc = r.bpc;
  t.nats = r.nats_per_symbol;
  return t;
}

struct Case {
  const char* tag;
  nlohmann::json model;
  int64_t seq_len;
};

std::vector<Case> cases(bool all) {
  std::vector<Case> c = {
      {"osmformer", {{"type", "osmformer"}, {"group", "SO(5)"}, {"layers", 2}, {"heads", 2}, {"mixing", "linear"}}, 24},
      {"transformer", {{"type", "transformer"}, {"D", 16}, {"layers", 2}, {"heads", 4}}, 24},
  };
  // The grounding readings (docs/models.md §5) and the transformer's tied head.
  c.push_back({"osmformer_combined", {{"type", "osmformer"}, {"group", "SO(5)"}, {"layers", 2}, {"heads", 2},
                                      {"mixing", "linear"}, {"grounding", "combined"}}, 24});
  c.push_back({"osmformer_token_shared", {{"type", "osmformer"}, {"group", "U(2)"}, {"layers", 2}, {"heads", 2},
                                          {"mixing", "linear"}, {"grounding", "token"}, {"grounding_mixing", "shared"}}, 24});
  c.push_back({"osmformer_off", {{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 2}, {"grounding", "off"}}, 24});
  c.push_back({"osm_rnn_element", {{"type", "osm_rnn"}, {"group", "SO(4)"}, {"rnn_drive", "element"}}, 24});
  c.push_back({"osm_rnn_token_tied", {{"type", "osm_rnn"}, {"group", "SO(4)"}, {"rnn_drive", "token"},
                                      {"readout", "tied"}}, 24});
  c.push_back({"transformer_tied", {{"type", "transformer"}, {"D", 16}, {"layers", 1}, {"heads", 2}, {"head", "tied"}}, 24});
  // A fixed readout temperature (model.tau): no log_tau parameter.
  c.push_back({"osm_rnn_fixed_tau", {{"type", "osm_rnn"}, {"group", "SO(4)"}, {"rnn_drive", "token"}, {"tau", 2.5}}, 24});
  if (all) {
    c.push_back({"osmformer_u", {{"type", "osmformer"}, {"group", "SO(2)xU(2)"}, {"layers", 1}, {"heads", 2}}, 20});
    c.push_back({"osm_rnn", {{"type", "osm_rnn"}, {"group", "SU(3)"}, {"mixing", "linear"}, {"renormalize_every", 5}}, 24});
    c.push_back({"osm_rnn_bounded", {{"type", "osm_rnn"}, {"group", "SO(4)"}, {"mixing", "bounded"}}, 24});
    c.push_back({"lstm", {{"type", "lstm"}, {"hidden", 12}}, 24});
    c.push_back({"exprnn", {{"type", "exprnn"}, {"hidden", 8}}, 24});
  }
  return c;
}

std::string fmt(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.3g", v);
  if (std::abs(v) >= 1e-3) std::snprintf(b, sizeof b, "%.8f", v);
  return b;
}

std::string source_path(const std::string& rel) { return std::string(LIEGRAD_SOURCE_DIR) + "/" + rel; }

}  // namespace

TEST_CASE("checkpoint: examples/load_checkpoint.py (numpy) recomputes liegrad's BPC to 1e-4") {
  if (!python_has("numpy")) {
    LIEGRAD_SKIP_TEST(kPython << " with numpy is not available (apt-get install python3-numpy)");
  }
  const std::string script = source_path("examples/load_checkpoint.py");
  REQUIRE(fs::exists(script));
  test::TempDir dir;
  const std::string text = (dir.path / "text.txt").string();
  std::ofstream(text, std::ios::binary) << generated_text();
  for (const Case& c : cases(true)) {
    INFO("model " << c.tag);
    const Trained t = train_tiny(dir, c.tag, c.model, text, c.seq_len);
    std::string out;
    const int rc = run_command(std::string(kPython) + " " + shell_quote(script) + " " + shell_quote(t.checkpoint) + " " +
                                   shell_quote(text) + " --json",
                               out);
    INFO("script output: " << out);
    REQUIRE(rc == 0);
    const nlohmann::json j = last_json_line(out);
    REQUIRE(j.contains("bpc"));
    const std::string note = std::string(c.tag) + ": liegrad " + fmt(t.bpc) + " BPC, numpy " +
                             fmt(j.at("bpc").get<double>()) + ", difference " + fmt(j.at("bpc").get<double>() - t.bpc);
    MESSAGE(note);
    CHECK(std::abs(j.at("bpc").get<double>() - t.bpc) < 1e-4);
    CHECK(j.at("predictions").get<int64_t>() == static_cast<int64_t>(fs::file_size(text)) - 1);
  }
}

TEST_CASE("checkpoint: load_checkpoint.py rejects a bad checkpoint with a message and exit code 1") {
  if (!python_has("numpy")) {
    LIEGRAD_SKIP_TEST(kPython << " with numpy is not available (apt-get install python3-numpy)");
  }
  test::TempDir dir;
  const std::string script = source_path("examples/load_checkpoint.py");
  const std::string text = (dir.path / "text.txt").string();
  std::ofstream(text) << "some text\n";
  const std::string truncated = (dir.path / "truncated.json").string();
  std::ofstream(truncated) << "{\"format\": \"liegrad-checkpoint\", \"version\": 1, \"config\": {";
  const std::string other = (dir.path / "other.json").string();
  std::ofstream(other) << "{\"format\": \"something-else\"}";
  for (const auto& [file, expect] : std::vector<std::pair<std::string, std::string>>{
           {truncated, "not valid JSON"}, {other, "not a liegrad checkpoint"}, {(dir.path / "missing.json").string(), "cannot read"}}) {
    std::string out;
    const int rc = run_command(std::string(kPython) + " " + shell_quote(script) + " " + shell_quote(file) + " " + shell_quote(text), out);
    INFO(file << ": " << out);
    CHECK(rc == 1);
    CHECK(out.find(expect) != std::string::npos);
    CHECK(out.find("Traceback") == std::string::npos);
  }
}

TEST_CASE("checkpoint: bench/torch_reference.py computes liegrad's loss to 1e-4 from the same weights") {
  if (!python_has("numpy") || !python_has("torch")) {
    LIEGRAD_SKIP_TEST(kPython << " with numpy and torch is not available (apt-get install python3-torch)");
  }
  const std::string script = source_path("bench/torch_reference.py");
  REQUIRE(fs::exists(script));
  test::TempDir dir;
  const std::string text = (dir.path / "text.txt").string();
  std::ofstream(text, std::ios::binary) << generated_text();
  std::vector<Trained> trained;
  std::string cmd = std::string(kPython) + " " + shell_quote(script) + " --text " + shell_quote(text) + " --threads 1 --json";
  for (const Case& c : cases(false)) {
    trained.push_back(train_tiny(dir, c.tag, c.model, text, c.seq_len));
    cmd += " --checkpoint " + shell_quote(trained.back().checkpoint);
  }
  std::string out;
  const int rc = run_command(cmd, out);  // one process (one torch import), one JSON line per checkpoint
  INFO("script output: " << out);
  REQUIRE(rc == 0);
  std::map<std::string, nlohmann::json> by_checkpoint;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    nlohmann::json j = nlohmann::json::parse(out.substr(start, end - start), nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("checkpoint")) by_checkpoint[j.at("checkpoint").get<std::string>()] = j;
    start = end + 1;
  }
  const std::vector<Case> cs = cases(false);
  for (size_t k = 0; k < cs.size(); ++k) {
    INFO("model " << cs[k].tag);
    REQUIRE(by_checkpoint.count(trained[k].checkpoint) == 1);
    const nlohmann::json& j = by_checkpoint.at(trained[k].checkpoint);
    // Every exponential route the timing mode may choose (Taylor and torch.linalg.matrix_exp).
    for (const auto& [route, loss] : j.at("loss_by_expm").items()) {
      INFO("route " << route);
      const std::string note = std::string(cs[k].tag) + " (" + route + "): liegrad loss " + fmt(trained[k].nats) +
                               " nats, torch " + fmt(loss.get<double>()) + ", difference " +
                               fmt(loss.get<double>() - trained[k].nats);
      MESSAGE(note);
      CHECK(std::abs(loss.get<double>() - trained[k].nats) < 1e-4);
    }
  }
}
