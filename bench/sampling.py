#!/usr/bin/env python3
"""bench/sampling.py: generation speed at batch 1 for every default model, liegrad beside
PyTorch.

For each config (default: the Tiny Shakespeare configs of configs/, those compare.sh
times), each of the --rounds R rounds runs, in alternating order (liegrad first in odd
rounds, PyTorch first in even ones):
  - `liegrad bench --config F --sample LENGTHS --repeats K --json` (measure/sample_bench.hpp:
    symbols/s of `liegrad sample`'s generation, one-symbol prompt, temperature 1, the
    config's window, the state or decoding cache carried);
  - `bench/torch_sampling.py --config F --lengths LENGTHS --repeats K --json` (the same
    generation written as a careful PyTorch user would);
and, unless --no-training, `liegrad bench --config F --steps 8 --json` once (training tokens/s of
the same model, the yardstick of "at least a tenth of training").
A row reports, as medians over rounds, symbols/s at every length on both sides, the time
per symbol at the longest length over that at the shortest (1.00: cost per symbol flat in
the number generated), sampling over training tokens/s and liegrad over PyTorch at the
longest length.

Writes DIR/sample.json (every round's raw figures and the settings) after every round and
DIR/sample.md (the table). docs/performance.md shows the newest results/performance/
sample-*/sample.md (bench/performance_page.py).

Usage: bench/sampling.py [--rounds 3] [--lengths 500,2000] [--repeats 3] [--threads 2]
                         [--configs F ...] [--no-torch] [--no-training] --out DIR
Standard library only; needs build/liegrad (LIEGRAD=...) and /usr/bin/python3 with torch
(PYTHON=...).
"""
import argparse
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from growth import LIEGRAD, PYTHON, ROOT, fmt, median, run_json  # noqa: E402
from side_rounds import time_round, write_round_files  # noqa: E402  (bench/side_rounds.py)


def default_configs():
    return sorted(p for p in glob.glob(os.path.join(ROOT, "configs", "*.json"))
                  if not os.path.basename(p).startswith("ptb-"))


def rates(j):
    """{length: median symbols/s} of one --sample JSON result (either side)."""
    return {str(r["length"]): r["symbols_per_s"]["median"] for r in j["rows"]}


def liegrad_sample(cfg, a, log):
    j, _ = run_json([LIEGRAD, "bench", "--config", cfg, "--sample", a.lengths, "--repeats", str(a.repeats),
                     "--threads", str(a.threads), "--json"], log)
    return None if j is None else {"symbols_per_s": rates(j), "model": j["model"], "parameters": j["parameters"],
                                   "context": j["context"], "peak_rss_mib": j["peak_rss_mib"]}


def torch_sample(cfg, a, log):
    j, _ = run_json([PYTHON, os.path.join(ROOT, "bench", "torch_sampling.py"), "--config", cfg, "--lengths", a.lengths,
                     "--repeats", str(a.repeats), "--threads", str(a.threads), "--json"], log)
    return None if j is None else {"symbols_per_s": rates(j), "blas_threads": j.get("blas_threads"),
                                   "expm": j.get("expm"), "torch": j.get("torch")}


def liegrad_training(cfg, a, log):
    j, _ = run_json([LIEGRAD, "bench", "--config", cfg, "--steps", "8", "--warmup", "2", "--threads", str(a.threads),
                     "--no-profile", "--no-roofline", "--json"], log)
    return None if j is None else {"tokens_per_s": j["tokens_per_s"]["median"]}


def summarize(names, rounds, lengths):
    out = []
    first, last = str(lengths[0]), str(lengths[-1])
    for name in names:
        lg = [r["liegrad"][name] for r in rounds if r["liegrad"].get(name)]
        th = [r["torch"][name] for r in rounds if r["torch"].get(name)]
        tr = [r["training"][name] for r in rounds if r["training"].get(name)]
        s = {"name": name, "runs": len(lg)}
        if lg:
            s.update(model=lg[0]["model"], parameters=lg[0]["parameters"], context=lg[0]["context"],
                     symbols_per_s={n: median([x["symbols_per_s"].get(n) for x in lg]) for n in map(str, lengths)})
            sp = s["symbols_per_s"]
            if sp.get(first) and sp.get(last):
                s["cost_growth"] = sp[first] / sp[last]  # time per symbol at the longest over the shortest
        if th:
            s["torch_symbols_per_s"] = {n: median([x["symbols_per_s"].get(n) for x in th]) for n in map(str, lengths)}
        if tr:
            s["training_tokens_per_s"] = median([x["tokens_per_s"] for x in tr])
        top = s.get("symbols_per_s", {}).get(last)
        if top and s.get("training_tokens_per_s"):
            s["over_training"] = top / s["training_tokens_per_s"]
        if top and s.get("torch_symbols_per_s", {}).get(last):
            s["over_torch"] = top / s["torch_symbols_per_s"][last]
        out.append(s)
    return out


