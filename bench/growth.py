#!/usr/bin/env python3
"""bench/growth.py: how training speed holds as the work grows.

One row per setting (bench/growth.json): a model config with a sequence length T, a
state size d (SO(d) for the OSM models) or a parameter count changed from the 100K
config. Every setting keeps about `tokens_per_step` tokens in a training step (batch =
max(1, tokens_per_step // T)), so a row's tokens/s measures the cost per token as the
work per token grows, not a smaller batch.

Each of the --rounds R rounds times every row once with `liegrad bench --json` (and,
with --torch, bench/torch_reference.py on the same config, batch and length, the two in
alternating order) and measures the float GEMM peak once (`liegrad bench --op gemm`).
A row reports the median over rounds of:
  - tokens/s (each run's per-step median) and peak resident memory (MiB);
  - FLOP per token (the model's own count, models/roofline.cpp), and the fraction of the
    GEMM peak it reaches: tokens/s x FLOP per token / peak;
  - time per token over what FLOP per token predicts from the family's base row (the
    100K config at T = 128): (ns per token) / (base ns per token x FLOP / base FLOP).
    1.0 means the cost grows exactly as the arithmetic does.
PyTorch rows whose first round took longer than --torch-budget seconds are not run again.

Writes DIR/growth.json (every round's raw figures, the settings and the machine) and
DIR/growth.md (the table). docs/performance.md shows the newest results/performance/
growth-*/growth.md (bench/performance_page.py).

Usage: bench/growth.py [--rounds 3] [--threads 2] [--steps 6] [--warmup 2]
                       [--torch] [--torch-budget 600] [--only SUBSTRING] --out DIR
Standard library only; needs build/liegrad (LIEGRAD=...) and, with --torch,
/usr/bin/python3 with torch (PYTHON=...).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_rounds import time_round, write_round_files  # noqa: E402  (bench/side_rounds.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIEGRAD = os.environ.get("LIEGRAD", os.path.join(ROOT, "build", "liegrad"))
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")


def load_settings(path):
    """The rows of bench/growth.json: {name, family, config, set, seq_len} with the
    batch filled in from tokens_per_step."""
    with open(path) as f:
        spec = json.load(f)
    per_step = spec["tokens_per_step"]
    rows = []
    for r in spec["rows"]:
        T = r["seq_len"]
        rows.append(dict(r, batch=max(1, per_step // T)))
    return spec, rows


def write_config(row, out_dir):
    """The row's config: the base config with the row's model keys set and its batch and
    length, written where both tools can read it."""
    with open(os.path.join(ROOT, row["config"])) as f:
        cfg = json.load(f)
    for k, v in row.get("set", {}).items():
        section, key = k.split(".", 1)
        cfg.setdefault(section, {})[key] = v
    cfg.setdefault("train", {})
    cfg["train"]["batch"] = row["batch"]
    cfg["train"]["seq_len"] = row["seq_len"]
    path = os.path.join(out_dir, "configs", row["name"] + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)
    return path


def run_json(cmd, log):
    """Runs cmd, appends its output to log, returns (its last stdout line as JSON or None,
    seconds taken)."""
    start = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    took = time.monotonic() - start
    with open(log, "a") as f:
        f.write("$ %s\n%s%s(exit %d, %.1f s)\n" % (" ".join(cmd), p.stdout, p.stderr, p.returncode, took))
    if p.returncode != 0:
        return None, took
    lines = [l for l in p.stdout.splitlines() if l.strip().startswith("{")]
    return (json.loads(lines[-1]) if lines else None), took


def liegrad_row(cfg, a, log):
    j, _ = run_json([LIEGRAD, "bench", "--config", cfg, "--steps", str(a.steps), "--warmup", str(a.warmup),
                     "--threads", str(a.threads), "--no-profile", "--no-roofline", "--json"], log)
    if j is None:
        return None
    return {"tokens_per_s": j["tokens_per_s"]["median"], "flops_per_token": j["flops_per_token"],
            "peak_rss_mib": j["peak_rss_mib"], "parameters": j["parameters"]}


def torch_row(cfg, a, log):
    j, took = run_json([PYTHON, os.path.join(ROOT, "bench", "torch_reference.py"), "--config", cfg,
                        "--steps", str(a.steps), "--warmup", str(a.warmup), "--threads", str(a.threads),
                        "--blas-threads", "auto", "--json"], log)
    if j is None:
        return None, took
    return {"tokens_per_s": j["tokens_per_s"]["median"], "peak_rss_mib": j["peak_rss_mib"],
            "blas_threads": j.get("blas_threads")}, took


def gemm_peak(a, log):
    j, _ = run_json([LIEGRAD, "bench", "--op", "gemm", "--n", "1024", "--repeats", "5", "--threads", str(a.threads),
                     "--json"], log)
    return None if j is None else j["liegrad_gflop_per_s"]["median"]


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(rows, rounds, peaks):
    """One summary per row: medians over rounds, fraction of the peak, growth against
    the family's base row."""
    peak = median(peaks)
    out = []
    for r in rows:
        lg = [x["liegrad"][r["name"]] for x in rounds if x["liegrad"].get(r["name"])]
        th = [x["torch"][r["name"]] for x in rounds if x["torch"].get(r["name"])]
        s = {"name": r["name"], "family": r["family"], "seq_len": r["seq_len"], "batch": r["batch"],
             "set": r.get("set", {}), "what": r.get("what", ""), "base": r.get("base", False), "runs": len(lg)}
        if lg:
            s["parameters"] = lg[0]["parameters"]
            s["flops_per_token"] = lg[0]["flops_per_token"]
            s["tokens_per_s"] = median([x["tokens_per_s"] for x in lg])
            s["peak_rss_mib"] = median([x["peak_rss_mib"] for x in lg])
            # per round against that round's peak, then the median: the peak and the run share the load
            fr = [x["liegrad"][r["name"]]["tokens_per_s"] * s["flops_per_token"] / (x["peak_gflop_per_s"] * 1e9)
                  for x in rounds if x["liegrad"].get(r["name"]) and x.get("peak_gflop_per_s")]
            s["fraction_of_peak"] = median(fr)
        if th:
            s["torch_tokens_per_s"] = median([x["tokens_per_s"] for x in th])
            s["torch_peak_rss_mib"] = median([x["peak_rss_mib"] for x in th])
            if s.get("flops_per_token") and peak:
                s["torch_fraction_of_peak"] = s["torch_tokens_per_s"] * s["flops_per_token"] / (peak * 1e9)
        out.append(s)
    for s in out:
        base = next((b for b in out if b["family"] == s["family"] and b["base"] and b.get("tokens_per_s")), None)
        if base and s.get("tokens_per_s"):
            predicted_ns = 1e9 / base["tokens_per_s"] * s["flops_per_token"] / base["flops_per_token"]
            s["time_over_flop_prediction"] = (1e9 / s["tokens_per_s"]) / predicted_ns
    return out, peak


