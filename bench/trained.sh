#!/usr/bin/env bash
# bench/trained.sh: trains (or reuses) the OSM checkpoints that bench/compare.sh times as
# its "trained" rows: each OSM config after 2,000 steps of its table recipe in
# configs/paper/tables.json (ts100k for the OSMFormers, recurrent and recurrent_bounded for
# the OSM-RNNs), same learning rates, seed 1. Checkpoints are large and never committed:
# they live under a cache folder, ${LIEGRAD_BENCH_CACHE:-ROOT/.cache/bench} (git-ignored).
# A finished run (result.json present) is reused; an interrupted one resumes.
# Prints "NAME PATH/last.json" per model on stdout.
#
#   bench/trained.sh [--steps N] [NAME ...]     NAME in: osmformer-linear osmformer-identity
#                                               osm-rnn-linear osm-rnn-identity osm-rnn-bounded
#   bench/trained.sh --names                    prints the NAMEs, one per line, and exits
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIEGRAD="${LIEGRAD:-$ROOT/build/liegrad}"
CACHE="${LIEGRAD_BENCH_CACHE:-$ROOT/.cache/bench}"
STEPS=2000
die() { echo "trained.sh: $*" >&2; exit 1; }

# name -> config and the table recipe's overrides
declare -A CONFIG=(
  [osmformer-linear]=configs/osmformer-linear.json
  [osmformer-identity]=configs/osmformer-identity.json
  [osm-rnn-linear]=configs/osm-rnn-linear.json
  [osm-rnn-identity]=configs/osm-rnn-identity.json
  [osm-rnn-bounded]=configs/osm-rnn-linear.json
)
declare -A SETS=(
  [osmformer-linear]="train.lr=0.01"
  [osmformer-identity]="train.lr=0.01"
  [osm-rnn-linear]="train.lr=0.0003"
  [osm-rnn-identity]="train.lr=0.003"
  [osm-rnn-bounded]="model.mixing=bounded"
)
ORDER=(osmformer-linear osmformer-identity osm-rnn-linear osm-rnn-identity osm-rnn-bounded)

NAMES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) STEPS="${2:?--steps needs a value}"; shift 2 ;;
    --names) printf '%s\n' "${ORDER[@]}"; exit 0 ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [ -n "${CONFIG[$1]+x}" ] || die "unknown model '$1' (one of: ${ORDER[*]})"; NAMES+=("$1"); shift ;;
  esac
done
[[ "$STEPS" =~ ^[1-9][0-9]*$ ]] || die "--steps must be a positive integer, got '$STEPS'"
[ ${#NAMES[@]} -gt 0 ] || NAMES=("${ORDER[@]}")
[ -x "$LIEGRAD" ] || die "no liegrad binary at $LIEGRAD (build it: bash scripts/build.sh)"

for name in "${NAMES[@]}"; do
  dir="$CACHE/$name-$STEPS"
  if [ ! -f "$dir/result.json" ]; then
    echo "trained.sh: training $name for $STEPS steps into $dir (cached for later runs)" >&2
    sets=()
    for kv in ${SETS[$name]} "train.steps=$STEPS" "train.seed=1"; do sets+=(--set "$kv"); done
    resume=()
    [ -f "$dir/last.json" ] && resume=(--resume)
    mkdir -p "$CACHE"
    "$LIEGRAD" train --config "$ROOT/${CONFIG[$name]}" --out "$dir" "${sets[@]}" "${resume[@]}" > "$dir.log" 2>&1 \
      || die "training $name failed (log: $dir.log)"
  fi
  echo "$name $dir/last.json"
done
