#!/usr/bin/env bash
# One command for docs/performance.md's table: installs what is missing (the build
# packages and Debian's python3-torch for the PyTorch side), builds liegrad (Release)
# and runs bench/compare.sh with 5 alternating rounds per side at 2 threads. Extra
# arguments go to compare.sh (e.g. --results results/performance/compare-DATE for the
# run's compare.json and table, --all for PTB too).
#
#   bench/reproduce.sh [compare.sh options]
#   bench/reproduce.sh --reference NAME
#
# --reference NAME is the page's whole reference run, one part after the other on the
# same build: compare.sh --all (5 rounds) into results/performance/compare-NAME, the
# growth table (bench/growth.py --torch, 3 rounds) into growth-NAME and the generation
# table (bench/sampling.py, 3 rounds) into sample-NAME, then docs/performance.md is
# regenerated from them. About two hours on 2 cores; pause other work first (the page
# quotes the load average at the start and end of each part).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh python3-torch
bash scripts/build.sh > /dev/null
if [ "${1:-}" != "--reference" ]; then
  exec bash bench/compare.sh --rounds 5 --threads 2 "$@"
fi
name="${2:?--reference needs a NAME, e.g. $(date -u +%F)}"
[ $# -eq 2 ] || { echo "bench/reproduce.sh: --reference NAME takes no other arguments" >&2; exit 2; }
out=results/performance
SECONDS=0
bash bench/compare.sh --all --rounds 5 --threads 2 --results "$out/compare-$name"
echo "bench/reproduce.sh: compare.sh took $SECONDS s"
SECONDS=0
/usr/bin/python3 bench/growth.py --torch --rounds 3 --threads 2 --out "$out/growth-$name"
echo "bench/reproduce.sh: growth.py took $SECONDS s"
SECONDS=0
/usr/bin/python3 bench/sampling.py --rounds 3 --threads 2 --out "$out/sample-$name"
echo "bench/reproduce.sh: sampling.py took $SECONDS s"
/usr/bin/python3 bench/performance_page.py