def fmt(v, spec="%.0f"):
    return "—" if v is None else spec % v


def table(summary, peak, settings, a):
    lines = ["| row | setting | params | batch x T | tokens/s | FLOP/token | of peak | time / FLOP prediction | "
             "peak MiB | PyTorch tokens/s | PyTorch of peak | liegrad / PyTorch |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for s in summary:
        ratio = (s["tokens_per_s"] / s["torch_tokens_per_s"]
                 if s.get("tokens_per_s") and s.get("torch_tokens_per_s") else None)
        lines.append("| %s | %s | %s | %d x %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            s["name"], s["what"], fmt(s.get("parameters")), s["batch"], s["seq_len"], fmt(s.get("tokens_per_s")),
            fmt(s.get("flops_per_token") and s["flops_per_token"] / 1e6, "%.2fM"),
            fmt(s.get("fraction_of_peak"), "%.2f"), fmt(s.get("time_over_flop_prediction"), "%.2f"),
            fmt(s.get("peak_rss_mib")), fmt(s.get("torch_tokens_per_s")), fmt(s.get("torch_fraction_of_peak"), "%.3f"),
            fmt(ratio, "%.1fx")))
    head = ["Training speed as the work grows: %d round(s), %d threads, %d timed steps after %d warm-up steps per "
            "run, about %d tokens per step (batch = %d // T). GEMM peak (1024^3 float, median of rounds): %s GFLOP/s. "
            "Medians over rounds; \"of peak\" is tokens/s x FLOP/token over the same round's peak; "
            "\"time / FLOP prediction\" is the time per token over the base row's time per token scaled by "
            "FLOP/token (1.00: the cost grows as the arithmetic does). Written by `bench/growth.py`." % (
                len(a.rounds_done), a.threads, a.steps, a.warmup, settings["tokens_per_step"],
                settings["tokens_per_step"], fmt(peak, "%.1f")), ""]
    return "\n".join(head + lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--torch", action="store_true", help="time the PyTorch reference beside each row")
    ap.add_argument("--torch-budget", type=float, default=600.0,
                    help="skip a PyTorch row in later rounds when its first run took longer (seconds)")
    ap.add_argument("--only", default=None, help="keep the rows whose name contains this")
    ap.add_argument("--settings", default=os.path.join(ROOT, "bench", "growth.json"))
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.rounds < 1 or a.steps < 1 or a.warmup < 0 or a.threads < 1:
        sys.exit("growth.py: --rounds, --steps and --threads must be >= 1 and --warmup >= 0")
    if not os.access(LIEGRAD, os.X_OK):
        sys.exit("growth.py: %s is not an executable liegrad (build it, or set LIEGRAD)" % LIEGRAD)
    settings, rows = load_settings(a.settings)
    if a.only:
        rows = [r for r in rows if a.only in r["name"]]
        if not rows:
            sys.exit("growth.py: no row of %s has '%s' in its name" % (a.settings, a.only))
    os.makedirs(a.out, exist_ok=True)
    log = os.path.join(a.out, "growth.log")
    configs = {r["name"]: write_config(r, a.out) for r in rows}
    rounds, too_slow = [], set()
    a.rounds_done = rounds
    for i in range(a.rounds):
        rnd = {"round": i + 1, "liegrad": {}, "torch": {}}
        rnd["peak_gflop_per_s"] = gemm_peak(a, log)

        def time_side(side, r):
            if side == "liegrad":
                rnd["liegrad"][r["name"]] = liegrad_row(configs[r["name"]], a, log)
            elif a.torch and r["name"] not in too_slow:
                rnd["torch"][r["name"]], took = torch_row(configs[r["name"]], a, log)
                if took > a.torch_budget:
                    too_slow.add(r["name"])

        time_round(i, rows, lambda r: r["name"], time_side)
        rounds.append(rnd)
        summary, peak = summarize(rows, rounds, [x["peak_gflop_per_s"] for x in rounds])
        result = {"settings": settings, "rows": summary, "rounds": rounds, "peak_gflop_per_s": peak,
                  "threads": a.threads, "steps": a.steps, "warmup": a.warmup, "torch": a.torch,
                  "torch_skipped_after_round_1": sorted(too_slow)}
        write_round_files(a.out, "growth", result, table(summary, peak, settings, a))
    print("wrote %s" % os.path.join(a.out, "growth.md"))


if __name__ == "__main__":
    main()
