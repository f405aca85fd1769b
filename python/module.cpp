// The Python module `liegrad` (docs/library.md): Lie groups on numpy arrays
// (py_groups.cpp), checkpoints (py_checkpoint.cpp) and training (py_train.cpp).
// liegrad's typed exceptions become Python ones: ShapeError, ValueError and
// ConfigError -> ValueError; IoError -> OSError; NumericError -> FloatingPointError;
// any other liegrad error -> RuntimeError.
#include <pybind11/pybind11.h>

#include <string>

#include "bindings.hpp"
#include "core/errors.hpp"
#include "core/version.hpp"
#include "models/model.hpp"

namespace liegrad::py_bind {

nlohmann::json to_json(const pybind11::handle& obj, const std::string& what) {
  namespace py = pybind11;
  std::string text;
  try {
    text = py::module_::import("json").attr("dumps")(obj).cast<std::string>();
  } catch (py::error_already_set& e) {
    throw py::type_error(what + " is not JSON-serialisable: " + std::string(e.what()));
  }
  return nlohmann::json::parse(text);
}

pybind11::object from_json(const nlohmann::json& j) {
  return pybind11::module_::import("json").attr("loads")(j.dump());
}

}  // namespace liegrad::py_bind

PYBIND11_MODULE(liegrad, m) {
  namespace py = pybind11;
  using namespace liegrad::py_bind;
  m.doc() = "liegrad: sequence models whose hidden states live on Lie groups (docs/library.md)";
  m.attr("__version__") = LIEGRAD_VERSION;

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const liegrad::ShapeError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const liegrad::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const liegrad::ConfigError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const liegrad::IoError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const liegrad::NumericError& e) {
      PyErr_SetString(PyExc_FloatingPointError, e.what());
    } catch (const liegrad::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  bind_groups(m);
  bind_checkpoint(m);
  bind_train(m);
  m.def("model_types", &liegrad::models::model_types,
        "the model type names: the built-in ones and those of loaded plugins");
}
