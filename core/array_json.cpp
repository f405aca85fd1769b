// Arrays to and from checkpoint JSON (see array_json.hpp).
#include "core/array_json.hpp"

#include <cmath>
#include <vector>

#include "core/errors.hpp"

namespace liegrad {

namespace {

template <class T>
T scalar_from_json(const nlohmann::json& x, const std::string& where) {
  if (x.is_number()) return static_cast<T>(x.get<double>());
  if (x.is_string()) {
    const std::string s = x.get<std::string>();
    if (s == "nan") return static_cast<T>(std::nan(""));
    if (s == "inf") return static_cast<T>(INFINITY);
    if (s == "-inf") return static_cast<T>(-INFINITY);
  }
  throw ValueError(where + ": expected a number, got " + x.dump());
}

}  // namespace

template <class T>
nlohmann::json array_to_json(const Array<T>& a, const std::string& values_key) {
  nlohmann::json values = nlohmann::json::array();
  for (int64_t i = 0; i < a.size(); ++i) {
    const double x = static_cast<double>(a[i]);
    if (std::isfinite(x))
      values.push_back(x);
    else
      values.push_back(std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf"));
  }
  return {{"shape", a.shape().vec()}, {values_key, std::move(values)}};
}

template <class T>
Array<T> array_from_json(const nlohmann::json& j, const std::string& values_key, const std::string& where) {
  if (!j.is_object() || !j.contains("shape") || !j.contains(values_key) || !j.at(values_key).is_array() ||
      !j.at("shape").is_array())
    throw ValueError(where + ": expected {\"shape\": [...], \"" + values_key + "\": [...]}");
  std::vector<int64_t> dims;
  for (const nlohmann::json& d : j.at("shape")) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) throw ValueError(where + ": bad shape " + j.at("shape").dump());
    dims.push_back(d.get<int64_t>());
  }
  if (dims.size() > 3) throw ValueError(where + ": bad shape " + j.at("shape").dump() + " (at most 3 dimensions)");
  const Shape shape = Shape::of(dims);
  const nlohmann::json& values = j.at(values_key);
  if (static_cast<int64_t>(values.size()) != shape.numel())
    throw ValueError(where + ": " + std::to_string(values.size()) + " values for shape " + shape.str());
  Array<T> a(shape);
  for (int64_t i = 0; i < a.size(); ++i) a[i] = scalar_from_json<T>(values[static_cast<size_t>(i)], where);
  return a;
}

template nlohmann::json array_to_json(const Array<float>&, const std::string&);
template nlohmann::json array_to_json(const Array<double>&, const std::string&);
template Array<float> array_from_json(const nlohmann::json&, const std::string&, const std::string&);
template Array<double> array_from_json(const nlohmann::json&, const std::string&, const std::string&);

}  // namespace liegrad
