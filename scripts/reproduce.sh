#!/usr/bin/env bash
# Regenerates the paper's tables (configs/paper/tables.json): builds liegrad, trains
# every run whose result is not yet in results/, then writes results/TABLE.{json,md}.
# Resumable: finished runs are skipped, interrupted ones resume from last.json.
# Usage: scripts/reproduce.sh [--list] [--dry-run] [--commit] [TABLE ...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh >/dev/null
exec python3 scripts/reproduce.py "$@"
