// A toy task kind for the task registry's tests: "copy:<K>" reads words of random
// symbols 0 .. K-1 and must output, at every position, the symbol it reads (K classes).
// It is a whole task in one file: data keys "length" (the training and validation word
// length, default 16), "val_sequences" (default 32) and "loss_scale" (its loss is the
// cross-entropy times it, default 1, so a test can see the task's loss is the one trained), training batches from the run's
// seed with their position in the checkpoint, per-position accuracy as the training
// metric, validation loss as the selection criterion, and `liegrad eval` scores at
// --length N. tests/test_task_registry.cpp registers it in the test process and
// tests/tasks/copy_task_plugin.cpp in the `liegrad` tool (--plugin).
#pragma once
#include "tasks/registry.hpp"

namespace liegrad::test {

tasks::TaskSpec copy_task_spec();

}  // namespace liegrad::test
