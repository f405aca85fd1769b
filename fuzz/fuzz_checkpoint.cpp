// libFuzzer target: the checkpoint reader (`liegrad eval/sample --checkpoint FILE`).
// The input is the text of a checkpoint file: parse_checkpoint, then load_model
// rebuilds the configured model and loads every parameter. The seed corpus is made of
// tiny trained checkpoints of every model type (fuzz/make_checkpoint_seeds.cpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_outcome.hpp"
#include "train/checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  liegrad::fuzz::expect_clean_outcome([&] {
    const nlohmann::json j = liegrad::train::parse_checkpoint(text, "fuzz.json");
    (void)liegrad::train::load_model(j, "fuzz.json");
  });
  return 0;
}
