#!/usr/bin/env bash
# bench/compare.sh: liegrad against the PyTorch reference (bench/torch_reference.py) on the
# same models, the same batch x seq_len and the same thread count, printed as a markdown
# table: model, liegrad tokens/s, PyTorch tokens/s, ratio, peak memory of each.
# Each of the --rounds R rounds times every row once on both sides (liegrad first in odd
# rounds, PyTorch first in even ones), so a change in machine load during the run hits
# both sides and every row alike; each side's figure is the median over its rounds of its
# per-step median tokens/s, printed with the rounds' range (default 5 rounds: fewer say
# little on a shared machine). A last row times the batched exponential with its pullback
# (d = 16, N = 4096) when both tools support it.
#
#   bench/compare.sh [--steps N] [--warmup W] [--threads T] [--rounds R] [--out DIR]
#                    [--results DIR] [--no-trained] [--all | CONFIG.json ...]
#
# Trained rows, on unless --no-trained: each OSM model after 2,000 steps of its table
# recipe, timed on both sides from the same checkpoint (liegrad bench --checkpoint,
# torch_reference.py --weights), since trained exponents cost more products; with configs
# named on the command line, only the trained rows of those (a config whose name is one of
# `bench/trained.sh --names`). bench/trained.sh trains those checkpoints the first time
# (about an hour on 2 cores for all five) and reuses them after, from a cache folder
# outside git (.cache/bench, or $LIEGRAD_BENCH_CACHE). Each round also times the float
# GEMM peak (liegrad bench --op gemm, 1024^3), which the FLOP table divides by, and the
# memory bandwidth (liegrad bench --op stream); every liegrad model run also measures both
# itself for its roofline per op family (measure/roofline_table.hpp), which the last table shows.
# The trained / init ratio is the median over rounds of each round's pair (the trained row
# runs right after its initialisation row), osmformer-linear's on a line of its own.
#
# Default configs: the Tiny Shakespeare ones in configs/ (those not named ptb-*); --all adds
# the PTB ones. Needs build/liegrad with `liegrad bench` (override with LIEGRAD=...) and
# /usr/bin/python3 with torch (override with PYTHON=...; Debian: apt-get install python3-torch).
# Every round leaves its JSON and log in --out DIR (default: a new folder under the cache,
# outside git). At the end bench/compare_table.py folds them, with the run's settings and
# the machine, into compare.json and writes table.md beside it, in --results DIR (default:
# the --out DIR); results/performance/compare-DATE/ keeps those two files of a run, and
# docs/performance.md is generated from the newest run of the default rows
# (bench/performance_page.py).
# bench/ holds these scripts around the `liegrad bench` command (apps/cmd_bench.cpp, whose
# timing is the library's measure/bench.cpp) and the PyTorch side it is compared with.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIEGRAD="${LIEGRAD:-$ROOT/build/liegrad}"
PYTHON="${PYTHON:-/usr/bin/python3}"
TORCH_REF="$ROOT/bench/torch_reference.py"
STEPS=20 WARMUP=3 THREADS=2 ROUNDS=5 OUT="" RESULTS="" ALL=0 TRAINED=1
CONFIGS=()
NAMED=0  # 1 when configs are named on the command line

die() { echo "compare.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --steps) STEPS="${2:?--steps needs a value}"; shift 2 ;;
    --warmup) WARMUP="${2:?--warmup needs a value}"; shift 2 ;;
    --threads) THREADS="${2:?--threads needs a value}"; shift 2 ;;
    --rounds) ROUNDS="${2:?--rounds needs a value}"; shift 2 ;;
    --out) OUT="${2:?--out needs a directory}"; shift 2 ;;
    --results) RESULTS="${2:?--results needs a directory}"; shift 2 ;;
    --all) ALL=1; shift ;;
    --no-trained) TRAINED=0; shift ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [ -f "$1" ] || die "config '$1' does not exist"; CONFIGS+=("$1"); NAMED=1; shift ;;
  esac
done
for v in STEPS WARMUP THREADS ROUNDS; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "--${v,,} must be a non-negative integer, got '${!v}'"
done
if [ "$STEPS" -lt 1 ] || [ "$THREADS" -lt 1 ] || [ "$ROUNDS" -lt 1 ]; then
  die "--steps, --threads and --rounds must be >= 1"
fi

[ -x "$LIEGRAD" ] || die "no liegrad binary at $LIEGRAD (build it: cmake -S . -B build && cmake --build build -j2)"
"$LIEGRAD" bench --help > /dev/null 2>&1 || die "$LIEGRAD has no 'bench' command (rebuild from a tree that has apps/cmd_bench.cpp)"
[ -x "$PYTHON" ] || die "no Python at $PYTHON (set PYTHON=...)"
"$PYTHON" -c 'import torch, numpy' 2> /dev/null || die "$PYTHON cannot import torch and numpy (Debian: apt-get install python3-torch python3-numpy)"

