// train.pin (see pins.hpp).
#include "train/pins.hpp"

#include <algorithm>

#include "core/config.hpp"
#include "core/errors.hpp"

namespace liegrad::train {

void check_pins(models::Model<float>& model, const std::vector<ParamPin>& pins) {
  for (const ParamPin& pin : pins)
    if (!model.find_parameter(pin.param)) {
      std::vector<std::string> names;
      for (const auto& p : model.parameters()) names.push_back(p.name);
      const std::string near = nearest_word(pin.param, names);
      throw ConfigError("train.pin: the model has no parameter '" + printable(pin.param) + "'" +
                        (near.empty() ? "" : "; did you mean '" + near + "'?"));
    }
}

void apply_pins(models::Model<float>& model, const std::vector<ParamPin>& pins, int64_t step) {
  for (const ParamPin& pin : pins) {
    if (step < pin.from_step) continue;
    Array<float>& v = model.find_parameter(pin.param)->var.value();
    std::fill(v.data(), v.data() + v.size(), static_cast<float>(pin.value));
  }
}

void zero_pinned_gradients(models::Model<float>& model, const std::vector<ParamPin>& pins, int64_t step) {
  for (const ParamPin& pin : pins) {
    if (step < pin.from_step) continue;
    auto* p = model.find_parameter(pin.param);
    if (p->var.node() && p->var.requires_grad()) {
      Array<float>& g = p->var.node()->grad_ref();
      std::fill(g.data(), g.data() + g.size(), 0.0f);
    }
  }
}

}  // namespace liegrad::train
