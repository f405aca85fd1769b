// liegrad.load(path) -> Checkpoint: a trained model with its configuration, vocabulary
// and parameters, evaluated and sampled by the same code as `liegrad eval --text` and
// `liegrad sample` (tasks/evaluate.hpp, train/sample.hpp), with the same thread count
// (the checkpoint's train.threads). The GIL is released while they run.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "arrays.hpp"
#include "bindings.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "models/plugin.hpp"
#include "train/checkpoint.hpp"
#include "tasks/evaluate.hpp"
#include "train/run_config.hpp"
#include "train/sample.hpp"

namespace liegrad::py_bind {

namespace {

using namespace pybind11::literals;

class PyCheckpoint {
 public:
  explicit PyCheckpoint(const std::string& path) : path_(path), m_(train::load_model(path)) {
    const train::RunConfig rc = train::parse_run_config(m_.config);
    seq_len_ = rc.train.seq_len;
    threads_ = rc.train.threads;
  }

  py::object config() const { return from_json(m_.config); }
  py::bytes vocab() const { return py::bytes(text_vocab("vocab").symbols()); }
  int64_t step() const { return m_.step; }
  std::string model_type() const { return m_.model->type(); }
  int64_t parameter_count() const { return m_.model->parameter_count(); }
  std::string path() const { return path_; }

  py::dict parameters() const {
    py::dict out;
    for (const auto& p : m_.model->parameters()) out[py::str(p.name)] = to_numpy(p.var.value(), p.var.shape().vec());
    return out;
  }

  double bpc(const py::handle& text_obj) {
    const std::string text = text_bytes(text_obj, "bpc: text");
    std::vector<int32_t> stream;
    try {
      stream = text_vocab("bpc").encode(text);
    } catch (const ValueError& e) {
      throw ValueError(std::string("bpc: the text cannot be encoded with the checkpoint's vocabulary: ") + e.what());
    }
    if (stream.size() < 2) throw ValueError("bpc: the text needs at least 2 characters, got " + std::to_string(stream.size()));
    py::gil_scoped_release release;
    set_num_threads(threads_);
    return tasks::evaluate_bpc(*m_.model, stream, seq_len_).bpc;
  }

  py::str sample(const py::handle& prompt_obj, int64_t length, double temperature, int64_t top_k, uint64_t seed) {
    train::SampleOptions opt;
    opt.length = length;
    opt.temperature = temperature;
    opt.top_k = top_k;
    opt.seed = seed;
    opt.context = seq_len_;
    const std::string prompt = text_bytes(prompt_obj, "sample: prompt");
    std::string text;
    {
      py::gil_scoped_release release;
      set_num_threads(threads_);
      text = train::sample_text(*m_.model, text_vocab("sample"), prompt, opt);
    }
    // Sampled bytes need not be valid UTF-8: undecodable ones become U+FFFD.
    return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
  }

  std::string repr() const {
    return "<liegrad.Checkpoint '" + path_ + "': " + model_type() + ", " + std::to_string(parameter_count()) +
           " parameters, step " + std::to_string(step()) + ">";
  }

 private:
  // The checkpoint's text vocabulary; ValueError for a task whose inputs are not text.
  const data::Vocab& text_vocab(const char* what) const {
    const data::Vocab* v = m_.task->text_vocab();
    if (!v) throw ValueError(std::string(what) + ": the checkpoint's task (" + m_.task->dataset() + ") does not read text");
    return *v;
  }

  std::string path_;
  train::LoadedModel m_;
  int64_t seq_len_ = 128;
  int threads_ = 1;
};

}  // namespace

void bind_checkpoint(py::module_& m) {
  py::class_<PyCheckpoint>(m, "Checkpoint", "A trained model loaded from a liegrad checkpoint (liegrad.load)")
      .def_property_readonly("config", &PyCheckpoint::config, "the run configuration (dict)")
      .def_property_readonly("vocab", &PyCheckpoint::vocab, "the symbols in id order (bytes; one byte per symbol)")
      .def_property_readonly("parameters", &PyCheckpoint::parameters,
                             "dict of parameter name -> numpy float32 array (a copy)")
      .def_property_readonly("step", &PyCheckpoint::step, "training steps done")
      .def_property_readonly("model_type", &PyCheckpoint::model_type)
      .def_property_readonly("parameter_count", &PyCheckpoint::parameter_count, "degrees of freedom")
      .def_property_readonly("path", &PyCheckpoint::path)
      .def("bpc", &PyCheckpoint::bpc, "text"_a,
           "bits per character over text (str as UTF-8, or bytes): `liegrad eval --text`")
      .def("sample", &PyCheckpoint::sample, "prompt"_a = "", "length"_a = 200, "temperature"_a = 1.0, "top_k"_a = 0,
           "seed"_a = 0, "prompt followed by `length` generated symbols: `liegrad sample`")
      .def("__repr__", &PyCheckpoint::repr);
  m.def(
      "load", [](const std::string& path) { return std::make_unique<PyCheckpoint>(path); }, "path"_a,
      "Loads a checkpoint (best.json, last.json); OSError for a missing or malformed file");
  m.def(
      "load_plugin", [](const std::string& path) { models::load_plugin(path); }, "path"_a,
      "Loads a model plugin library (models/plugin.hpp) so its model types can be loaded and trained");
}

}  // namespace liegrad::py_bind