if [ ${#CONFIGS[@]} -eq 0 ]; then
  for f in "$ROOT"/configs/*.json; do
    base="$(basename "$f")"
    if [ "$ALL" -eq 1 ] || [[ "$base" != ptb-* ]]; then CONFIGS+=("$f"); fi
  done
fi
[ ${#CONFIGS[@]} -gt 0 ] || die "no configs to run"

# OpenBLAS picks its kernels from the CPU model when it loads; on a CPU newer than the
# library it falls back to narrower ones (core/blas_core.hpp). liegrad sets
# OPENBLAS_CORETYPE for itself when that happens (apps/main.cpp, default_environment), so
# when the environment does not choose, both sides run with the kernels liegrad runs
# (the openblas_core its GEMM benchmark reports), and say so; Debian's PyTorch uses the
# same OpenBLAS for its dense products. A value already in the environment is left as it is.
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  core="$("$LIEGRAD" bench --op gemm --n 64 --repeats 1 --threads 1 --json 2>/dev/null |
    "$PYTHON" -c 'import json, sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1]).get("openblas_core", ""))' 2>/dev/null || true)"
  if [ -n "$core" ]; then
    echo "compare.sh: both sides run with OPENBLAS_CORETYPE=${core^^}, the OpenBLAS kernels liegrad runs" >&2
    export OPENBLAS_CORETYPE="${core^^}"
  else
    echo "compare.sh: liegrad did not report its OpenBLAS kernels; each side runs what OpenBLAS picks" >&2
  fi
fi

CACHE="${LIEGRAD_BENCH_CACHE:-$ROOT/.cache/bench}"
if [ -z "$OUT" ]; then OUT="$CACHE/compare-$(date -u +%Y-%m-%d-%H%M%S)"; fi
mkdir -p "$OUT"
RESULTS="${RESULTS:-$OUT}"
mkdir -p "$RESULTS"
echo "compare.sh: every round's JSON and log in $OUT; compare.json and table.md in $RESULTS" >&2
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"

# run_side SIDE NAME ROUND CMD...: runs CMD, keeps its last JSON line in $OUT/NAME.SIDE.ROUND.json.
run_side() {
  local side="$1" name="$2" round="$3"; shift 3
  local file="$OUT/$name.$side.$round.json" log="$OUT/$name.$side.$round.log"
  if "$@" > "$log" 2>&1; then
    grep '^{' "$log" | tail -n 1 > "$file" || true
  fi
  if [ ! -s "$file" ]; then
    echo "compare.sh: $side run failed for $name (log: $log):" >&2
    tail -n 3 "$log" | sed 's/^/    /' >&2
    rm -f "$file"
  fi
}

# Trained rows: the same OSM models from checkpoints after 2,000 steps (trained or reused).
TRAINED_NAMES=()
TRAINED_CKPTS=()
WANTED=()  # the trained models to time: all of them, or those of the named configs
if [ "$TRAINED" -eq 1 ] && [ "$NAMED" -eq 1 ]; then
  known=" $(bash "$ROOT/bench/trained.sh" --names | tr '\n' ' ') "
  for cfg in "${CONFIGS[@]}"; do
    name="$(basename "$cfg" .json)"
    case "$known" in *" $name "*) WANTED+=("$name") ;; esac
  done
  [ ${#WANTED[@]} -gt 0 ] || TRAINED=0
fi
if [ "$TRAINED" -eq 1 ]; then
  echo "compare.sh: trained rows: bench/trained.sh trains any missing checkpoint (cached, not in git)" >&2
  while read -r tname tckpt; do
    TRAINED_NAMES+=("$tname")
    TRAINED_CKPTS+=("$tckpt")
  done < <(LIEGRAD="$LIEGRAD" bash "$ROOT/bench/trained.sh" "${WANTED[@]}")
fi
HAS_EXPM=0
if "$LIEGRAD" bench --op expm --d 4 --n 8 --repeats 1 --threads 1 --json > /dev/null 2>&1; then
  HAS_EXPM=1
else
  echo "compare.sh: '$LIEGRAD bench --op expm' is not available; no exp + pullback row" >&2
fi

# run_pair ROUND NAME LIEGRAD_ARGS... -- TORCH_ARGS...: times one row on both sides, liegrad
# first in odd rounds and PyTorch first in even ones, so a drift within a pair does not
# always favour the same side.
run_pair() {
  local round="$1" name="$2"; shift 2
  local largs=() targs=()
  while [ "$1" != "--" ]; do largs+=("$1"); shift; done
  shift
  targs=("$@")
  if (( round % 2 )); then
    echo "[$name] round $round/$ROUNDS: liegrad, then pytorch ..." >&2
    run_side liegrad "$name" "$round" "$LIEGRAD" "${largs[@]}"
    run_side torch "$name" "$round" "$PYTHON" "$TORCH_REF" "${targs[@]}"
  else
    echo "[$name] round $round/$ROUNDS: pytorch, then liegrad ..." >&2
    run_side torch "$name" "$round" "$PYTHON" "$TORCH_REF" "${targs[@]}"
    run_side liegrad "$name" "$round" "$LIEGRAD" "${largs[@]}"
  fi
}

# trained_row ROUND T: the trained row of TRAINED_NAMES[T] on both sides.
trained_row() {
  local round="$1" t="$2"
  local tname="${TRAINED_NAMES[$t]}" tckpt="${TRAINED_CKPTS[$t]}"
  run_pair "$round" "trained-$tname" bench --checkpoint "$tckpt" --steps "$STEPS" --warmup "$WARMUP" \
    --threads "$THREADS" --json -- --weights "$tckpt" --steps "$STEPS" --warmup "$WARMUP" --threads "$THREADS" --json
}

# Every round times every row once on both sides, so a change in the machine's speed
# during the run hits both sides of each row alike; a model's trained row is timed right
# after its initialisation row, so their ratio sees the same machine.
for ((r = 1; r <= ROUNDS; r++)); do
  done_trained=()
  for cfg in "${CONFIGS[@]}"; do
    name="$(basename "$cfg" .json)"
    run_pair "$r" "$name" bench --config "$cfg" --steps "$STEPS" --warmup "$WARMUP" --threads "$THREADS" --json \
      -- --config "$cfg" --steps "$STEPS" --warmup "$WARMUP" --threads "$THREADS" --json
    for ((t = 0; t < ${#TRAINED_NAMES[@]}; t++)); do
      if [ "${TRAINED_NAMES[$t]}" = "$name" ]; then trained_row "$r" "$t"; done_trained+=("$t"); fi
    done
  done
  for ((t = 0; t < ${#TRAINED_NAMES[@]}; t++)); do  # trained models without an initialisation row
    case " ${done_trained[*]:-} " in *" $t "*) ;; *) trained_row "$r" "$t" ;; esac
  done
  # The machine's float GEMM peak in the same sitting (1024^3, liegrad's kernel and OpenBLAS).
  echo "[gemm peak] round $r/$ROUNDS ..." >&2
  run_side liegrad gemm "$r" "$LIEGRAD" bench --op gemm --threads "$THREADS" --json
  # The memory bandwidth in the same sitting (STREAM triad, 3 x 128 MiB).
  if "$LIEGRAD" bench --help 2>&1 | grep -q -- '--op stream'; then
    echo "[stream] round $r/$ROUNDS ..." >&2
    run_side liegrad stream "$r" "$LIEGRAD" bench --op stream --threads "$THREADS" --json
  fi
  # Each CPU's speed in the same sitting (small products, one CPU at a time): on a
  # shared machine the two CPUs can differ, and an evenly split step waits on the slower.
  if "$LIEGRAD" bench --help 2>&1 | grep -q -- '--op cores'; then
    echo "[cores] round $r/$ROUNDS ..." >&2
    run_side liegrad cores "$r" "$LIEGRAD" bench --op cores --json
  fi
  # The batched exponential with its pullback, when liegrad supports --op expm.
  if [ "$HAS_EXPM" -eq 1 ]; then
    run_pair "$r" expm bench --op expm --d 16 --n 4096 --repeats "$STEPS" --threads "$THREADS" --json \
      -- --op expm --d 16 --n 4096 --steps "$STEPS" --warmup "$WARMUP" --threads "$THREADS" --json
  fi
done
LOAD_END="$(cut -d' ' -f1-3 /proc/loadavg)"

TRAINED_LIST="$(IFS=,; echo "${TRAINED_NAMES[*]:-}")"
# The machine, for the page generated from this run: the CPU as the kernel names it, the
# CPUs this process may use, whether it runs under a hypervisor, and the commit of the tree that was timed.
"$PYTHON" - "$OUT/machine.json" "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || true)" <<'PY'
import json, os, sys
info = {}
with open("/proc/cpuinfo") as f:
    for line in f:
        k, _, v = line.partition(":")
        info.setdefault(k.strip(), v.strip())
family, model = info.get("cpu family"), info.get("model")
json.dump({"cpu": "%s, family %s, model %s" % (info.get("model name", "unknown CPU"), family, model),
           "cpus": len(os.sched_getaffinity(0)), "virtual": "hypervisor" in info.get("flags", "").split(),
           "commit": sys.argv[2] or None}, open(sys.argv[1], "w"))
PY
# The default set: every default row and the trained rows (--all adds the PTB rows to it).
DEFAULT_SET=()
if [ "$NAMED" -eq 0 ] && [ "$TRAINED" -eq 1 ]; then DEFAULT_SET=(--default-set); fi
"$PYTHON" "$ROOT/bench/compare_table.py" fold "$OUT" --out "$RESULTS/compare.json" --table "$RESULTS/table.md" \
  --threads "$THREADS" --steps "$STEPS" --warmup "$WARMUP" --rounds "$ROUNDS" --load-start "$LOAD_START" \
  --load-end "$LOAD_END" --trained "$TRAINED_LIST" --machine "$OUT/machine.json" "${DEFAULT_SET[@]}" "${CONFIGS[@]}"
