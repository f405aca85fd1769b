#!/usr/bin/env python3
"""Prints bench/compare.sh's tables from the raw JSON its runs left in OUT.

  compare_table.py OUT THREADS STEPS ROUNDS "LOAD_START" "LOAD_END" TRAINED_NAMES CONFIG.json...

TRAINED_NAMES: comma-separated model names of the trained rows (may be empty), whose runs
are OUT/trained-NAME.SIDE.R.json. Table 1, liegrad against PyTorch per config, at
initialisation and trained: the median over rounds of each run's median tokens/s
(matrices/s for the exponential row) with the rounds' range, their ratio, the same ratio
per CPU second, and each side's peak resident memory. Table 2, trained against initialisation for each trained
model, on both sides (the ratio: the median over rounds of that round's trained over
initialisation tokens/s, every round sweeping every row, with the rounds' range), and
osmformer-linear's liegrad ratio on a line of its own (issue 35's target). Table 3, where
liegrad's time goes: the share of a training step per op family (from `liegrad bench`'s profiled steps), the mean forward products of an
exponential, the FLOPs per token of train/bench.hpp's count, GFLOP/s and its fraction of
the GEMM peak of the same run (the fastest of liegrad's GEMM, its own kernel alone and
OpenBLAS's at 1024^3),
medians over rounds. Table 4, the roofline (train/roofline.hpp) of each liegrad row: per
op family the measured time as a fraction of its bound (the bound from the family's
FLOPs and bytes per token at the GEMM peak and the STREAM bandwidth that run measured),
and the whole step's bound, measured time and fraction; medians over rounds. Rows from
runs without a roofline (older JSON) are left out. Standard library only.
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


def values(runs, key):
    """Each run's figure for KEY (a run's median when KEY holds a spread)."""
    return [v for v in (med([r], key) for r in runs) if v is not None]


def fmt_range(runs, key, digits=0):
    """The median over runs of KEY with the runs' range: "37,880 (34,366–40,102)"."""
    vals = values(runs, key)
    if not vals:
        return "n/a"
    if len(vals) == 1:
        return fmt(vals[0], digits)
    return "%s (%s–%s)" % (fmt(statistics.median(vals), digits), fmt(min(vals), digits), fmt(max(vals), digits))


def dig(run, *keys):
    """run[k1][k2]... or None when any level is missing or null."""
    for k in keys:
        if not isinstance(run, dict) or run.get(k) is None:
            return None
        run = run[k]
    return run


def family_table_head(used, tail):
    """The header and alignment rows of a per-family table: config, the families USED, then TAIL."""
    print("| config | " + " | ".join(f.replace("_", " ") for f in used) + "".join(" | " + t for t in tail) + " |")
    print("| --- |" + " ---: |" * (len(used) + len(tail)))


