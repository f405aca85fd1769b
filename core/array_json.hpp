// Arrays as JSON objects {"shape": [...], <values_key>: [...]}, the form checkpoints
// store tensors in (docs/checkpoint.md): the optimizer's buffers under "data", the
// trainer's carried recurrent state under "values". Values are row-major; finite ones
// are JSON numbers (float -> double is exact, and nlohmann writes doubles so that they
// parse back to the same bits), non-finite ones the strings "nan", "inf" and "-inf".
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/array.hpp"

namespace liegrad {

// a: any shape.
template <class T>
nlohmann::json array_to_json(const Array<T>& a, const std::string& values_key);

// Reads what array_to_json wrote. ValueError starting with `where` for anything else:
// not such an object, a shape that is not 0 to 3 non-negative integers, a value count
// that does not match the shape, or an entry that is neither a number nor one of the
// three strings.
template <class T>
Array<T> array_from_json(const nlohmann::json& j, const std::string& values_key, const std::string& where);

}  // namespace liegrad
