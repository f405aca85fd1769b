// A text vocabulary as a checkpoint's "vocab" record (docs/checkpoint.md): the byte value
// of each symbol in id order, an array of integers, so any byte, ASCII or not, survives
// JSON's UTF-8 strings.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "data/vocab.hpp"

namespace liegrad::tasks {

nlohmann::json vocab_to_json(const data::Vocab& vocab);
// Throws IoError naming `source` for anything but an array of distinct bytes.
data::Vocab vocab_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace liegrad::tasks
