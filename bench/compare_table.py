#!/usr/bin/env python3
"""Prints bench/compare.sh's tables from the raw JSON its runs left in OUT.

  compare_table.py OUT THREADS STEPS ROUNDS "LOAD_START" "LOAD_END" CONFIG.json...

Table 1, liegrad against PyTorch per config: the median over rounds of each run's
median tokens/s (matrices/s for the exponential row), their ratio, the same ratio per
CPU second, and each side's peak resident memory. Table 2, where liegrad's time goes:
the share of a training step per op family (from `liegrad bench`'s profiled steps),
median over rounds. Standard library only.
"""
import glob
import json
import os
import statistics
import sys

FAMILIES = ["exp_forward", "exp_pullback", "attention", "small_products", "tangent", "readout", "dense",
            "optimizer", "other"]


def load(out, name, side):
    runs = []
    for f in sorted(glob.glob(os.path.join(out, "%s.%s.*.json" % (name, side)))):
        try:
            with open(f) as fh:
                runs.append(json.load(fh))
        except ValueError:
            pass
    return runs


def med(runs, key):
    vals = []
    for r in runs:
        v = r.get(key)
        if isinstance(v, dict):
            v = v.get("median")
        if isinstance(v, (int, float)):
            vals.append(float(v))
    return statistics.median(vals) if vals else None


def fmt(v, digits=0):
    return "n/a" if v is None else ("{:,.%df}" % digits).format(v)


def ratio(a, b):
    return "n/a" if a is None or b is None or b == 0 else "%.2f" % (a / b)


def main():
    out, threads, steps, rounds, load0, load1 = sys.argv[1:7]
    configs = [os.path.basename(c)[:-5] for c in sys.argv[7:]]
    print("| config | model | liegrad tokens/s | PyTorch tokens/s | ratio | ratio per CPU second "
          "| liegrad peak MiB | PyTorch peak MiB |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in configs:
        L, T = load(out, name, "liegrad"), load(out, name, "torch")
        model = (L or T or [{}])[0].get("model", "?")
        lt, tt = med(L, "tokens_per_s"), med(T, "tokens_per_s")
        lc, tc = med(L, "tokens_per_cpu_s"), med(T, "tokens_per_cpu_s")
        print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, model, fmt(lt), fmt(tt), ratio(lt, tt), ratio(lc, tc),
            fmt(med(L, "peak_rss_mib")), fmt(med(T, "peak_rss_mib"))))
    L, T = load(out, "expm", "liegrad"), load(out, "expm", "torch")
    if L or T:
        lt, tt = med(L, "matrices_per_s"), med(T, "matrices_per_s")
        lc, tc = med(L, "matrices_per_cpu_s"), med(T, "matrices_per_cpu_s")
        route = T[0].get("expm", "?") if T else "?"
        print("| exp + pullback d=16 N=4096 (matrices/s; torch: %s) | expm | %s | %s | %s | %s | %s | %s |" % (
            route, fmt(lt), fmt(tt), ratio(lt, tt), ratio(lc, tc),
            fmt(med(L, "peak_rss_mib")), fmt(med(T, "peak_rss_mib"))))
    print()
    print("%s threads, %s timed steps per run, %s alternating round(s) per side; load average %s at the start, "
          "%s at the end; raw JSON in %s" % (threads, steps, rounds, load0, load1, out))

    # Where liegrad's time goes.
    rows = []
    for name in configs:
        L = load(out, name, "liegrad")
        shares = [r["time_share"] for r in L if isinstance(r.get("time_share"), dict)]
        if not shares:
            continue
        row = {f: statistics.median(s.get(f, 0.0) for s in shares) for f in FAMILIES}
        gflops = med(L, "gflop_per_s")
        rows.append((name, row, gflops))
    if rows:
        used = [f for f in FAMILIES if any(r[f] >= 0.005 for _, r, _ in rows)]
        print()
        print("Share of a liegrad training step per op family (median over rounds):")
        print()
        print("| config | " + " | ".join(f.replace("_", " ") for f in used) + " | GFLOP/s |")
        print("| --- | " + " | ".join("---:" for _ in used) + " | ---: |")
        for name, row, gflops in rows:
            print("| %s | %s | %s |" % (name, " | ".join("%.0f%%" % (100 * row[f]) for f in used),
                                         "—" if gflops is None else "%.1f" % gflops))


if __name__ == "__main__":
    main()
