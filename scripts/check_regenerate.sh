#!/usr/bin/env bash
# scripts/check_regenerate.sh [--binary PATH]: proves that every committed table and
# generated page comes out byte for byte the same when regenerated from the committed
# results, without training: results/TABLE.{json,md,svg}, the tables' pages
# (docs/state_tracking.md), docs/results.md, each benchmark run's
# results/performance/*/table.md and docs/performance.md.
#
# It copies the source tree (without build folders, runs/, caches and .git) into a
# temporary folder, runs `scripts/reproduce.py --summarize-only` there with the built
# `liegrad` (whose `plot` command draws the tables' curves; default build/liegrad), and
# compares the copy's results/ and docs/ with the tree's: any file changed or added fails
# the check, with the differences printed. The tree itself is never written.
# Registered with CTest (tests/CMakeLists.txt) as scripts.regenerate.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BINARY="$ROOT/build/liegrad"
die() { echo "check_regenerate.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) BINARY="${2:?--binary needs a path}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[ -x "$BINARY" ] || die "no liegrad binary at $BINARY (build it: bash scripts/build.sh), needed for the plots"

COPY="$(mktemp -d "${TMPDIR:-/tmp}/liegrad-regenerate.XXXXXX")"
trap 'rm -rf "$COPY"' EXIT
tar -C "$ROOT" --exclude=./.git --exclude='./build*' --exclude=./runs --exclude=./.cache \
    --exclude=./data-cache --exclude='__pycache__' -cf - . | tar -C "$COPY" -xf -

# docs/results.md quotes runs that live only in git's history (scripts/results_doc.py
# reads them with `git show`): the copy reads the tree's repository.
if GIT_DIR="$(git -C "$ROOT" rev-parse --absolute-git-dir 2>/dev/null)"; then
  export GIT_DIR
else
  unset GIT_DIR
  echo "check_regenerate.sh: $ROOT is not a git checkout; docs/results.md cannot quote the runs in git's history" >&2
fi
if ! PYTHONDONTWRITEBYTECODE=1 python3 "$COPY/scripts/reproduce.py" --summarize-only --binary "$BINARY" \
     > "$COPY.log" 2>&1; then
  cat "$COPY.log" >&2
  rm -f "$COPY.log"
  echo "check_regenerate.sh: reproduce.py --summarize-only failed" >&2
  exit 1
fi
if grep -q 'plot failed' "$COPY.log"; then
  grep 'plot failed' "$COPY.log" >&2
  rm -f "$COPY.log"
  echo "check_regenerate.sh: a plot could not be drawn, so its table would lose it" >&2
  exit 1
fi
rm -f "$COPY.log"

status=0
for dir in results docs; do
  if ! diff -r -q "$ROOT/$dir" "$COPY/$dir" > "$COPY/.differ" 2>&1; then
    status=1
    sed "s|$COPY|REGENERATED|g; s|$ROOT/||g" "$COPY/.differ" >&2
    diff -r -u "$ROOT/$dir" "$COPY/$dir" 2>&1 | sed "s|$COPY|REGENERATED|g" | head -n 60 >&2 || true
  fi
done
if [ "$status" -ne 0 ]; then
  echo "check_regenerate.sh: the files above differ from what the committed results regenerate;" \
       "run scripts/reproduce.sh --summarize-only and commit them (or fix the generator)" >&2
  exit 1
fi
echo "check_regenerate.sh: every table and generated page regenerates identical"
