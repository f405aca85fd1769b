// The parts of the Python module, each bound by one file: groups (py_groups.cpp),
// checkpoints (py_checkpoint.cpp), training (py_train.cpp); module.cpp assembles them.
#pragma once
#include <pybind11/pybind11.h>

#include <string>

#include <nlohmann/json.hpp>

namespace liegrad::py_bind {

namespace py = pybind11;

void bind_groups(pybind11::module_& m);
void bind_checkpoint(pybind11::module_& m);
void bind_train(pybind11::module_& m);

// JSON <-> Python objects (through the json module: dicts, lists, numbers, strings).
nlohmann::json to_json(const pybind11::handle& obj, const std::string& what);
pybind11::object from_json(const nlohmann::json& j);

}  // namespace liegrad::py_bind
