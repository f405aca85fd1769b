// The liegrad command-line tool: dispatches `liegrad <subcommand> ...` to the
// subcommands in apps/cmd_*.cpp. Library errors arrive as typed exceptions; this
// file turns them into a one-line message and a non-zero exit code. `--plugin LIB.so`
// (any number, anywhere after the command) loads model plugins (models/plugin.hpp)
// before the command runs, so every command knows the models they define.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "core/blas_core.hpp"
#include "core/errors.hpp"
#include "core/version.hpp"
#include "models/plugin.hpp"

namespace {

void print_usage() {
  std::printf(
      "usage: liegrad <command> [options]\n\n"
      "commands:\n");
  for (const auto& c : liegrad::app::commands()) std::printf("  %-10s %s\n", c.name.c_str(), c.summary.c_str());
  std::printf(
      "\nRun `liegrad <command> --help` for a command's options. Every command also takes\n"
      "--plugin LIB.so (repeatable): a library of model types built on liegrad (docs/library.md).\n");
}

// Removes every "--plugin PATH" / "--plugin=PATH" from args and returns the paths.
std::vector<std::string> take_plugins(std::vector<std::string>& args) {
  std::vector<std::string> plugins, rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--plugin") {
      if (i + 1 >= args.size()) throw liegrad::app::UsageError("--plugin needs a value (a plugin library, LIB.so)");
      plugins.push_back(args[++i]);
    } else if (args[i].rfind("--plugin=", 0) == 0) {
      plugins.push_back(args[i].substr(9));
    } else {
      rest.push_back(args[i]);
    }
  }
  args = rest;
  return plugins;
}

// Two libraries read their settings from the environment once, when they are loaded, so
// liegrad's defaults have to be in the environment before the process starts; when one
// is missing, liegrad sets it and re-executes itself (once: both are set after that).
// A value the user set is always kept.
//
// OMP_WAIT_POLICY=PASSIVE: liegrad's parallel regions are short (about a millisecond)
// and frequent; with libgomp's default policy an idle worker spins through the serial
// parts in between, which burns the second core and, on a shared machine, steals time
// slices from the thread doing the work. PASSIVE was measured equal on an idle 2-core
// machine and about twice as fast at load average 5 (docs/performance.md).
//
// OPENBLAS_CORETYPE, only when OpenBLAS runs kernels narrower than the CPU's: OpenBLAS
// picks them from the CPU model, and one newer than the library falls back to an old
// core (core/blas_core.hpp; Debian 12's 0.3.21 runs its SSE3 Prescott kernels on Intel
// family 6 model 207, at about a third of the sgemm speed of its AVX-512 SkylakeX ones).
void default_environment(char** argv) {
  bool changed = false;
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) changed |= setenv("OMP_WAIT_POLICY", "PASSIVE", 1) == 0;
  if (std::getenv("OPENBLAS_CORETYPE") == nullptr) {
    const std::string core = liegrad::openblas_core().suggested_coretype();
    if (!core.empty()) changed |= setenv("OPENBLAS_CORETYPE", core.c_str(), 1) == 0;
  }
  if (!changed) return;
  // Exec the binary's real path (not /proc/self/exe) so ps and top still say "liegrad".
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return;
  self[len] = '\0';
  execv(self, argv);
  // execv only returns on failure: carry on with the libraries' own defaults.
}

}  // namespace

int main(int argc, char** argv) {
  default_environment(argv);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("liegrad %s\n", LIEGRAD_VERSION);
    return 0;
  }
  const std::string name = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto& c : liegrad::app::commands()) {
    if (c.name != name) continue;
    try {
      for (const auto& p : take_plugins(args)) liegrad::models::load_plugin(p);
      return c.run(args);
    } catch (const liegrad::app::UsageError& e) {
      std::fprintf(stderr, "liegrad %s: %s\n", name.c_str(), e.what());
      return 2;
    } catch (const liegrad::Error& e) {
      std::fprintf(stderr, "liegrad %s: error: %s\n", name.c_str(), e.what());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "liegrad %s: internal error: %s\n", name.c_str(), e.what());
      return 3;
    }
  }
  std::fprintf(stderr, "liegrad: unknown command '%s' (see `liegrad --help` for the commands)\n", name.c_str());
  return 2;
}
