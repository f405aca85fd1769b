#!/usr/bin/env bash
# Writes the checkpoint fuzz target's seed corpus: a tiny trained checkpoint of every
# model type (both group parameter modes, and a group word task), each trained for two
# steps by `liegrad train` on a small generated text, so the seeds are real checkpoints
# of the current format and are never committed. The tool is the ordinary Release
# build's (build/liegrad), so the fuzz build compiles no trainer.
# Usage: fuzz/make_checkpoint_seeds.sh LIEGRAD OUT_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: fuzz/make_checkpoint_seeds.sh LIEGRAD OUT_DIR" >&2; exit 2; }
liegrad=$1 out=$2
work="$out/.work"
rm -rf "$work"
mkdir -p "$work"
text="$work/text.txt"
for i in $(seq 0 150); do
  if [ $((i % 7)) -eq 0 ]; then printf 'a dog ran.\n'; else printf 'the cat sat on the mat, '; fi
done >"$text"
text_data='{"dataset": "text:'"$text"'", "val_frac": 0.1, "test_frac": 0.1}'
words_data='{"dataset": "words:S3", "min_len": 1, "max_len": 4, "eval_lengths": [4], "val_sequences": 2, "test_sequences": 2}'
text_train='{"steps": 2, "batch": 2, "seq_len": 8, "warmup": 1, "eval_interval": 2, "threads": 1}'
words_train='{"steps": 2, "batch": 2, "warmup": 1, "eval_interval": 2, "threads": 1}'
seed() {  # seed NAME MODEL DATA TRAIN
  printf '{"model": %s, "data": %s, "train": %s}\n' "$2" "$3" "${4:-$text_train}" >"$work/$1.config.json"
  "$liegrad" train --config "$work/$1.config.json" --out "$work/$1" --force --quiet >/dev/null
  cp "$work/$1/last.json" "$out/$1.json"
}
seed lstm '{"type": "lstm", "hidden": 4}' "$text_data"
seed transformer '{"type": "transformer", "D": 8, "layers": 1, "heads": 2}' "$text_data"
seed osm_rnn '{"type": "osm_rnn", "group": "SO(3)"}' "$text_data"
seed osmformer '{"type": "osmformer", "group": "U(2)", "layers": 1, "heads": 1}' "$text_data"
seed osmformer_manifold '{"type": "osmformer", "group": "SO(3)xT(1)", "layers": 1, "heads": 2, "group_param": "manifold", "mixing": "lowrank", "rank": 2}' "$text_data"
seed exprnn '{"type": "exprnn", "hidden": 4}' "$text_data"
seed osm_rnn_words '{"type": "osm_rnn", "group": "SO(3)"}' "$words_data" "$words_train"
rm -rf "$work"
echo "make_checkpoint_seeds: wrote $(ls "$out" | wc -l) checkpoint seeds to $out"
