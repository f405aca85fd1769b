#!/usr/bin/env bash
# Configures and builds liegrad. Usage: scripts/build.sh [--sanitize]
#   default:     Release build in build/
#   --sanitize:  AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/,
#                without MPI (the plain single-process build; docs/distributed.md)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build
flags=(-DCMAKE_BUILD_TYPE=Release)
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  flags+=(-DLIEGRAD_SANITIZE=ON -DLIEGRAD_MPI=OFF)
fi
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)"
