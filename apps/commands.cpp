// The table of subcommands.
#include "apps/commands.hpp"

namespace liegrad::app {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"gradcheck", "check every op's derivative against finite differences (double precision)", cmd_gradcheck},
  };
  return table;
}

}  // namespace liegrad::app
