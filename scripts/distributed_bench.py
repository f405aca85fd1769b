#!/usr/bin/env python3
"""Ranks x threads on one machine (docs/distributed.md): times training steps of the
~100K and ~500K OSMFormer (configs/osmformer-linear.json, model.group SO(16) and
SO(24)) as 1 rank x 2 threads and as 2 ranks x 1 thread (mpirun --bind-to none),
alternating the layouts REPEATS times, and prints a Markdown table of medians:
seconds per step, and for 2 ranks the seconds per step in the gradient allreduce
(median, which includes waiting for the slower rank, and minimum, closest to the
transfer alone). With --fit, also 1 rank x 1 thread at batch 32, 16 and 4: the cost
model's compute time of one rank, t(b) for b rows of 128 (linear between the measured
points), checked as t(16) + the allreduce against 2 ranks x 1 thread, and its
prediction for 8..64 nodes at a global batch of 256: t(256/N) + allreduce(N), with
the allreduce's alpha-beta model for two interconnects (NETS).
Standard-library Python; needs build/liegrad with MPI and the data.

usage: scripts/distributed_bench.py [--repeats 3] [--steps 12] [--data-dir DIR] [--models 100K,500K] [--fit]
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "build", "liegrad")
MODELS = {"100K": "SO(16)", "500K": "SO(24)"}
LAYOUTS = [(1, 2, 32), (2, 1, 32)]  # (ranks, threads per rank, global batch)
FIT = [(1, 1, 32), (1, 1, 16), (1, 1, 4)]
PARAMS = {"100K": 102078, "500K": 493014}  # liegrad params --config configs/osmformer-linear.json [--set model.group=SO(24)]
# Interconnects of the prediction: (name, latency alpha in s, bandwidth beta in bytes/s).
NETS = [("InfiniBand EDR 100 Gb/s", 2e-6, 12e9), ("10 Gb Ethernet", 25e-6, 1.2e9)]


def allreduce_s(nodes, params, alpha, beta):
    """Reduce-scatter + allgather (Rabenseifner) of params floats (+1 presence float each tensor, ignored)."""
    if nodes == 1:
        return 0.0
    return 2 * math.ceil(math.log2(nodes)) * alpha + 2 * (nodes - 1) / nodes * 4 * params / beta


def compute_s(t, b):
    """One rank's step time at b rows: linear between the measured {rows: s/step} points t."""
    xs = sorted(t)
    if b >= xs[-1]:
        return t[xs[-1]] * b / xs[-1]  # more rows than measured: proportional (gradient accumulation)
    lo = max(x for x in xs if x <= b)
    hi = min(x for x in xs if x >= b)
    return t[lo] if lo == hi else t[lo] + (t[hi] - t[lo]) * (b - lo) / (hi - lo)


def predict(t, params, batch=256):
    """Speed-up over one node for 8..64 nodes at a global batch, per interconnect and node speed."""
    rows = []
    for net, alpha, beta in NETS:
        for faster in (1, 16):  # the node's compute: this machine's one thread, or 16x that
            one = compute_s(t, batch) / faster
            rows.append((net, faster, [one / (compute_s(t, batch / n) / faster + allreduce_s(n, params, alpha, beta))
                                       for n in (8, 16, 32, 64)]))
    return rows


