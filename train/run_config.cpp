// Parsing and validation of run configurations (see run_config.hpp).
#include "train/run_config.hpp"

#include <fstream>
#include <sstream>

#include "core/errors.hpp"
#include "data/group_words.hpp"
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

bool DataConfig::words() const { return data::is_word_dataset(dataset); }

namespace {

// The data keys of a group word task ("words:<group>", data/group_words.hpp).
void parse_word_data(ConfigReader& d, DataConfig& c) {
  c.inputs = d.get_string("inputs", c.inputs, {"all", "generators"});
  try {
    data::WordTask(data::word_group_of(c.dataset), c.inputs);
  } catch (const ValueError& e) {
    throw ConfigError("data.dataset: " + std::string(e.what()));
  }
  c.min_len = d.get_int("min_len", c.min_len, 1, data::kMaxWordLength);
  c.max_len = d.get_int("max_len", c.max_len, 1, data::kMaxWordLength);
  if (c.min_len > c.max_len)
    throw ConfigError("data.min_len: " + std::to_string(c.min_len) + " is above data.max_len = " +
                      std::to_string(c.max_len));
  if (d.has("eval_lengths")) {
    const nlohmann::json& v = d.json().at("eval_lengths");
    if (!v.is_array() || v.empty())
      throw ConfigError("data.eval_lengths: expected a non-empty array of word lengths, e.g. [64, 128], got " + v.dump());
    c.eval_lengths.clear();
    for (const auto& x : v) {
      if (!x.is_number_integer())
        throw ConfigError("data.eval_lengths: expected integer lengths, got " + x.dump());
      try {
        data::check_eval_word_length(x.get<int64_t>(), "data.eval_lengths");
      } catch (const ValueError& e) {
        throw ConfigError(e.what());
      }
      c.eval_lengths.push_back(x.get<int64_t>());
    }
  }
  d.allow({"eval_lengths"});
  c.curriculum_steps = d.get_int("curriculum_steps", c.curriculum_steps, 0);
  c.val_sequences = d.get_int("val_sequences", c.val_sequences, 1, 1000000);
  c.test_sequences = d.get_int("test_sequences", c.test_sequences, 1, 1000000);
}

}  // namespace

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
  if (rc.data.words()) {
    parse_word_data(d, rc.data);
  } else {
    if (rc.data.dataset != "tinyshakespeare" && rc.data.dataset != "ptb_char" && rc.data.dataset.rfind("text:", 0) != 0)
      throw ConfigError("data.dataset: unknown dataset '" + printable(rc.data.dataset) +
                        "' (expected \"tinyshakespeare\", \"ptb_char\", \"text:<path>\" or \"words:<group>\")" +
                        (nearest_word(rc.data.dataset, {"tinyshakespeare", "ptb_char"}).empty()
                             ? ""
                             : "; did you mean '" + nearest_word(rc.data.dataset, {"tinyshakespeare", "ptb_char"}) + "'?"));
    rc.data.val_frac = d.get_double("val_frac", rc.data.val_frac, 0.0, 0.999);
    rc.data.test_frac = d.get_double("test_frac", rc.data.test_frac, 0.0, 0.999);
    if (rc.data.val_frac <= 0) throw ConfigError("data.val_frac: must be > 0 (a validation split is needed)");
  }
  d.allow({"comment"});
  d.finish();

  ConfigReader t(j.value("train", nlohmann::json::object()), "train");
  TrainConfig& c = rc.train;
  c.steps = t.get_int("steps", c.steps, 1);
  c.batch = t.get_int("batch", c.batch, 1);
  if (rc.data.words() && t.has("seq_len"))
    throw ConfigError("train.seq_len: not used by group word tasks (" + rc.data.dataset +
                      "); set the word lengths with data.min_len and data.max_len");
  c.seq_len = t.get_int("seq_len", c.seq_len, 1);
  c.optimizer = t.get_string("optimizer", c.optimizer, optim::optimizer_names());
  if (t.has("lr") && t.json().at("lr").is_number() && t.json().at("lr").get<double>() <= 0)
    throw ConfigError("train.lr: expected a number > 0, got " + t.json().at("lr").dump());
  c.lr = t.get_double("lr", c.lr, 1e-300);
  for (const char* key : {"beta1", "beta2", "eps", "weight_decay", "momentum", "reorth_every"})
    if (t.has(key)) c.optimizer_options[key] = t.json().at(key);
  if (t.has("nesterov")) c.optimizer_options["nesterov"] = t.get_bool("nesterov", false);
  t.allow({"beta1", "beta2", "eps", "weight_decay", "momentum", "reorth_every"});
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
  if (data.words())
    j["data"] = {{"dataset", data.dataset},         {"inputs", data.inputs},
                 {"min_len", data.min_len},         {"max_len", data.max_len},
                 {"eval_lengths", data.eval_lengths}, {"val_sequences", data.val_sequences},
                 {"test_sequences", data.test_sequences}};
  else
    j["data"] = {{"dataset", data.dataset}, {"val_frac", data.val_frac}, {"test_frac", data.test_frac}};
  if (data.words() && data.curriculum_steps > 0) j["data"]["curriculum_steps"] = data.curriculum_steps;  // older runs resolve as before
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
  if (data.words()) t.erase("seq_len");  // word lengths come from the data section
  j["train"] = t;
  return j;
}

}  // namespace liegrad::train
