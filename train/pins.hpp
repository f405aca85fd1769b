// train.pin (train/run_config.hpp): from its from_step on, a pinned parameter is held
// at its value and no longer updated, like freezing a tensor in PyTorch after setting
// it. Its gradient is zero, so it neither enters the clipping norm nor moves the
// optimizer's state. It depends on the step alone, so a resumed run pins exactly as an
// uninterrupted one.
#pragma once
#include <cstdint>
#include <vector>

#include "models/model.hpp"
#include "train/run_config.hpp"

namespace liegrad::train {

// ConfigError naming a pinned parameter the model does not have (and the nearest name).
void check_pins(models::Model<float>& model, const std::vector<ParamPin>& pins);
// Holds each pin active at `step` at its value (before the step, so the forward sees it,
// and after, to undo the update).
void apply_pins(models::Model<float>& model, const std::vector<ParamPin>& pins, int64_t step);
// Zeroes the gradients of the pins active at `step`.
void zero_pinned_gradients(models::Model<float>& model, const std::vector<ParamPin>& pins, int64_t step);

}  // namespace liegrad::train
