#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with CTest.
# Usage: scripts/test.sh [--sanitize] [--no-skips]
#   --sanitize  the ASan+UBSan build in build-asan/
#   --no-skips  fail when any test was skipped (CI): a test whose interpreter, package
#               or data set is missing reports itself skipped (tests/test_helpers.hpp)
# Skipped tests are always listed at the end. The CTest results are kept in JUnit form
# in DIR/ctest-junit.xml.
# python3-torch is installed for one test: bench/torch_reference.py must compute
# liegrad's loss from a liegrad checkpoint (tests/test_checkpoint_python.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
build_args=()
no_skips=0
dir=build
for a in "$@"; do
  case "$a" in
    --sanitize) build_args+=(--sanitize); dir=build-asan ;;
    --no-skips) no_skips=1 ;;
    *) echo "scripts/test.sh: unknown option '$a' (expected --sanitize or --no-skips)" >&2; exit 2 ;;
  esac
done
SECONDS=0
bash scripts/setup.sh python3-torch
echo "scripts/test.sh: setup took $SECONDS s"
SECONDS=0
bash scripts/build.sh "${build_args[@]}"
echo "scripts/test.sh: build ($dir) took $SECONDS s"
SECONDS=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
junit="$PWD/$dir/ctest-junit.xml"
rm -f "$junit"
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" --output-junit "$junit"
echo "scripts/test.sh: tests ($dir) took $SECONDS s"
# The skipped test cases: <testcase name="..." ... status="notrun"> in the JUnit file.
skipped=$(grep -o '<testcase name="[^"]*"[^>]*status="notrun"' "$junit" | sed 's/^<testcase name="\([^"]*\)".*/\1/' || true)
if [ -n "$skipped" ]; then
  echo "scripts/test.sh: $(printf '%s\n' "$skipped" | wc -l) test(s) skipped:"
  printf '  %s\n' "$skipped"
  if [ "$no_skips" = 1 ]; then
    echo "scripts/test.sh: --no-skips: failing because tests were skipped" >&2
    exit 1
  fi
fi
