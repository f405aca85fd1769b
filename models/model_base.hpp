// ModelBase: the bookkeeping every model shares: the parameter list, the config,
// the input vocabulary size V, the class count C (= V for language models), and
// add_param() which registers a named parameter, and the two pieces of construction
// several models share: the reader of the model section and an nn.Linear readout.
#pragma once
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "autograd/parameter.hpp"
#include "core/config.hpp"
#include "core/rng.hpp"
#include "models/model.hpp"

namespace liegrad::models {

template <class T>
class ModelBase : public Model<T> {
 public:
  // classes <= 0 (the default): C = V, a language model.
  ModelBase(nlohmann::json config, int64_t vocab, int64_t classes = 0)
      : config_(std::move(config)), V_(vocab), C_(classes > 0 ? classes : vocab) {}
  int64_t vocab_size() const override { return V_; }
  int64_t num_classes() const override { return C_; }
  std::vector<ag::Parameter<T>>& parameters() override { return params_; }
  const nlohmann::json& config() const override { return config_; }

 protected:
  // Registers a trainable tensor; dof defaults to its element count.
  ag::Var<T> add_param(const std::string& name, Array<T> init, ag::ParamRole role,
                       std::shared_ptr<const groups::Group> group = nullptr, int64_t dof = -1) {
    return ag::add_param(params_, name, std::move(init), role, std::move(group), dof);
  }
  // A reader of the "model" config section that allows "type" and "comment", the keys
  // every model accepts without reading them.
  static ConfigReader model_reader(const nlohmann::json& config) {
    ConfigReader c(config, "model");
    c.allow({"type", "comment"});
    return c;
  }
  // A readout from `in` features to the C_ classes (or `out` outputs when > 0) initialised
  // as PyTorch's nn.Linear: "head.weight" (in,C), then "head.bias" (C), both drawn
  // U(-1/sqrt(in), 1/sqrt(in)) from rng.
  std::pair<ag::Var<T>, ag::Var<T>> add_linear_head(Rng& rng, int64_t in, int64_t out = 0) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));
    const int64_t C = out > 0 ? out : C_;
    ag::Var<T> w = add_param("head.weight", rng.uniform_array<T>(Shape{in, C}, -bound, bound), ag::ParamRole::Weight);
    ag::Var<T> b = add_param("head.bias", rng.uniform_array<T>(Shape{C}, -bound, bound), ag::ParamRole::Bias);
    return {std::move(w), std::move(b)};
  }

  nlohmann::json config_;
  int64_t V_;  // input symbols
  int64_t C_;  // output classes
  std::vector<ag::Parameter<T>> params_;
};

}  // namespace liegrad::models
