#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with CTest.
# Usage: scripts/test.sh [--sanitize]   (--sanitize: the ASan+UBSan build in build-asan/)
# python3-torch is installed for one test: bench/torch_reference.py must compute
# liegrad's loss from a liegrad checkpoint (tests/test_checkpoint_python.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh python3-torch
bash scripts/build.sh "$@"
dir=build
[ "${1:-}" = "--sanitize" ] && dir=build-asan
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
