#!/usr/bin/env python3
"""Checks that two run directories hold the same run: config.json, metrics.jsonl,
result.json and the checkpoints (last.json, best.json) equal key for key, with the
clocks left out (wall and step times, tokens per second, the time budget's clock).
Used to show that a change to the trainer leaves every output of a run as it was:

    scripts/same_run_outputs.py RUN_DIR_A RUN_DIR_B

Prints one line per file and exits 1 at the first difference, naming the key path."""
import json
import sys
from pathlib import Path

# Keys whose values are measured times (or rates), different on every run.
CLOCKS = {"elapsed_s", "tokens_per_s", "wall_seconds", "tokens_per_second", "train_seconds", "warmup_seconds",
          "allreduce_s"}
FILES = ["config.json", "metrics.jsonl", "result.json", "last.json", "best.json"]


def without_clocks(v):
    if isinstance(v, dict):
        return {k: without_clocks(x) for k, x in v.items() if k not in CLOCKS}
    if isinstance(v, list):
        return [without_clocks(x) for x in v]
    return v


def first_difference(a, b, path="$"):
    if type(a) is not type(b):
        return f"{path}: {json.dumps(a)[:80]} against {json.dumps(b)[:80]}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'the first' if k in a else 'the second'}"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items against {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} against {b!r}"


def read(path):
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return json.loads(path.read_text())


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: same_run_outputs.py RUN_DIR_A RUN_DIR_B")
    a_dir, b_dir = Path(argv[1]), Path(argv[2])
    for name in FILES:
        a, b = a_dir / name, b_dir / name
        if not a.exists() and not b.exists():
            continue
        if a.exists() != b.exists():
            print(f"{name}: only in {a_dir if a.exists() else b_dir}")
            return 1
        d = first_difference(without_clocks(read(a)), without_clocks(read(b)))
        if d:
            print(f"{name}: differs at {d}")
            return 1
        print(f"{name}: same")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
