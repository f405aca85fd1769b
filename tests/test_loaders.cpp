// Hostile input for the loaders of users' files: the regression tests of the fuzzing
// findings (docs/fuzzing.md) and of the size limits. Every input must end in success
// or in a typed liegrad::Error with a one-line message, never another exception, a
// crash or undefined behaviour.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "data/vocab.hpp"
#include "groups/group.hpp"
#include "models/model.hpp"
#include "tests/train_test_utils.hpp"
#include "tasks/vocab_record.hpp"
#include "train/checkpoint.hpp"
#include "train/run_config.hpp"
#include "train/trainer.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {

// The message of the liegrad::Error f throws, checked to be one line ("" if none).
template <class F>
std::string one_line_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    const std::string m = e.what();
    CHECK(m.find('\n') == std::string::npos);
    return m;
  }
  FAIL("expected a liegrad::Error");
  return "";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

json config_with(const json& train) { return {{"model", {{"type", "lstm"}}}, {"train", train}}; }

}  // namespace

TEST_CASE("config: user strings with control characters are escaped, the message stays one line") {
  // Fuzz finding 1 (fuzz_config): "optimizer": "a\nmw" gave a two-line message.
  std::string m = one_line_error([] { train::parse_run_config(config_with({{"optimizer", "a\nmw"}})); });
  CHECK(has(m, "'a\\nmw'"));
  m = one_line_error([] { train::parse_run_config(config_with({{"st\neps", 3}})); });
  CHECK(has(m, "'st\\neps'"));
  m = one_line_error([] { train::parse_run_config({{"model", {{"type", "lstm"}}}, {"data", {{"dataset", "ptb\tchar"}}}}); });
  CHECK(has(m, "ptb\\tchar"));
  m = one_line_error([] { groups::make_group("SO(3)\x01SO(2)"); });
  CHECK(has(m, "\\x01"));
  CHECK(printable("a\r\n\x7f\xc3\x97") == "a\\r\\n\\x7f\xc3\x97");  // UTF-8 is kept
}

TEST_CASE("config: a group word task's name with control characters stays one line") {
  // Finding 6 (docs/fuzzing.md; fuzz_config, after the merge of the group word tasks):
  // "dataset": "words:S\n5" quoted the group name raw in "unknown group 'S<newline>5'".
  const json cfg = {{"model", {{"type", "lstm"}}}, {"data", {{"dataset", "words:S\n5"}}}};
  std::string m = one_line_error([&] { train::parse_run_config(cfg); });
  CHECK(has(m, "unknown group 'S\\n5'"));
  m = one_line_error([] { train::parse_run_config({{"model", {{"type", "lstm"}}}, {"data", {{"dataset", "words:\x01"}}}}); });
  CHECK(has(m, "'\\x01'"));
}

TEST_CASE("config: a number beyond double's range is a ConfigError naming the file") {
  // Fuzz finding 2 (fuzz_config): nlohmann throws out_of_range.406, not parse_error, for
  // 1e400, and it reached the app as "internal error".
  const std::string m = one_line_error([] { train::parse_json_text("{\"train\": {\"lr\": 1e400}}", "cfg.json"); });
  CHECK(has(m, "'cfg.json' is not valid JSON"));
  CHECK(has(m, "1e400"));
  CHECK_THROWS_AS(train::parse_json_text("{\"a\": 1e400}", "x"), ConfigError);
}

TEST_CASE("config: integers beyond int64 are out of range, not undefined behaviour") {
  // 1e300 as an integer key converted double -> int64 (UBSan: outside the range of
  // representable values); 2^64 - 1 wrapped around to -1.
  for (const json& v : {json(1e300), json(-1e300), json(18446744073709551615ull), json(9.3e18)}) {
    CAPTURE(v.dump());
    const std::string m = one_line_error([&] { train::parse_run_config(config_with({{"steps", v}})); });
    CHECK(has(m, "train.steps: expected an integer >= 1"));
  }
  CHECK(train::parse_run_config(config_with({{"steps", 3.0}})).train.steps == 3);
}

TEST_CASE("model: a configuration needing more than 2^28 array elements is refused before it is allocated") {
  const std::string m = one_line_error([] { models::make_model<float>({{"type", "transformer"}, {"D", 100000}}, 65, 0); });
  CHECK(has(m, "too large"));
  CHECK(has(m, std::to_string(models::kMaxModelElements)));
  CHECK_THROWS_AS(models::make_model<float>({{"type", "lstm"}, {"hidden", 20000}, {"layers", 4}}, 65, 0), ValueError);
  CHECK(models::make_model<float>({{"type", "lstm"}, {"hidden", 8}}, 65, 0)->parameter_count() > 0);
}

TEST_CASE("checkpoint: hostile fields end in a one-line error naming the file") {
  test::TempDir tmp("hostile_ckpt");
  test::write_text(tmp / "text.txt", test::small_corpus());
  train::TrainOptions opt;
  opt.out_dir = tmp / "run";
  train::run_training(test::tiny_config(tmp / "text.txt", {{"type", "lstm"}, {"hidden", 4}}, 2), opt);
  const json good = json::parse(test::read_text(tmp / "run/last.json"));
  REQUIRE_NOTHROW(train::load_model(good, "good.json"));
  auto load = [](const json& j) { return one_line_error([&] { train::load_model(train::parse_checkpoint(j.dump(), "c.json"), "c.json"); }); };

  json j = good;
  j["config"]["model"]["hidden"] = 20000;  // a 5 KB file asking for a 1.6 GB model
  std::string m = load(j);
  CAPTURE(m);
  CHECK(has(m, "c.json"));
  CHECK(has(m, "far larger than"));
  j = good;
  j["parameters"][0]["values"][0] = 1e300;
  CHECK(has(load(j), "not a finite float"));
  j = good;
  j["parameters"].push_back(j["parameters"][0]);
  CHECK(has(load(j), "appears twice"));
  j = good;
  j["step"] = "ten";
  CHECK(has(load(j), "\"step\""));
  j = good;
  j["vocab"][0] = 4294967306ull;  // 2^32 + 10 would wrap to '\n' as an int
  CHECK(has(load(j), "not a byte value"));
  j = good;
  j["parameters"][0]["shape"] = {int64_t(1) << 40, int64_t(1) << 40};
  CHECK(has(load(j), "too many elements"));
  j = good;
  j["parameters"][0].erase("values");
  CHECK(has(load(j), "has no values"));
  j = good;
  j["config"] = "not an object";
  CHECK(has(load(j), "no model section"));
}

TEST_CASE("vocab: encode and decode round-trip every byte") {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const data::Vocab v = data::Vocab::from_text(all);
  CHECK(v.size() == 256);
  CHECK(v.decode(v.encode(all)) == all);
  CHECK(tasks::vocab_from_json(tasks::vocab_to_json(v), "x") == v);
}
