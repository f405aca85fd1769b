// The copy task (copy_task.hpp) as a plugin of the `liegrad` tool: `liegrad eval --plugin
// LIB.so` reads a copy run's checkpoint with the unchanged command.
#include "copy_task.hpp"
#include "models/plugin.hpp"

LIEGRAD_MODEL_PLUGIN() { liegrad::tasks::register_task(liegrad::test::copy_task_spec()); }
