// Every built-in model type is written again outside C++, as a check of its maths: in
// numpy (examples/load_checkpoint.py) and in PyTorch (bench/torch_reference.py), each
// dispatching on the type through one table, `MODELS = {"type": Class, ...}`. This test
// reads both tables and fails when a built-in type is missing from one and is not named
// in kDeliberatelySkipped below (with the reason), when a table names a type that is not
// built in, or when a skipped type has a reference after all. The references' numbers
// are checked against liegrad in tests/test_checkpoint_python.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "models/model.hpp"
#include "tests/train_test_utils.hpp"

using namespace liegrad;

namespace {

// (reference file, built-in type) pairs that have no reference on purpose, with why.
const std::map<std::pair<std::string, std::string>, std::string> kDeliberatelySkipped = {};

const char* const kReferences[] = {"examples/load_checkpoint.py", "bench/torch_reference.py"};

// The quoted keys of the file's one-line `MODELS = {...}` table; empty when it has none.
std::set<std::string> dispatch_table(const std::string& path) {
  std::istringstream in(test::read_text(path));
  const std::regex key("\"([a-z0-9_]+)\"\\s*:");
  std::set<std::string> types;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MODELS = {", 0) != 0) continue;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), key); it != std::sregex_iterator(); ++it)
      types.insert((*it)[1].str());
  }
  return types;
}

}  // namespace

TEST_CASE("every built-in model type has a numpy and a PyTorch reference, or is skipped by name") {
  const std::vector<std::string>& builtin = models::builtin_model_types();
  REQUIRE(builtin.size() >= 5);
  for (const char* file : kReferences) {
    INFO(file);
    const std::set<std::string> table = dispatch_table(std::string(LIEGRAD_SOURCE_DIR) + "/" + file);
    REQUIRE_MESSAGE(!table.empty(), "no one-line `MODELS = {...}` table");
    for (const std::string& type : builtin) {
      INFO(type);
      const bool skipped = kDeliberatelySkipped.count({file, type}) > 0;
      const std::string why =
          skipped ? "has a reference but is listed as skipped" : "has no reference and is not listed as skipped";
      CHECK_MESSAGE((table.count(type) > 0) != skipped, why);
    }
    for (const std::string& type : table) {
      INFO(type);
      CHECK_MESSAGE(std::find(builtin.begin(), builtin.end(), type) != builtin.end(), "is not a built-in model type");
    }
  }
}
