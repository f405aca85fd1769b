// Resuming a run: the configuration it continues with and the checks on the one given.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace liegrad::train {

// The configuration stored in the checkpoint `checkpoint` (read from `path`), with the
// given configuration's train.steps and train.threads; a null `given` keeps the stored
// one as it is. ConfigError when `given` differs from the stored one in anything else,
// compared with every default filled in, the model's included.
nlohmann::json resumed_config(const nlohmann::json& given, const nlohmann::json& checkpoint, const std::string& path);

}  // namespace liegrad::train
