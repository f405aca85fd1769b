// Model plugins: a shared library, built against the installed liegrad package, that
// registers model types (models/registry.hpp) when loaded, so that the `liegrad`
// tool (`--plugin LIB.so`) and the Python module (liegrad.load_plugin) can train,
// evaluate and sample models defined outside liegrad. examples/external/ builds one.
//
// A plugin defines its entry point with the macro, in exactly one source file:
//
//   #include "models/plugin.hpp"
//   LIEGRAD_MODEL_PLUGIN() { liegrad::models::register_model<MyRnn>("my_rnn"); }
//
// which exports two C functions: liegrad_plugin_version(), the liegrad version the
// plugin was compiled against, and liegrad_plugin_register(), the body. load_plugin
// refuses a plugin of another version (its classes could have another layout).
#pragma once
#include <string>

#include "core/version.hpp"

#define LIEGRAD_MODEL_PLUGIN()                                                           \
  extern "C" __attribute__((visibility("default"))) const char* liegrad_plugin_version() { \
    return LIEGRAD_VERSION;                                                              \
  }                                                                                      \
  extern "C" __attribute__((visibility("default"))) void liegrad_plugin_register()

namespace liegrad::models {

// Loads the plugin at `path` (dlopen; a path without '/' is searched like any shared
// library, so give "./libfoo.so" for the current directory) and runs its entry point
// once: loading the same file again does nothing. Throws IoError naming the path when
// the file cannot be loaded, lacks the entry points, or was built for another liegrad
// version; errors of the plugin's own registration propagate.
void load_plugin(const std::string& path);

}  // namespace liegrad::models
