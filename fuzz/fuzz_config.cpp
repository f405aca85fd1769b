// libFuzzer target: the run-configuration reader. The input is the text of a config
// file (`liegrad train --config FILE`): parse_json_text, parse_run_config, then the
// model section is built as `liegrad params --config` builds it (vocabulary of 65).
// Model construction runs under a 2^22-element AllocationLimit so that each input
// takes milliseconds; the limit is the same mechanism as make_model's own (2^28).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/alloc_limit.hpp"
#include "fuzz/fuzz_outcome.hpp"
#include "models/model.hpp"
#include "train/run_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  liegrad::fuzz::expect_clean_outcome([&] {
    const nlohmann::json j = liegrad::train::parse_json_text(text, "fuzz.json");
    const liegrad::train::RunConfig rc = liegrad::train::parse_run_config(j);
    (void)rc.resolved();
    const liegrad::AllocationLimit limit(int64_t(1) << 22, "fuzz: model larger than the harness allows");
    (void)liegrad::models::make_model<float>(rc.model, 65, 0);
  });
  return 0;
}
