// The text vocabulary's checkpoint record (see vocab_record.hpp).
#include "tasks/vocab_record.hpp"

#include "core/errors.hpp"

namespace liegrad::tasks {

nlohmann::json vocab_to_json(const data::Vocab& vocab) {
  nlohmann::json a = nlohmann::json::array();
  for (char c : vocab.symbols()) a.push_back(static_cast<int>(static_cast<unsigned char>(c)));
  return a;
}

data::Vocab vocab_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_array() || j.empty()) throw IoError(source + ": \"vocab\" must be a non-empty array of byte values");
  std::string symbols;
  for (const auto& b : j) {
    // int64_t, not int: a large integer must not wrap around into 0..255.
    if (!b.is_number_integer() || b.get<int64_t>() < 0 || b.get<int64_t>() > 255)
      throw IoError(source + ": \"vocab\" holds " + b.dump() + ", not a byte value 0..255");
    symbols.push_back(static_cast<char>(b.get<int64_t>()));
  }
  try {
    return data::Vocab::from_symbols(symbols);
  } catch (const ValueError& e) {
    throw IoError(source + ": \"vocab\" is not a valid vocabulary: " + e.what());
  }
}

}  // namespace liegrad::tasks