def table(summary, lengths, a, rounds_done):
    ns = [str(n) for n in lengths]
    head = ("| config | model | params | window | " + " | ".join("symbols/s, n = %s" % n for n in ns) +
            " | time per symbol, n = %s / n = %s | training tokens/s | sampling / training | " % (ns[-1], ns[0]) +
            " | ".join("PyTorch symbols/s, n = %s" % n for n in ns) + " | liegrad / PyTorch, n = %s |" % ns[-1])
    lines = [head, "| --- | --- | ---: | ---: |" + " ---: |" * (2 * len(ns) + 4)]
    for s in summary:
        sp, tp = s.get("symbols_per_s", {}), s.get("torch_symbols_per_s", {})
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            s["name"], s.get("model", "—"), fmt(s.get("parameters")), fmt(s.get("context")),
            " | ".join(fmt(sp.get(n)) for n in ns), fmt(s.get("cost_growth"), "%.2f"),
            fmt(s.get("training_tokens_per_s")), fmt(s.get("over_training"), "%.3f"),
            " | ".join(fmt(tp.get(n)) for n in ns), fmt(s.get("over_torch"), "%.1fx")))
    intro = ("Generation at batch 1: %d round(s), %d threads, each length timed %d time(s) after a warm-up, the two "
             "sides in alternating order; medians over rounds. A one-symbol prompt, temperature 1, the whole "
             "vocabulary; recurrent models carry their state, attention models decode from their cache and restart "
             "the window from its last half (`liegrad sample`'s default). \"time per symbol\" is the cost per symbol "
             "at n = %s over that at n = %s (1.00: flat in the number generated). What each model carries from "
             "symbol to symbol (`models/decoding.hpp`), so that a symbol costs only its own step: the OSM-RNN its "
             "state H, with its token elements (token drives: transitions), prototypes and mixing formed once per "
             "call; the expRNN its hidden vector, with exp(A) formed once; the LSTM its (h, c); the transformer "
             "each layer's keys and values; the OSMFormer each layer's input states, its keys and values at once. "
             "PyTorch's side (`bench/torch_sampling.py`) caches the same. Written by `bench/sampling.py`."
             % (len(rounds_done), a.threads, a.repeats, ns[-1], ns[0]))
    return "\n".join([intro, ""] + lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lengths", default="500,2000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--configs", nargs="+", default=None, help="config files (default: configs/*.json but ptb-*)")
    ap.add_argument("--no-torch", action="store_true", help="liegrad only")
    ap.add_argument("--no-training", action="store_true", help="skip the training tokens/s beside each row")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    try:
        lengths = [int(x) for x in a.lengths.split(",")]
    except ValueError:
        sys.exit("sampling.py: --lengths: expected lengths like 500,2000, got '%s'" % a.lengths)
    if a.rounds < 1 or a.repeats < 1 or a.threads < 1 or min(lengths) < 1:
        sys.exit("sampling.py: --rounds, --repeats, --threads and every length must be >= 1")
    if not os.access(LIEGRAD, os.X_OK):
        sys.exit("sampling.py: %s is not an executable liegrad (build it, or set LIEGRAD)" % LIEGRAD)
    configs = a.configs or default_configs()
    for c in configs:
        if not os.path.isfile(c):
            sys.exit("sampling.py: no config file %s" % c)
    names = [os.path.splitext(os.path.basename(c))[0] for c in configs]
    os.makedirs(a.out, exist_ok=True)
    log = os.path.join(a.out, "sample.log")
    rounds = []
    for i in range(a.rounds):
        rnd = {"round": i + 1, "liegrad": {}, "torch": {}, "training": {}}

        def time_side(side, name_cfg):
            name, cfg = name_cfg
            if side == "liegrad":
                rnd["liegrad"][name] = liegrad_sample(cfg, a, log)
            elif not a.no_torch:
                rnd["torch"][name] = torch_sample(cfg, a, log)

        def time_training(name_cfg):
            name, cfg = name_cfg
            if not a.no_training:
                rnd["training"][name] = liegrad_training(cfg, a, log)

        time_round(i, list(zip(names, configs)), lambda name_cfg: name_cfg[0], time_side, time_training)
        rounds.append(rnd)
        summary = summarize(names, rounds, lengths)
        result = {"rows": summary, "rounds": rounds, "lengths": lengths, "repeats": a.repeats, "threads": a.threads,
                  "configs": [os.path.relpath(c, ROOT) for c in configs], "torch": not a.no_torch}
        write_round_files(a.out, "sample", result, table(summary, lengths, a, rounds))
    print("wrote %s" % os.path.join(a.out, "sample.md"))


if __name__ == "__main__":
    main()
