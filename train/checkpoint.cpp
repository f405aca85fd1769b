// Checkpoint writing and reading (see checkpoint.hpp).
#include "train/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>

#include "core/alloc_limit.hpp"
#include "core/errors.hpp"
#include "groups/group.hpp"
#include "tasks/registry.hpp"
#include "tasks/vocab_record.hpp"
#include "train/run_config.hpp"

namespace liegrad::train {

void write_file_atomic(const std::string& path, const std::string& contents) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::path tmp = dir / ("." + target.filename().string() + ".tmp");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw IoError("cannot write '" + tmp.string() + "': " + std::strerror(errno));
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t w = ::write(fd, contents.data() + done, contents.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw IoError("cannot write '" + tmp.string() + "': " + why);
    }
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw IoError("cannot flush '" + tmp.string() + "' to disk: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw IoError("cannot rename '" + tmp.string() + "' to '" + path + "': " + why);
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_json_atomic(const std::string& path, const nlohmann::json& j) { write_file_atomic(path, j.dump() + "\n"); }

namespace {
const char* representation(ag::ParamRole r) {
  switch (r) {
    case ag::ParamRole::GroupAlgebra: return "algebra_coordinates";
    case ag::ParamRole::GroupManifold: return "group_element";
    case ag::ParamRole::GroupBase: return "group_element";
    default: return "euclidean";
  }
}
}  // namespace

nlohmann::json parameters_to_json(models::Model<float>& model) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : model.parameters()) {
    nlohmann::json e;
    e["name"] = p.name;
    e["shape"] = p.var.shape().vec();
    e["role"] = ag::role_name(p.role);
    if (p.group) e["group"] = p.group->name();
    e["representation"] = representation(p.role);
    e["values"] = p.var.value().to_vector();
    out.push_back(std::move(e));
  }
  return out;
}

void parameters_from_json(models::Model<float>& model, const nlohmann::json& params, const std::string& source) {
  if (!params.is_array()) throw IoError(source + ": \"parameters\" must be an array");
  std::map<std::string, const nlohmann::json*> by_name;
  for (const auto& e : params) {
    if (!e.is_object() || !e.contains("name") || !e.at("name").is_string())
      throw IoError(source + ": a parameter entry has no name");
    if (!by_name.emplace(e.at("name").get<std::string>(), &e).second)
      throw IoError(source + ": parameter '" + printable(e.at("name").get<std::string>()) + "' appears twice");
  }
  for (auto& p : model.parameters()) {
    auto it = by_name.find(p.name);
    if (it == by_name.end())
      throw ValueError(source + ": parameter '" + p.name + "' of the configured model is missing");
    const nlohmann::json& e = *it->second;
    const nlohmann::json* js = e.contains("shape") ? &e.at("shape") : nullptr;
    bool valid = js != nullptr && js->is_array();
    std::vector<int64_t> shape;
    for (size_t k = 0; valid && k < js->size(); ++k) {
      valid = (*js)[k].is_number_integer();
      if (valid) shape.push_back((*js)[k].get<int64_t>());
    }
    if (!valid) throw IoError(source + ": parameter '" + p.name + "' has no valid shape");
    Shape stored;
    try {
      stored = Shape::of(shape);
    } catch (const ShapeError& err) {
      throw IoError(source + ": parameter '" + p.name + "' has shape " + js->dump() + ": " + err.what());
    }
    if (stored != p.var.shape())
      throw ValueError(source + ": parameter '" + p.name + "' has shape " + stored.str() +
                       " but the configured model needs " + p.var.shape().str());
    if (!e.contains("values")) throw IoError(source + ": parameter '" + p.name + "' has no values");
    const auto& values = e.at("values");
    if (!values.is_array() || static_cast<int64_t>(values.size()) != p.var.size())
      throw IoError(source + ": parameter '" + p.name + "' has " + std::to_string(values.size()) +
                    " values, expected " + std::to_string(p.var.size()));
    Array<float>& v = p.var.value();
    for (int64_t i = 0; i < v.size(); ++i) {
      const auto& x = values[static_cast<size_t>(i)];
      if (!x.is_number()) throw IoError(source + ": parameter '" + p.name + "' holds a non-number");
      v[i] = x.get<float>();
      if (!std::isfinite(v[i]))
        throw IoError(source + ": parameter '" + p.name + "' holds " + x.dump() + ", not a finite float");
    }
    by_name.erase(it);
  }
  if (!by_name.empty())
    throw ValueError(source + ": parameter '" + printable(by_name.begin()->first) + "' is not part of the configured model");
}

