#!/usr/bin/env bash
# Shows that a change to the trainer leaves every output of a run as it was: trains a
# set of the committed configs (every model type, text and group words, an early-stopping
# run, and a run interrupted and resumed), for 20 steps each, with an older `liegrad`
# and with build/liegrad, and compares the run directories key for key, clocks left out
# (scripts/same_run_outputs.py). Prints one block per run; exits 1 at the first
# difference.
# Usage: scripts/same_outputs_as.sh OLD_LIEGRAD [OUT_DIR]
#   e.g. git worktree add /tmp/old REV && cmake -S /tmp/old -B /tmp/old/build -DCMAKE_BUILD_TYPE=Release \
#        && cmake --build /tmp/old/build -j2 --target liegrad && scripts/same_outputs_as.sh /tmp/old/build/liegrad
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: scripts/same_outputs_as.sh OLD_LIEGRAD [OUT_DIR]}
new=$PWD/build/liegrad
out=${2:-$(mktemp -d)}
common=(--set train.steps=20 --set train.eval_interval=10 --set train.log_interval=5 --set train.threads=1 --quiet)
small=(--set train.batch=8 --set train.seq_len=32)
status=0
run() {  # NAME CONFIG [extra --set ...]
  local name=$1 cfg=$2
  shift 2
  for who in old new; do
    local bin=$old
    [ "$who" = new ] && bin=$new
    rm -rf "$out/$who-$name"
    "$bin" train --config "$cfg" --out "$out/$who-$name" "${common[@]}" "$@" >/dev/null
  done
  echo "== $name"
  python3 scripts/same_run_outputs.py "$out/old-$name" "$out/new-$name" || status=1
}
run osmformer-linear configs/osmformer-linear.json "${small[@]}"
run osmformer-identity configs/osmformer-identity.json "${small[@]}"
run osmformer-91k configs/osmformer-91k.json "${small[@]}"
run osm-rnn-linear configs/osm-rnn-linear.json "${small[@]}"
run exprnn configs/exprnn.json "${small[@]}"
run lstm-ptb configs/ptb-lstm.json "${small[@]}"
run transformer-patience configs/transformer.json "${small[@]}" --set train.patience=1 --set train.eval_interval=5
run words-osm-rnn configs/state_tracking/osm-rnn-token-so5.json --set "data.eval_lengths=[64,256]"
run words-lstm configs/state_tracking/lstm.json --set "data.eval_lengths=[64,128]"
# Interrupted at step 10 (as by SIGTERM) and resumed.
for who in old new; do
  bin=$old
  [ "$who" = new ] && bin=$new
  rm -rf "$out/$who-resume"
  "$bin" train --config configs/osm-rnn-linear.json --out "$out/$who-resume" "${common[@]}" "${small[@]}" --stop-at 10 \
    >/dev/null || [ $? -eq 0 ]
  "$bin" train --resume --out "$out/$who-resume" --quiet >/dev/null
done
echo "== resume"
python3 scripts/same_run_outputs.py "$out/old-resume" "$out/new-resume" || status=1
echo "run directories in $out"
exit $status
