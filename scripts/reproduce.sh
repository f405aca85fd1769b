#!/usr/bin/env bash
# Regenerates the paper's tables (configs/paper/tables.json): builds liegrad, trains
# every run whose result is not yet in results/, then writes results/TABLE.{json,md}.
# Resumable: finished runs are skipped, interrupted ones resume from last.json.
# Usage: scripts/reproduce.sh [--list] [--dry-run] [--commit] [TABLE ...]
#        scripts/reproduce.sh --summarize-only   every table and generated page from the
#                                                committed results, training nothing
set -euo pipefail
cd "$(dirname "$0")/.."
# Two reproduce streams started together on a fresh clone build one after the other,
# not both at once in build/ (flock is in util-linux, part of every Debian system).
mkdir -p build
flock build/.reproduce-build.lock bash -c 'bash scripts/setup.sh && bash scripts/build.sh >/dev/null'
exec python3 scripts/reproduce.py "$@"
