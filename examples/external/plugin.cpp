// The plugin entry point: `liegrad eval --plugin libso3u1_model.so ...` (and
// liegrad.load_plugin in Python) load this library, which registers so3u1_rnn.
#include "models/plugin.hpp"
#include "so3u1_rnn.hpp"

LIEGRAD_MODEL_PLUGIN() { so3u1::register_so3u1_rnn(); }
