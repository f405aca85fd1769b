// liegrad.train(config, out_dir, on_step=...): the trainer of `liegrad train`
// (train/trainer.hpp), with the same run directory, checkpoints and results.
//
// Ctrl-C: the GIL is released while training; after every step the trainer calls back
// here, which takes the GIL, calls on_step (if given) and then PyErr_CheckSignals().
// A KeyboardInterrupt (or an exception raised by on_step) sets the trainer's stop flag,
// so it writes last.json at that step and returns, exactly like SIGINT in the CLI; the
// exception is then raised again to the caller. on_step returning False stops the same
// way without an exception (the result says "interrupted": True). Signals are only seen
// between steps, so an interim evaluation finishes first.
#include <pybind11/pybind11.h>

#include <atomic>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "train/trainer.hpp"

namespace liegrad::py_bind {

namespace {

using namespace pybind11::literals;

py::dict step_dict(const train::StepReport& r) {
  py::dict d;
  d["step"] = r.step;
  d["total_steps"] = r.total_steps;
  d["loss"] = r.loss;
  d["bpc"] = r.loss / std::log(2.0);
  d["lr"] = r.lr;
  d["grad_norm"] = r.grad_norm;
  d["val_bpc"] = r.val_bpc >= 0 ? py::object(py::float_(r.val_bpc)) : py::object(py::none());
  return d;
}

py::dict run(const py::object& config, const std::string& out_dir, const py::object& on_step, bool resume,
             bool force, const std::string& data_dir, bool log) {
  if (!on_step.is_none() && !PyCallable_Check(on_step.ptr()))
    throw py::type_error("train: on_step must be callable (it receives a dict per step) or None");
  if (config.is_none() && !resume) throw py::value_error("train: a config dict is required (None only with resume=True)");
  const nlohmann::json cfg = config.is_none() ? nlohmann::json() : to_json(config, "train: config");

  std::atomic<bool> stop{false};
  std::optional<py::error_already_set> pending;  // the exception that stopped the run
  train::TrainOptions opt;
  opt.out_dir = out_dir;
  opt.data_dir = data_dir;
  opt.resume = resume;
  opt.force = force;
  opt.log = log ? &std::cerr : nullptr;
  opt.stop = &stop;
  opt.on_step = [&](const train::StepReport& r) {
    py::gil_scoped_acquire gil;
    if (pending) return;
    try {
      if (!on_step.is_none()) {
        py::object ret = on_step(step_dict(r));
        if (ret.ptr() == Py_False) stop = true;
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    } catch (py::error_already_set& e) {
      pending.emplace(std::move(e));
      stop = true;
    } catch (const std::exception& e) {  // a C++ exception out of a bound callback
      PyErr_SetString(PyExc_RuntimeError, e.what());
      pending.emplace();
      stop = true;
    }
  };

  train::TrainResult r;
  {
    py::gil_scoped_release release;
    r = train::run_training(cfg, opt);
  }
  if (pending) {
    pending->restore();
    throw py::error_already_set();
  }
  py::dict out;
  out["steps_done"] = r.steps_done;
  out["interrupted"] = r.interrupted;
  out["parameters"] = r.parameters;
  out["seconds"] = r.seconds;
  if (!r.interrupted) {
    // The task's scores as in result.json (text: val_bpc, test_bpc, best_val_bpc, ...).
    for (auto it = r.scores.begin(); it != r.scores.end(); ++it) out[py::str(it.key())] = from_json(it.value());
    out["best_step"] = r.best_step;
    out["tokens_per_second"] = r.tokens_per_second;
  }
  return out;
}

}  // namespace

void bind_train(py::module_& m) {
  m.def("train", &run, "config"_a, "out_dir"_a, py::kw_only(), "on_step"_a = py::none(), "resume"_a = false,
        "force"_a = false, "data_dir"_a = "", "log"_a = false,
        "Trains like `liegrad train`: config is the run configuration (dict with model, data, train\n"
        "sections; None with resume=True), out_dir the run directory (config.json, metrics.jsonl,\n"
        "best.json, last.json, result.json). on_step(dict) is called after every step with step,\n"
        "total_steps, loss, bpc, lr, grad_norm and val_bpc (None unless the step evaluated); returning\n"
        "False stops the run. Ctrl-C raises KeyboardInterrupt after writing last.json (continue with\n"
        "resume=True). log=True prints progress to stderr. Returns a dict (val_bpc, test_bpc, ...).");
}

}  // namespace liegrad::py_bind
