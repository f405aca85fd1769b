#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs liegrad's gradient
# check over every registered op (training replaces this once it exists).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
./build/liegrad gradcheck
