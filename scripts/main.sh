#!/usr/bin/env bash
# The main job: installs what is missing, builds, trains the default model
# (OSMFormer in the paper's 91K reading: SO(15), 7 layers, one shared linear Γ per layer,
# combined grounding; configs/osmformer-91k.json, docs/models.md §5.1) on
# Tiny Shakespeare for a few minutes on 2 cores, prints validation and test BPC,
# keeps the checkpoint in runs/main/ and prints a sample from it.
# Usage: scripts/main.sh [extra liegrad train arguments, e.g. --set train.steps=2000]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
./build/liegrad train --config configs/osmformer-91k.json --out runs/main --force \
  --set train.steps=800 --set train.warmup=50 --set train.eval_interval=200 --set train.eval_tokens=20000 "$@"
echo "checkpoint: runs/main/best.json (latest: runs/main/last.json)"
echo "--- sample (temperature 0.8) ---"
./build/liegrad sample --checkpoint runs/main/best.json --prompt "ROMEO:" --length 300 --temperature 0.8 --seed 1
