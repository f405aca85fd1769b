// Parsing and validation of run configurations (see run_config.hpp).
#include "train/run_config.hpp"

#include <fstream>
#include <sstream>

#include "core/errors.hpp"
#include "tasks/registry.hpp"
#include "core/config.hpp"
#include "optim/optimizer.hpp"
#include "optim/schedule.hpp"

namespace liegrad::train {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot read '" + path + "': no such file or not readable");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_json_text(ss.str(), path);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& path) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw ConfigError("'" + path + "' is empty (expected JSON)");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the offset of the failure; turn it into a line number.
    const size_t upto = std::min<size_t>(e.byte, text.size());
    const int64_t line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(upto), '\n');
    throw ConfigError("'" + path + "' is not valid JSON (line " + std::to_string(line) + "): " + e.what());
  } catch (const nlohmann::json::exception& e) {
    // Not a syntax error but a value nlohmann cannot hold (out_of_range.406: a number
    // beyond double's range, such as 1e400).
    throw ConfigError("'" + path + "' is not valid JSON: " + e.what());
  }
}

void apply_overrides(nlohmann::json& config, const std::vector<std::string>& sets) {
  for (const auto& s : sets) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("--set '" + printable(s) + "': expected key=value, e.g. train.lr=1e-3");
    set_dotted(config, s.substr(0, eq), s.substr(eq + 1));
  }
}

RunConfig parse_run_config(const nlohmann::json& j) {
  if (!j.is_object()) throw ConfigError("config: expected a JSON object with \"model\", \"data\" and \"train\" sections");
  ConfigReader top(j, "config");
  top.allow({"model", "data", "train", "comment"});
  top.finish();
  RunConfig rc;
  if (!j.contains("model") || !j.at("model").is_object())
    throw ConfigError("config: missing the \"model\" section (an object with a \"type\", e.g. \"osmformer\")");
  rc.model = j.at("model");

  ConfigReader d(j.value("data", nlohmann::json::object()), "data");
  rc.data.dataset = d.get_string("dataset", rc.data.dataset);
  const tasks::TaskSpec& task = tasks::find_task_spec(rc.data.dataset);
  rc.data.section = task.parse_data(d, rc.data.dataset);
  d.allow({"comment"});
  d.finish();

  ConfigReader t(j.value("train", nlohmann::json::object()), "train");
  TrainConfig& c = rc.train;
  c.steps = t.get_int("steps", c.steps, 1);
  c.batch = t.get_int("batch", c.batch, 1);
  for (const auto& [key, hint] : task.unused_train_keys)
    if (t.has(key)) throw ConfigError("train." + key + ": not used by " + rc.data.dataset + " (" + hint + ")");
  c.seq_len = t.get_int("seq_len", c.seq_len, 1);
  c.optimizer = t.get_string("optimizer", c.optimizer, optim::optimizer_names());
  if (t.has("lr") && t.json().at("lr").is_number() && t.json().at("lr").get<double>() <= 0)
    throw ConfigError("train.lr: expected a number > 0, got " + t.json().at("lr").dump());
  c.lr = t.get_double("lr", c.lr, 1e-300);
  // Passed through to optim::make_optimizer, which checks them against the optimizer.
  const std::vector<std::string> optimizer_keys = {"beta1",    "beta2",        "eps",           "weight_decay",
                                                   "momentum", "reorth_every", "bias_correction"};
  for (const std::string& key : optimizer_keys)
    if (t.has(key)) c.optimizer_options[key] = t.json().at(key);
  if (t.has("nesterov")) c.optimizer_options["nesterov"] = t.get_bool("nesterov", false);
  t.allow(optimizer_keys);
  c.schedule = t.get_string("schedule", c.schedule, optim::schedule_names());
  c.warmup = t.get_int("warmup", c.warmup, 0);
  c.min_lr_frac = t.get_double("min_lr_frac", c.min_lr_frac, 0.0, 1.0);
  c.clip = t.get_double_or_none("clip", c.clip, 0.0, 0.0);
  c.eval_interval = t.get_int("eval_interval", c.eval_interval, 1);
  c.eval_tokens = t.get_int("eval_tokens", c.eval_tokens, 0);
  c.patience = t.get_int("patience", c.patience, 0);
  c.log_interval = t.get_int("log_interval", c.log_interval, 1);
  c.seed = static_cast<uint64_t>(t.get_int("seed", static_cast<int64_t>(c.seed), 0));
  c.threads = static_cast<int>(t.get_int("threads", c.threads, 1, 256));
  c.time_budget_s = t.get_double("time_budget_s", c.time_budget_s, 0.0);
  t.allow({"comment", "pin"});
  if (t.has("pin")) {
    const nlohmann::json& pins = t.json().at("pin");
    if (!pins.is_array())
      throw ConfigError("train.pin: expected an array of {\"param\", \"value\", \"from_step\"} objects, got " + pins.dump());
    for (size_t i = 0; i < pins.size(); ++i) {
      if (!pins[i].is_object())
        throw ConfigError("train.pin[" + std::to_string(i) + "]: expected an object with \"param\", \"value\" and \"from_step\"");
      ConfigReader p(pins[i], "train.pin[" + std::to_string(i) + "]");
      ParamPin pin;
      pin.param = p.get_string("param", "");
      if (pin.param.empty()) throw ConfigError("train.pin[" + std::to_string(i) + "].param: expected a parameter name");
      if (!p.has("value")) throw ConfigError("train.pin[" + std::to_string(i) + "].value: expected a number");
      pin.value = p.get_double("value", 0.0);
      pin.from_step = p.get_int("from_step", 0, 0);
      p.finish();
      c.pins.push_back(pin);
    }
  }
  t.finish();
  // Validate the optimizer's own options now, so a typo fails before any data loads.
  std::vector<ag::Parameter<float>> none;
  optim::make_optimizer<float>(c.optimizer, none, c.optimizer_options);
  optim::make_schedule(c.schedule, c.lr, c.warmup, c.steps, c.min_lr_frac);
  return rc;
}

nlohmann::json RunConfig::resolved() const {
  nlohmann::json j;
  j["model"] = model;
  j["data"] = data.section;
  nlohmann::json t = {{"steps", train.steps},
                      {"batch", train.batch},
                      {"seq_len", train.seq_len},
                      {"optimizer", train.optimizer},
                      {"lr", train.lr},
                      {"schedule", train.schedule},
                      {"warmup", train.warmup},
                      {"min_lr_frac", train.min_lr_frac},
                      {"clip", train.clip},
                      {"eval_interval", train.eval_interval},
                      {"eval_tokens", train.eval_tokens},
                      {"log_interval", train.log_interval},
                      {"seed", train.seed},
                      {"threads", train.threads}};
  if (train.time_budget_s > 0) t["time_budget_s"] = train.time_budget_s;  // only when set: older runs resolve as before
  if (train.patience > 0) t["patience"] = train.patience;                  // likewise
  for (const ParamPin& p : train.pins)                                      // likewise
    t["pin"].push_back({{"param", p.param}, {"value", p.value}, {"from_step", p.from_step}});
  for (auto it = train.optimizer_options.begin(); it != train.optimizer_options.end(); ++it) t[it.key()] = it.value();
  for (const auto& [key, hint] : tasks::find_task_spec(data.dataset).unused_train_keys) t.erase(key);
  j["train"] = t;
  return j;
}

tasks::RunSettings RunConfig::task_settings() const {
  tasks::RunSettings s;
  s.batch = train.batch;
  s.seq_len = train.seq_len;
  s.seed = train.seed;
  s.eval_tokens = train.eval_tokens;
  return s;
}

}  // namespace liegrad::train