def one_run(tmp, group, ranks, threads, batch, steps, data_dir):
    """Seconds per step after the first logging window, and allreduce seconds per step."""
    out = os.path.join(tmp, f"run-{ranks}x{threads}")
    shutil.rmtree(out, ignore_errors=True)
    args = [TOOL, "train", "--config", os.path.join(ROOT, "configs", "osmformer-linear.json"), "--out", out,
            "--quiet", "--data-dir", data_dir, "--stop-at", str(steps),
            "--set", f"model.group={group}", "--set", f"train.threads={threads}", "--set", f"train.batch={batch}",
            "--set", "train.log_interval=2", "--set", "train.eval_interval=100000"]
    if ranks > 1:
        root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        args = ["mpirun", "-np", str(ranks), "--oversubscribe", "--bind-to", "none", *root] + args
    subprocess.run(args, check=True, capture_output=True, text=True, timeout=3600)
    with open(os.path.join(out, "config.json")) as f:
        train = json.load(f)["train"]
    tokens = train["batch"] * train["seq_len"]
    with open(os.path.join(out, "metrics.jsonl")) as f:
        lines = [json.loads(l) for l in f if '"tokens_per_s"' in l][1:]  # the first window warms up
    step_s = [tokens / j["tokens_per_s"] for j in lines]
    reduce_s = [j["allreduce_s"] for j in lines if "allreduce_s" in j]
    return statistics.median(step_s), reduce_s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--data-dir", default=os.environ.get("LIEGRAD_DATA", os.path.join(ROOT, "..", "shared", "data")))
    ap.add_argument("--models", default="100K,500K")
    ap.add_argument("--fit", action="store_true")
    a = ap.parse_args()
    models = a.models.split(",")
    layouts = LAYOUTS + (FIT if a.fit else [])
    times = {(m, l): [] for m in models for l in layouts}
    reduces = {m: [] for m in models}
    with open("/proc/loadavg") as f:
        load_before = f.read().split()[:3]
    with tempfile.TemporaryDirectory(prefix="liegrad-dbench-") as tmp:
        for r in range(a.repeats):
            for m in models:
                for ranks, threads, batch in layouts if r % 2 == 0 else layouts[::-1]:
                    s, red = one_run(tmp, MODELS[m], ranks, threads, batch, a.steps, a.data_dir)
                    times[(m, (ranks, threads, batch))].append(s)
                    reduces[m] += red
                    print(f"repeat {r} {m} {ranks}x{threads} batch {batch}: {s:.3f} s/step", file=sys.stderr, flush=True)
    with open("/proc/loadavg") as f:
        load_after = f.read().split()[:3]
    print(f"load average before {' '.join(load_before)}, after {' '.join(load_after)}; "
          f"{a.repeats} repeats of {a.steps} steps, batch 32 x 128")
    print()
    print("| model | 1 rank x 2 threads (s/step) | 2 ranks x 1 thread (s/step) | speed-up | allreduce per step, median / min (s) | allreduce share (median / min) |")
    print("|---|---|---|---|---|---|")
    for m in models:
        t1 = statistics.median(times[(m, (1, 2, 32))])
        t2 = statistics.median(times[(m, (2, 1, 32))])
        rm, rmin = statistics.median(reduces[m]), min(reduces[m])
        print(f"| {m} ({MODELS[m]}) | {t1:.3f} | {t2:.3f} | {t1 / t2:.2f} | {rm:.4f} / {rmin:.5f} | "
              f"{100 * rm / t2:.1f}% / {100 * rmin / t2:.2f}% |")
    if a.fit:
        print()
        print("| model | t(32), 1x1 (s/step) | t(16) | t(4) | predicted 2x1 = t(16) + allreduce min (s) | measured 2x1 (s) |")
        print("|---|---|---|---|---|---|")
        for m in models:
            t = {b: statistics.median(times[(m, (1, 1, b))]) for b in (32, 16, 4)}
            pred = t[16] + min(reduces[m])
            print(f"| {m} | {t[32]:.3f} | {t[16]:.3f} | {t[4]:.3f} | {pred:.3f} | "
                  f"{statistics.median(times[(m, (2, 1, 32))]):.3f} |")
    if a.fit:
        print()
        print("Predicted speed-up over one node, global batch 256 x 128 (4 rows per rank on 64 nodes):")
        print()
        print("| model | interconnect | node compute | 8 nodes | 16 | 32 | 64 |")
        print("|---|---|---|---|---|---|---|")
        for m in models:
            t = {b: statistics.median(times[(m, (1, 1, b))]) for b in (32, 16, 4)}
            for net, faster, sp in predict(t, PARAMS[m]):
                node = "1 thread here" if faster == 1 else f"{faster}x faster"
                print(f"| {m} | {net} | {node} | " + " | ".join(f"{x:.1f}" for x in sp) + " |")
    print()
    print("all runs (s/step):", json.dumps({f"{m} {r}x{t} batch {b}": [round(x, 3) for x in v]
                                            for (m, (r, t, b)), v in times.items()}))


if __name__ == "__main__":
    main()
