#!/usr/bin/env bash
# bench/blas_variants.sh: Debian's two threaded OpenBLAS builds (pthreads, the default
# alternative; OpenMP, libopenblas0-openmp) under liegrad, side by side: the
# 1024^3 GEMM (liegrad's gemm as configured, liegrad's own kernel, OpenBLAS with its own
# threads) and the training throughput of the configs whose time is in large products.
# The variant is picked per process with LD_LIBRARY_PATH, so the system's alternative is
# left alone. Rounds alternate the variants; medians over rounds are printed.
#
#   bench/blas_variants.sh [--rounds R] [--steps N] [CONFIG.json ...]   (default: transformer, lstm)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIEGRAD="${LIEGRAD:-$ROOT/build/liegrad}"
ROUNDS=3 STEPS=10
CONFIGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="${2:?}"; shift 2 ;;
    --steps) STEPS="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) CONFIGS+=("$1"); shift ;;
  esac
done
[ ${#CONFIGS[@]} -gt 0 ] || CONFIGS=("$ROOT/configs/transformer.json" "$ROOT/configs/lstm.json")
LIB=/usr/lib/x86_64-linux-gnu
declare -A DIRS=([pthreads]="$LIB/openblas-pthread" [openmp]="$LIB/openblas-openmp")
for v in "${!DIRS[@]}"; do
  [ -f "${DIRS[$v]}/libopenblas.so.0" ] || { echo "blas_variants.sh: no $v OpenBLAS in ${DIRS[$v]} (apt-get install libopenblas0-$([ $v = pthreads ] && echo pthread || echo openmp))" >&2; exit 1; }
done
OUT="$(mktemp -d)"
for ((r = 1; r <= ROUNDS; r++)); do
  for v in pthreads openmp; do
    LD_LIBRARY_PATH="${DIRS[$v]}" "$LIEGRAD" bench --op gemm --repeats 5 --json 2>/dev/null | grep '^{' > "$OUT/gemm.$v.$r.json"
    for cfg in "${CONFIGS[@]}"; do
      LD_LIBRARY_PATH="${DIRS[$v]}" "$LIEGRAD" bench --config "$cfg" --steps "$STEPS" --no-profile --json 2>/dev/null \
        | grep '^{' > "$OUT/$(basename "$cfg" .json).$v.$r.json"
    done
  done
done
/usr/bin/python3 - "$OUT" "${CONFIGS[@]}" <<'PY'
import glob, json, os, statistics, sys
out, configs = sys.argv[1], [os.path.basename(c)[:-5] for c in sys.argv[2:]]
def med(stem, key):
    vals = []
    for f in glob.glob(os.path.join(out, stem + ".*.json")):
        try:
            v = json.load(open(f)).get(key)
        except ValueError:
            continue
        vals.append(v["median"] if isinstance(v, dict) else v)
    return statistics.median(vals) if vals else float("nan")
print("| OpenBLAS build | liegrad gemm GFLOP/s | liegrad own kernel | OpenBLAS threaded | " +
      " | ".join("%s tokens/s" % c for c in configs) + " |")
print("| --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in configs) + " |")
for v in ("pthreads", "openmp"):
    print("| %s | %.1f | %.1f | %.1f | %s |" % (v, med("gemm." + v, "liegrad_gflop_per_s"), med("gemm." + v, "liegrad_own_gflop_per_s"),
          med("gemm." + v, "openblas_gflop_per_s"), " | ".join("{:,.0f}".format(med(c + "." + v, "tokens_per_s")) for c in configs)))
PY