nlohmann::json checkpoint_json(const nlohmann::json& config, const data::Vocab& vocab, models::Model<float>& model,
                               int64_t step) {
  if (vocab.size() != model.vocab_size())
    throw ValueError("checkpoint: the vocabulary has " + std::to_string(vocab.size()) + " symbols but the model " +
                     std::to_string(model.vocab_size()));
  return checkpoint_json(config, tasks::vocab_to_json(vocab), model, step);
}

nlohmann::json checkpoint_json(const nlohmann::json& config, const nlohmann::json& vocab_record,
                               models::Model<float>& model, int64_t step) {
  nlohmann::json j;
  j["format"] = kCheckpointFormat;
  j["version"] = kCheckpointVersion;
  j["config"] = config;
  j["config"]["model"] = model.config();
  j["vocab"] = vocab_record;
  j["step"] = step;
  j["parameters"] = parameters_to_json(model);
  return j;
}

void write_checkpoint(const std::string& path, const nlohmann::json& config, const data::Vocab& vocab,
                      models::Model<float>& model, int64_t step) {
  nlohmann::json j = checkpoint_json(config, vocab, model, step);
  j["config"] = parse_run_config(j.at("config")).resolved();  // validates; what the trainer stores
  j["config"]["model"] = model.config();
  write_json_atomic(path, j);
}

nlohmann::json read_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot read checkpoint '" + path + "': no such file or not readable");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_checkpoint(ss.str(), path);
}

nlohmann::json parse_checkpoint(const std::string& text, const std::string& path) {
  if (text.empty()) throw IoError("checkpoint '" + path + "' is empty");
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw IoError("checkpoint '" + path + "' is not valid JSON (truncated or corrupted?)");
  if (!j.is_object() || j.value("format", "") != kCheckpointFormat)
    throw IoError("'" + path + "' is not a liegrad checkpoint (expected \"format\": \"" + kCheckpointFormat + "\")");
  if (!j.contains("version") || !j.at("version").is_number_integer() || j.at("version").get<int>() != kCheckpointVersion)
    throw IoError("checkpoint '" + path + "' has version " + (j.contains("version") ? j.at("version").dump() : "none") +
                  "; this liegrad reads version " + std::to_string(kCheckpointVersion));
  for (const char* key : {"config", "vocab", "parameters", "step"})
    if (!j.contains(key)) throw IoError("checkpoint '" + path + "' lacks \"" + key + "\"");
  return j;
}

LoadedModel load_model(const std::string& path, const std::string& data_dir) {
  return load_model(read_checkpoint(path), path, data_dir);
}

LoadedModel load_model(const nlohmann::json& j, const std::string& path, const std::string& data_dir) {
  const std::string source = "checkpoint '" + path + "'";
  LoadedModel m;
  m.config = j.at("config");
  if (!m.config.is_object() || !m.config.contains("model")) throw IoError(source + ": the config has no model section");
  if (!j.at("step").is_number_integer() || j.at("step").get<int64_t>() < 0)
    throw IoError(source + ": \"step\" is " + j.at("step").dump() + ", not a step number");
  m.step = j.at("step").get<int64_t>();
  const RunConfig rc = parse_run_config(m.config);
  m.task = tasks::make_task({rc.data.section, data_dir, &j.at("vocab"), source});
  {
    // The model must match the values the file holds, so it may not be much larger:
    // a small hostile file cannot make liegrad allocate gigabytes.
    int64_t held = 0;
    if (j.at("parameters").is_array())
      for (const auto& e : j.at("parameters"))
        if (e.is_object() && e.contains("values") && e.at("values").is_array())
          held += static_cast<int64_t>(e.at("values").size());
    const AllocationLimit limit(4 * held + (int64_t(1) << 20),
                                source + ": the configured model is far larger than the " + std::to_string(held) +
                                    " parameter values the file holds");
    m.model = models::make_model<float>(m.config.at("model"), m.task->input_vocab(), 0, m.task->classes());
  }
  parameters_from_json(*m.model, j.at("parameters"), source);
  return m;
}

}  // namespace liegrad::train
