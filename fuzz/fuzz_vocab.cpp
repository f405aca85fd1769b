// libFuzzer target: the vocabulary and the text encoder (data/vocab.hpp), and a
// checkpoint's vocabulary (tasks::vocab_from_json). The first input byte k splits the
// rest: symbols = the next k bytes (Vocab::from_symbols), text = what follows. The
// text is encoded with the symbols' vocabulary and with its own (Vocab::from_text);
// what encodes must decode to the same bytes, every id in range.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "data/vocab.hpp"
#include "fuzz/fuzz_outcome.hpp"
#include "tasks/vocab_record.hpp"
#include "train/checkpoint.hpp"

using liegrad::data::Vocab;

namespace {

void round_trip(const Vocab& v, std::string_view text) {
  liegrad::fuzz::expect_clean_outcome([&] {
    const std::vector<int32_t> ids = v.encode(text);
    for (int32_t id : ids)
      if (id < 0 || id >= v.size()) liegrad::fuzz::fail("encode gave an id out of range", std::to_string(id));
    if (v.decode(ids) != text) liegrad::fuzz::fail("decode(encode(text)) != text", std::string(text));
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t k = std::min<size_t>(data[0], size - 1);
  const std::string_view symbols(reinterpret_cast<const char*>(data + 1), k);
  const std::string_view text(reinterpret_cast<const char*>(data + 1 + k), size - 1 - k);
  liegrad::fuzz::expect_clean_outcome([&] {
    const Vocab v = Vocab::from_symbols(symbols);
    if (Vocab::from_string(v.to_string()) != v) liegrad::fuzz::fail("from_string(to_string(v)) != v", v.symbols());
    round_trip(v, text);
    // The checkpoint form: an array of byte values, and back.
    if (liegrad::tasks::vocab_from_json(liegrad::tasks::vocab_to_json(v), "fuzz") != v)
      liegrad::fuzz::fail("vocab_from_json(vocab_to_json(v)) != v", v.symbols());
  });
  liegrad::fuzz::expect_clean_outcome([&] {
    const Vocab own = Vocab::from_text(text);
    round_trip(own, text);
  });
  // The checkpoint's "vocab" field as arbitrary JSON text.
  liegrad::fuzz::expect_clean_outcome([&] {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_discarded()) (void)liegrad::tasks::vocab_from_json(j, "fuzz");
  });
  return 0;
}
