// ModelBase: the bookkeeping every model shares: the parameter list, the config,
// the input vocabulary size V, the class count C (= V for language models), and
// add_param() which registers a named parameter.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include "autograd/parameter.hpp"
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

  nlohmann::json config_;
  int64_t V_;  // input symbols
  int64_t C_;  // output classes
  std::vector<ag::Parameter<T>> params_;
};

}  // namespace liegrad::models
