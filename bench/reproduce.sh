#!/usr/bin/env bash
# One command for docs/performance.md's table: installs what is missing (the build
# packages and Debian's python3-torch for the PyTorch side), builds liegrad (Release)
# and runs bench/compare.sh with 5 alternating rounds per side at 2 threads. Extra
# arguments go to compare.sh (e.g. --results results/performance/compare-DATE for the
# run's compare.json and table, --all for PTB too).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh python3-torch
bash scripts/build.sh > /dev/null
exec bash bench/compare.sh --rounds 5 --threads 2 "$@"