def median_of(vals):
    vals = [float(v) for v in vals if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def ratio(a, b):
    return "n/a" if a is None or b is None or b == 0 else "%.2f" % (a / b)


def by_round(out, name, side, key="tokens_per_s"):
    """{round: the run's median of KEY} for one row and side."""
    got = {}
    for f in glob.glob(os.path.join(out, "%s.%s.*.json" % (name, side))):
        try:
            with open(f) as fh:
                v = med([json.load(fh)], key)
        except ValueError:
            continue
        if v:
            got[f.rsplit(".", 2)[-2]] = v
    return got


def paired_ratio(out, num, den, side, den_side=None, key="tokens_per_s", digits=2):
    """Median over rounds of num's KEY over den's in the same round (the rounds sweep every
    row in turn, so a change in the machine's speed between rounds cancels); den_side
    compares two sides of one row (liegrad against PyTorch) instead of two rows of a side.
    digits: decimals printed (3 where a target sits at a round number, so that 0.897 does
    not print as 0.90)."""
    a, b = by_round(out, num, side, key), by_round(out, den, den_side or side, key)
    per_round = [a[r] / b[r] for r in a if r in b]
    if not per_round:
        return "n/a"
    if len(per_round) == 1:
        return "%.*f" % (digits, per_round[0])
    # With the rounds' range: on a shared machine one round's ratio moves by a quarter.
    return "%.*f (%.*f–%.*f)" % (digits, statistics.median(per_round), digits, min(per_round), digits, max(per_round))


def row_names(configs, trained):
    """(row label, file stem, init stem or None) for every row of tables 1 and 3."""
    rows = [(name, name, None) for name in configs]
    for t in trained:
        rows.append(("%s, trained" % t, "trained-" + t, t))
    return rows


def main():
    out, threads, steps, rounds, load0, load1, trained = sys.argv[1:8]
    configs = [os.path.basename(c)[:-5] for c in sys.argv[8:]]
    trained = [t for t in trained.split(",") if t]
    rows = row_names(configs, trained)
    print("| config | model | liegrad tokens/s (range) | PyTorch tokens/s (range) | ratio | per-round ratio (range) "
          "| ratio per CPU second | liegrad peak MiB | PyTorch peak MiB |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, stem, _ in rows:
        L, T = load(out, stem, "liegrad"), load(out, stem, "torch")
        model = (L or T or [{}])[0].get("model", "?")
        lt, tt = med(L, "tokens_per_s"), med(T, "tokens_per_s")
        lc, tc = med(L, "tokens_per_cpu_s"), med(T, "tokens_per_cpu_s")
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, model, fmt_range(L, "tokens_per_s"), fmt_range(T, "tokens_per_s"), ratio(lt, tt),
            paired_ratio(out, stem, stem, "liegrad", "torch"),
            ratio(lc, tc), fmt(med(L, "peak_rss_mib")), fmt(med(T, "peak_rss_mib"))))
    L, T = load(out, "expm", "liegrad"), load(out, "expm", "torch")
    if L or T:
        lt, tt = med(L, "matrices_per_s"), med(T, "matrices_per_s")
        lc, tc = med(L, "matrices_per_cpu_s"), med(T, "matrices_per_cpu_s")
        routes = sorted({r.get("expm", "?") for r in T}) or ["?"]
        print("| exp + pullback d=16 N=4096 (matrices/s; torch: %s) | expm | %s | %s | %s | %s | %s | %s | %s |" % (
            " / ".join(routes) + (" (differs between rounds)" if len(routes) > 1 else ""),
            fmt_range(L, "matrices_per_s"), fmt_range(T, "matrices_per_s"),
            ratio(lt, tt), paired_ratio(out, "expm", "expm", "liegrad", "torch", "matrices_per_s"), ratio(lc, tc),
            fmt(med(L, "peak_rss_mib")), fmt(med(T, "peak_rss_mib"))))
    print()
    cores = sorted({r.get("openblas_core") for r in load(out, "gemm", "liegrad") if r.get("openblas_core")})
    torch_runs = [r for c in configs + ["expm"] + ["trained-" + t for t in trained] for r in load(out, c, "torch")]
    torch_cores = sorted({str(r.get("openblas_coretype")) for r in torch_runs})
    print("%s threads, %s timed steps per run, %s alternating round(s) per side; load average %s at the start, "
          "%s at the end; OpenBLAS kernels: liegrad %s, PyTorch %s; raw JSON in %s" % (
              threads, steps, rounds, load0, load1, ", ".join(cores) or "not reported",
              ", ".join("OPENBLAS_CORETYPE=%s" % c if c != "None" else "OpenBLAS's own choice"
                        for c in torch_cores) or "not reported", out))
    S = load(out, "stream", "liegrad")
    if S:
        print()
        print("Memory bandwidth (STREAM triad, liegrad bench --op stream, each round): %s GB/s." %
              fmt_range(S, "triad_gb_per_s", 1))
    C = load(out, "cores", "liegrad")
    if C:
        print()
        print("CPU speeds (liegrad bench --op cores, each round: the slowest CPU's rate of 16 x 16 products over the "
              "fastest's, one CPU at a time; 1 is equal CPUs): %s." % fmt_range(C, "slowest_over_fastest", 2))
    chosen = {}  # row -> the OpenBLAS thread counts PyTorch's runs chose (torch_reference.py's probe)
    for c in configs + ["trained-" + t for t in trained] + ["expm"]:
        counts = sorted({r["blas_threads"] for r in load(out, c, "torch") if r.get("blas_threads") is not None})
        if counts:
            chosen[c] = counts
    if chosen:
        print()
        print("PyTorch's OpenBLAS threads (torch_reference.py probes --threads and 1 after the warm-up and keeps the "
              "faster; its element-wise ops run on torch's own threads): %s." % "; ".join(
                  "%s %s" % (c, " or ".join(str(n) for n in v)) for c, v in chosen.items()))
    if int(rounds) < 5:
        print()
        print("Fewer than five rounds: on a shared machine the medians and ranges of so few say little.")
    if cores and [c.upper() for c in torch_cores] != [c.upper() for c in cores]:
        print()
        print("**The two sides may not run the same OpenBLAS kernels** (liegrad %s, PyTorch %s): where OpenBLAS "
              "does not know the CPU its own choice is a narrower fallback, which slows PyTorch's dense products." % (
                  ", ".join(cores), ", ".join(c if c != "None" else "OPENBLAS_CORETYPE not set" for c in torch_cores)))

    # Trained against initialisation, each side.
    pairs = [(t, t if t in configs else None) for t in trained]
    if any(init for _, init in pairs):
        print()
        print("Trained (2,000 steps of the table recipe) against initialisation, tokens/s:")
        print()
        print("| model | liegrad trained | liegrad init | liegrad trained / init | PyTorch trained | PyTorch init "
              "| PyTorch trained / init |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for t, init in pairs:
            if not init:
                continue
            lt, li = med(load(out, "trained-" + t, "liegrad"), "tokens_per_s"), med(load(out, t, "liegrad"), "tokens_per_s")
            tt, ti = med(load(out, "trained-" + t, "torch"), "tokens_per_s"), med(load(out, t, "torch"), "tokens_per_s")
            print("| %s | %s | %s | %s | %s | %s | %s |" % (
                t, fmt(lt), fmt(li), paired_ratio(out, "trained-" + t, t, "liegrad", digits=3), fmt(tt), fmt(ti),
                paired_ratio(out, "trained-" + t, t, "torch", digits=3)))
        if ("osmformer-linear", "osmformer-linear") in pairs:
            pairs_n = len(set(by_round(out, "trained-osmformer-linear", "liegrad")) &
                          set(by_round(out, "osmformer-linear", "liegrad")))
            print()
            print("osmformer-linear, liegrad trained ÷ init over %d paired round(s): %s (median, with the rounds' "
                  "range)." % (pairs_n, paired_ratio(out, "trained-osmformer-linear", "osmformer-linear", "liegrad", digits=3)))

    # Where liegrad's time goes, and how far each model is from the machine's GEMM peak.
    G = load(out, "gemm", "liegrad")
    peaks = [max(med([r], "liegrad_gflop_per_s") or 0, med([r], "liegrad_own_gflop_per_s") or 0,
                 med([r], "openblas_gflop_per_s") or 0) for r in G]
    peak = statistics.median(peaks) if peaks else None
    table = []
    for label, stem, _ in rows:
        L = load(out, stem, "liegrad")
        shares = [r["time_share"] for r in L if isinstance(r.get("time_share"), dict)]
        if not shares:
            continue
        row = {f: statistics.median(s.get(f, 0.0) for s in shares) for f in FAMILIES}
        table.append((label, row, med(L, "exp_mean_products"), med(L, "flops_per_token"), med(L, "gflop_per_s")))
    if table:
        used = [f for f in FAMILIES if any(r[f] >= 0.005 for _, r, _, _, _ in table)]
        print()
        print("Share of a liegrad training step per op family, the exponentials' mean forward products, and the "
              "FLOP rate against the float GEMM peak of this run (%s GFLOP/s; medians over rounds):" % fmt(peak, 1))
        print()
        family_table_head(used, ["exp products", "FLOP per token", "GFLOP/s", "of peak"])
        for label, row, prods, fpt, gflops in table:
            print("| %s | %s | %s | %s | %s | %s |" % (
                label, " | ".join("%.0f%%" % (100 * row[f]) for f in used),
                "—" if not prods else "%.2f" % prods, "—" if not fpt else fmt(fpt),
                "—" if gflops is None else "%.1f" % gflops,
                "—" if gflops is None or not peak else "%.2f" % (gflops / peak)))

    roofline_table(out, rows)


def roofline_table(out, rows):
    """Table 4: each liegrad row's roofline, medians over rounds (see the module doc)."""
    table = []
    for label, stem, _ in rows:
        R = [r["roofline"] for r in load(out, stem, "liegrad") if isinstance(r.get("roofline"), dict)]
        if not R:
            continue
        fam = {f: median_of(dig(r, "families", f, "of_bound") for r in R) for f in FAMILIES}
        step = {k: median_of(dig(r, "step", k) for r in R)
                for k in ("bound_ns_per_token", "measured_ns_per_token", "of_bound")}
        peak = median_of(r.get("peak_gflop_per_s") for r in R)
        bw = median_of(r.get("stream_gb_per_s") for r in R)
        table.append((label, fam, step, peak, bw))
    if not table:
        return
    used = [f for f in FAMILIES if any(fam[f] is not None for _, fam, _, _, _ in table)]
    print()
    print("Roofline: each op family's measured time as a fraction of its bound (max of FLOPs ÷ the run's GEMM peak "
          "and bytes ÷ its STREAM bandwidth, per token; 1 = on the roofline; — where the family does no counted work "
          "or is not derived), and the whole step's bound against its measured time (medians over rounds):")
    print()
    family_table_head(used, ["step bound ns/token", "step ns/token", "step of bound", "GEMM peak GFLOP/s", "triad GB/s"])
    for label, fam, step, peak, bw in table:
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            label, " | ".join("—" if fam[f] is None else "%.2f" % fam[f] for f in used),
            fmt(step["bound_ns_per_token"], 1), fmt(step["measured_ns_per_token"], 1),
            "—" if step["of_bound"] is None else "%.2f" % step["of_bound"], fmt(peak, 1), fmt(bw, 1)))

if __name__ == "__main__":
    main()
