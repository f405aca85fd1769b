// The tasks' shared defaults and `liegrad eval` option parsing (see task.hpp).
#include "tasks/task.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "autograd/ops.hpp"
#include "core/errors.hpp"

namespace liegrad::tasks {

std::string fixed4(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4f", v);
  return b;
}

std::string EvalRequest::option(const std::string& name) const {
  const auto it = options.find(name);
  return it == options.end() ? std::string() : it->second;
}

int64_t EvalRequest::sequences_option(int64_t fallback) const {
  const std::string text = option("sequences");  // strtoll's end points into it: it outlives the parse
  if (text.empty()) return fallback;
  char* end = nullptr;
  const long long sequences = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || sequences < 1) throw ValueError("--sequences must be an integer >= 1, got '" + text + "'");
  return sequences;
}

std::vector<int64_t> parse_length_list(const std::string& text, const std::string& bad_item,
                                       const std::string& no_item, const std::function<void(int64_t)>& check) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0') throw ValueError(bad_item);
    check(v);
    out.push_back(v);
  }
  if (out.empty()) throw ValueError(no_item);
  return out;
}

ag::Varf TaskTraining::forward(models::Model<float>& model, const data::Batch& batch,
                               models::RecurrentState<float>* state) const {
  return model.forward(batch.inputs, batch.B, batch.T, state);
}

ag::Varf TaskTraining::loss(const ag::Varf& logits, const data::Batch& batch) const {
  return ag::cross_entropy(logits, batch.targets);
}

}  // namespace liegrad::tasks
