#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/fuzzing.md) with clang++-16, ASan and UBSan
# into build-fuzz/ -- only the targets and the libraries they link -- makes the
# checkpoint target's seeds (tiny checkpoints trained by build/liegrad, the
# Release build, which scripts/build.sh brings up to date), then fuzzes each target.
# Usage: scripts/fuzz.sh [--ci] [--runs N] [TARGET...]
#   TARGET   config, checkpoint, vocab (default: all three)
#   --ci     a short pass: 20 seconds per target (CI, .ci/run)
#   --runs N inputs per target (default 1000000)
# Exits non-zero when any target finds an input that crashes, leaks, hangs (> 10 s),
# trips a sanitizer or ends in anything but success or a one-line liegrad::Error; the
# input is saved as build-fuzz/artifacts/TARGET-*, to replay with
# build-fuzz/fuzz/fuzz_TARGET FILE. The corpus grows in build-fuzz/corpus/TARGET.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-runs=1000000)
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) limit=(-max_total_time=20) ;;
    --runs) limit=(-runs="$2"); shift ;;
    config|checkpoint|vocab) targets+=("$1") ;;
    *) echo "scripts/fuzz.sh: unknown argument '$1' (see the head of this script)" >&2; exit 2 ;;
  esac
  shift
done
[ ${#targets[@]} -gt 0 ] || targets=(config checkpoint vocab)

# clang 16: Debian 12's default clang (14) cannot capture structured bindings in lambdas.
bash scripts/setup.sh clang-16 libclang-rt-16-dev libomp-16-dev
dir=build-fuzz
cmake -S . -B "$dir" -DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_BUILD_TYPE=Release -DLIEGRAD_FUZZ=ON -DLIEGRAD_PYTHON=OFF -DLIEGRAD_MPI=OFF >/dev/null
cmake --build "$dir" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

# One thread each: the fuzzers run one input at a time, and leak checks want it simple.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
symbolizer=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || true)
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer  # readable stacks in findings
mkdir -p "$dir/artifacts"
for t in "${targets[@]}"; do
  corpus="$dir/corpus/$t"
  mkdir -p "$corpus"
  case "$t" in
    config) seeds=(fuzz/seeds/config configs) ;;
    checkpoint)
      # Real checkpoints of the current format, trained by the ordinary Release build's
      # tool (built here unless it is up to date, as after scripts/test.sh in CI).
      seeds=("$dir/seeds/checkpoint")
      bash scripts/build.sh >/dev/null
      rm -rf "${seeds[0]}" && mkdir -p "${seeds[0]}"
      (unset ASAN_OPTIONS UBSAN_OPTIONS; bash fuzz/make_checkpoint_seeds.sh build/liegrad "${seeds[0]}") ;;
    *) seeds=("fuzz/seeds/$t") ;;
  esac
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  echo "fuzz.sh: fuzz_$t ${limit[*]}"
  start=$(date +%s)
  "$dir/fuzz/fuzz_$t" "${limit[@]}" "${dict[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/$t-" "$corpus" "${seeds[@]}" 2>"$dir/fuzz_$t.log" || {
    tail -n 60 "$dir/fuzz_$t.log" >&2
    echo "fuzz.sh: fuzz_$t found a failing input (log: $dir/fuzz_$t.log, input: $dir/artifacts/$t-*)" >&2
    exit 1
  }
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/fuzz_$t.log" | grep -o '[0-9]*$')
  echo "fuzz.sh: fuzz_$t: $runs inputs in $(( $(date +%s) - start )) s, no finding (log: $dir/fuzz_$t.log)"
done
