// load_plugin (see plugin.hpp): dlopen, version check, entry point, once per file.
#include "models/plugin.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <set>

#include "core/errors.hpp"

namespace liegrad::models {

void load_plugin(const std::string& path) {
  static std::mutex mutex;
  static std::set<std::string> loaded;  // canonical paths already registered
  std::lock_guard<std::mutex> lock(mutex);
  std::error_code ec;
  const std::string key = path.find('/') == std::string::npos ? path : std::filesystem::canonical(path, ec).string();
  if (path.find('/') != std::string::npos && ec)
    throw IoError("plugin '" + path + "': no such file (" + ec.message() + ")");
  if (loaded.count(key)) return;
  // RTLD_NOW: a plugin with unresolved symbols fails here with a message, not later.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw IoError("cannot load plugin '" + path + "': " + ::dlerror());
  using VersionFn = const char* (*)();
  using RegisterFn = void (*)();
  auto version = reinterpret_cast<VersionFn>(::dlsym(handle, "liegrad_plugin_version"));
  auto enter = reinterpret_cast<RegisterFn>(::dlsym(handle, "liegrad_plugin_register"));
  if (!version || !enter) {
    ::dlclose(handle);
    throw IoError("'" + path + "' is not a liegrad model plugin (no LIEGRAD_MODEL_PLUGIN() entry point)");
  }
  const std::string v = version();
  if (v != LIEGRAD_VERSION) {
    ::dlclose(handle);
    throw IoError("plugin '" + path + "' was built against liegrad " + v + ", this is liegrad " + LIEGRAD_VERSION +
                  "; rebuild the plugin against this installation");
  }
  enter();  // the handle stays open: the registered factories live in it
  loaded.insert(key);
}

}  // namespace liegrad::models
