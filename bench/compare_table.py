#!/usr/bin/env python3
"""bench/compare.sh's run as one JSON file, and the tables printed from it.

  compare_table.py fold RAW_DIR --out RUN.json [--table TABLE.md] --threads T --steps S --warmup W
                   --rounds R --load-start "L1 L5 L15" --load-end "L1 L5 L15" [--trained A,B,...]
                   [--machine MACHINE.json] [--default-set] CONFIG.json...
  compare_table.py RUN.json                   prints the tables of a folded run

`fold` gathers the per-round files compare.sh leaves in RAW_DIR (NAME.SIDE.ROUND.json: the
last JSON line of `liegrad bench` or bench/torch_reference.py, each one round of one row on
one side) into RUN.json, verbatim, with the run's settings: the rows (configs, then the
trained models, whose runs are trained-NAME.SIDE.ROUND.json), threads, steps, rounds, the
load averages at the start and end, when it finished, the machine (compare.sh's
MACHINE.json) and whether it timed compare.sh's default set of rows ("default_set": the
runs docs/performance.md may be generated from). The per-round files stay outside git;
RUN.json and its table are what results/performance/compare-DATE/ keeps.

The tables. Table 1, liegrad against PyTorch per config, at initialisation and trained: the
median over rounds of each run's median tokens/s (matrices/s for the exponential row) with
the rounds' range, their ratio, the same ratio per CPU second, and each side's peak
resident memory. Table 2, trained against initialisation for each trained model, on both
sides (the ratio: the median over rounds of that round's trained over initialisation
tokens/s, every round sweeping every row, with the rounds' range), and osmformer-linear's
liegrad ratio on a line of its own. Table 3, where liegrad's time goes: the share of a
training step per op family (from `liegrad bench`'s profiled steps), the mean forward
products of an exponential, the FLOPs per token of measure/bench.hpp's count, GFLOP/s and
its fraction of the GEMM peak of the same run (the fastest of liegrad's GEMM, its own
kernel alone and OpenBLAS's at 1024^3), medians over rounds. Table 4, the roofline
(measure/roofline_table.hpp) of each liegrad row: per op family the measured time as a fraction
of its bound (the bound from the family's FLOPs and bytes per token at the GEMM peak and
the STREAM bandwidth that run measured), and the whole step's bound, measured time and
fraction; medians over rounds. Rows from runs without a roofline (older JSON) are left
out. bench/performance_page.py reads the same figures through this module. Standard
library only.
"""
import argparse
import datetime
import glob
import json
import os
import re
import statistics
import sys

FAMILIES = ["exp_forward", "exp_pullback", "attention", "small_products", "tangent", "readout", "dense",
            "optimizer", "other"]
FORMAT = "liegrad-compare-1"
ROUND_FILE = re.compile(r"^(?P<name>.+)\.(?P<side>liegrad|torch)\.(?P<round>[0-9]+)\.json$")


class Run:
    """A folded compare.sh run: its settings and every round's JSON by row, side and round."""

    def __init__(self, data):
        if data.get("format") != FORMAT:
            raise ValueError("not a folded compare.sh run (format %r, expected %r)" % (data.get("format"), FORMAT))
        self.data = data
        self.rounds_of = data["runs"]  # {row: {side: {round: json}}}

    @classmethod
    def read(cls, path):
        with open(path) as f:
            try:
                return cls(json.load(f))
            except ValueError as e:
                raise SystemExit("compare_table.py: %s: %s" % (path, e))

    def load(self, name, side):
        """Every round's JSON of one row and side, in round order."""
        got = self.rounds_of.get(name, {}).get(side, {})
        return [got[r] for r in sorted(got, key=int)]

    def by_round(self, name, side, key="tokens_per_s"):
        """{round: the run's median of KEY} for one row and side."""
        got = {}
        for r, run in self.rounds_of.get(name, {}).get(side, {}).items():
            v = med([run], key)
            if v:
                got[r] = v
        return got

    def paired(self, num, den, side, den_side=None, key="tokens_per_s"):
        """Each round's num KEY over den's in the same round (the rounds sweep every row in
        turn, so a change in the machine's speed between rounds cancels); den_side compares
        two sides of one row (liegrad against PyTorch) instead of two rows of a side."""
        a, b = self.by_round(num, side, key), self.by_round(den, den_side or side, key)
        return [a[r] / b[r] for r in sorted(a, key=int) if r in b]

    @property
    def configs(self):
        return self.data["configs"]

    @property
    def trained(self):
        return self.data["trained"]

    def rows(self):
        """(row label, file stem, init stem or None) for every row of tables 1 and 3."""
        rows = [(name, name, None) for name in self.configs]
        for t in self.trained:
            rows.append(("%s, trained" % t, "trained-" + t, t))
        return rows

    def gemm_peak(self):
        """The median over rounds of each round's fastest 1024^3 product (GFLOP/s)."""
        peaks = [max(med([r], "liegrad_gflop_per_s") or 0, med([r], "liegrad_own_gflop_per_s") or 0,
                     med([r], "openblas_gflop_per_s") or 0) for r in self.load("gemm", "liegrad")]
        return statistics.median(peaks) if peaks else None


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
    return ["| config | " + " | ".join(f.replace("_", " ") for f in used) + "".join(" | " + t for t in tail) + " |",
            "| --- |" + " ---: |" * (len(used) + len(tail))]


def median_of(vals):
    vals = [float(v) for v in vals if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def ratio(a, b):
    return "n/a" if a is None or b is None or b == 0 else "%.2f" % (a / b)


def fmt_paired(per_round, digits=2):
    """The median of per-round ratios with their range; digits: decimals printed (3 where a
    target sits at a round number, so that 0.897 does not print as 0.90)."""
    if not per_round:
        return "n/a"
    if len(per_round) == 1:
        return "%.*f" % (digits, per_round[0])
    # With the rounds' range: on a shared machine one round's ratio moves by a quarter.
    return "%.*f (%.*f–%.*f)" % (digits, statistics.median(per_round), digits, min(per_round), digits, max(per_round))


def share_rows(run):
    """Table 3's rows: (label, {family: median share}, exp products, FLOP per token, GFLOP/s,
    PyTorch's GFLOP/s). PyTorch runs the same model, so its rate is its median tokens/s times
    liegrad's FLOP count per token (the model's useful work, whatever either side computes)."""
    table = []
    for label, stem, _ in run.rows():
        L = run.load(stem, "liegrad")
        shares = [r["time_share"] for r in L if isinstance(r.get("time_share"), dict)]
        if not shares:
            continue
        row = {f: statistics.median(s.get(f, 0.0) for s in shares) for f in FAMILIES}
        fpt, torch_tps = med(L, "flops_per_token"), med(run.load(stem, "torch"), "tokens_per_s")
        torch_gflops = fpt * torch_tps / 1e9 if fpt and torch_tps else None
        table.append((label, row, med(L, "exp_mean_products"), fpt, med(L, "gflop_per_s"), torch_gflops))
    return table


def roofline_rows(run):
    """Table 4's rows: (label, {family: of bound}, {step figure: value}, GEMM peak, triad)."""
    table = []
    for label, stem, _ in run.rows():
        R = [r["roofline"] for r in run.load(stem, "liegrad") if isinstance(r.get("roofline"), dict)]
        if not R:
            continue
        fam = {f: median_of(dig(r, "families", f, "of_bound") for r in R) for f in FAMILIES}
        step = {k: median_of(dig(r, "step", k) for r in R)
                for k in ("bound_ns_per_token", "measured_ns_per_token", "of_bound")}
        table.append((label, fam, step, median_of(r.get("peak_gflop_per_s") for r in R),
                      median_of(r.get("stream_gb_per_s") for r in R)))
    return table


def side_table(run):
    """Table 1: liegrad against PyTorch per row, and the exponential's row."""
    out = ["| config | model | liegrad tokens/s (range) | PyTorch tokens/s (range) | ratio | per-round ratio (range) "
           "| ratio per CPU second | liegrad peak MiB | PyTorch peak MiB |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label, stem, _ in run.rows():
        L, T = run.load(stem, "liegrad"), run.load(stem, "torch")
        model = (L or T or [{}])[0].get("model", "?")
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, model, fmt_range(L, "tokens_per_s"), fmt_range(T, "tokens_per_s"),
            ratio(med(L, "tokens_per_s"), med(T, "tokens_per_s")),
            fmt_paired(run.paired(stem, stem, "liegrad", "torch")),
            ratio(med(L, "tokens_per_cpu_s"), med(T, "tokens_per_cpu_s")),
            fmt(med(L, "peak_rss_mib")), fmt(med(T, "peak_rss_mib"))))
    L, T = run.load("expm", "liegrad"), run.load("expm", "torch")
    if L or T:
        routes = sorted({r.get("expm", "?") for r in T}) or ["?"]
        out.append("| exp + pullback d=16 N=4096 (matrices/s; torch: %s) | expm | %s | %s | %s | %s | %s | %s | %s |" % (
            " / ".join(routes) + (" (differs between rounds)" if len(routes) > 1 else ""),
            fmt_range(L, "matrices_per_s"), fmt_range(T, "matrices_per_s"),
            ratio(med(L, "matrices_per_s"), med(T, "matrices_per_s")),
            fmt_paired(run.paired("expm", "expm", "liegrad", "torch", "matrices_per_s")),
            ratio(med(L, "matrices_per_cpu_s"), med(T, "matrices_per_cpu_s")),
            fmt(med(L, "peak_rss_mib")), fmt(med(T, "peak_rss_mib"))))
    return out


def kernels(run):
    """(liegrad's OpenBLAS cores, the OPENBLAS_CORETYPE values PyTorch's runs had)."""
    cores = sorted({r.get("openblas_core") for r in run.load("gemm", "liegrad") if r.get("openblas_core")})
    stems = run.configs + ["expm"] + ["trained-" + t for t in run.trained]
    torch_cores = sorted({str(r.get("openblas_coretype")) for c in stems for r in run.load(c, "torch")})
    return cores, torch_cores


def footer(run):
    """The settings line, bandwidth, CPU speeds, PyTorch's threads and the warnings."""
    d = run.data
    cores, torch_cores = kernels(run)
    load = ("load average %s at the start, %s at the end" % (d["load_start"], d["load_end"])
            if d.get("load_start") and d.get("load_end") else "load average not recorded")
    out = ["%s threads, %s timed steps per run, %s alternating round(s) per side; %s; OpenBLAS kernels: "
           "liegrad %s, PyTorch %s; every round's JSON in compare.json" % (
               d["threads"], d["steps"], d["rounds"], load, ", ".join(cores) or "not reported",
               ", ".join("OPENBLAS_CORETYPE=%s" % c if c != "None" else "OpenBLAS's own choice"
                         for c in torch_cores) or "not reported")]
    S = run.load("stream", "liegrad")
    if S:
        out += ["", "Memory bandwidth (STREAM triad, liegrad bench --op stream, each round): %s GB/s." %
                fmt_range(S, "triad_gb_per_s", 1)]
    C = run.load("cores", "liegrad")
    if C:
        out += ["", "CPU speeds (liegrad bench --op cores, each round: the slowest CPU's rate of 16 x 16 products over "
                "the fastest's, one CPU at a time; 1 is equal CPUs): %s." % fmt_range(C, "slowest_over_fastest", 2)]
    chosen = chosen_threads(run, "blas_threads")
    if chosen:
        out += ["", "PyTorch's OpenBLAS threads (torch_reference.py probes --threads and 1 after the warm-up and keeps "
                "the faster; its element-wise ops run on torch's own threads): %s." % "; ".join(
                    "%s %s" % (c, " or ".join(str(n) for n in v)) for c, v in chosen.items())]
    chosen = chosen_threads(run, "torch_threads")
    if chosen:
        out += ["", "PyTorch's own threads for its element-wise ops (probed the same way, after the OpenBLAS "
                "probe): %s." % "; ".join("%s %s" % (c, " or ".join(str(n) for n in v)) for c, v in chosen.items())]
    if int(d["rounds"]) < 5:
        out += ["", "Fewer than five rounds: on a shared machine the medians and ranges of so few say little."]
    if cores and [c.upper() for c in torch_cores] != [c.upper() for c in cores]:
        out += ["", "**The two sides may not run the same OpenBLAS kernels** (liegrad %s, PyTorch %s): where OpenBLAS "
                "does not know the CPU its own choice is a narrower fallback, which slows PyTorch's dense products." % (
                    ", ".join(cores), ", ".join(c if c != "None" else "OPENBLAS_CORETYPE not set"
                                                for c in torch_cores))]
    return out


def chosen_threads(run, key):
    """{row stem: the thread counts PyTorch's runs chose} for `key` ("blas_threads" or
    "torch_threads", torch_reference.py's probes); rows whose JSON has no such key are left out."""
    chosen = {}
    for c in run.configs + ["trained-" + t for t in run.trained] + ["expm"]:
        counts = sorted({r[key] for r in run.load(c, "torch") if r.get(key) is not None})
        if counts:
            chosen[c] = counts
    return chosen


def trained_pairs(run):
    """The trained models that also have an initialisation row."""
    return [t for t in run.trained if t in run.configs]


def trained_table(run):
    """Table 2: trained against initialisation on each side."""
    pairs = trained_pairs(run)
    if not pairs:
        return []
    out = ["", "Trained (2,000 steps of the table recipe) against initialisation, tokens/s:", "",
           "| model | liegrad trained | liegrad init | liegrad trained / init | PyTorch trained | PyTorch init "
           "| PyTorch trained / init |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for t in pairs:
        tr = "trained-" + t
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            t, fmt(med(run.load(tr, "liegrad"), "tokens_per_s")), fmt(med(run.load(t, "liegrad"), "tokens_per_s")),
            fmt_paired(run.paired(tr, t, "liegrad"), 3), fmt(med(run.load(tr, "torch"), "tokens_per_s")),
            fmt(med(run.load(t, "torch"), "tokens_per_s")), fmt_paired(run.paired(tr, t, "torch"), 3)))
    if "osmformer-linear" in pairs:
        per_round = run.paired("trained-osmformer-linear", "osmformer-linear", "liegrad")
        out += ["", "osmformer-linear, liegrad trained ÷ init over %d paired round(s): %s (median, with the rounds' "
                "range)." % (len(per_round), fmt_paired(per_round, 3))]
    return out


def shares_table(run):
    """Table 3: where liegrad's time goes and how far each row is from the GEMM peak."""
    table, peak = share_rows(run), run.gemm_peak()
    if not table:
        return []
    used = [f for f in FAMILIES if any(r[f] >= 0.005 for _, r, _, _, _, _ in table)]
    out = ["", "Share of a liegrad training step per op family, the exponentials' mean forward products, and the "
           "FLOP rate against the float GEMM peak of this run (%s GFLOP/s; medians over rounds), with PyTorch's "
           "rate on the same FLOP count beside it:" % fmt(peak, 1), ""]
    out += family_table_head(used, ["exp products", "FLOP per token", "GFLOP/s", "of peak", "PyTorch of peak"])

    def of_peak(gflops):
        return "—" if gflops is None or not peak else "%.2f" % (gflops / peak)

    for label, row, prods, fpt, gflops, torch_gflops in table:
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            label, " | ".join("%.0f%%" % (100 * row[f]) for f in used),
            "—" if not prods else "%.2f" % prods, "—" if not fpt else fmt(fpt),
            "—" if gflops is None else "%.1f" % gflops, of_peak(gflops), of_peak(torch_gflops)))
    return out


def roofline_table(run):
    """Table 4: each liegrad row's roofline, medians over rounds (see the module doc)."""
    table = roofline_rows(run)
    if not table:
        return []
    used = [f for f in FAMILIES if any(fam[f] is not None for _, fam, _, _, _ in table)]
    out = ["", "Roofline: each op family's measured time as a fraction of its bound (max of FLOPs ÷ the run's GEMM "
           "peak and bytes ÷ its STREAM bandwidth, per token; 1 = on the roofline; — where the family does no counted "
           "work or is not derived), and the whole step's bound against its measured time (medians over rounds):", ""]
    out += family_table_head(used, ["step bound ns/token", "step ns/token", "step of bound", "GEMM peak GFLOP/s",
                                    "triad GB/s"])
    for label, fam, step, peak, bw in table:
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            label, " | ".join("—" if fam[f] is None else "%.2f" % fam[f] for f in used),
            fmt(step["bound_ns_per_token"], 1), fmt(step["measured_ns_per_token"], 1),
            "—" if step["of_bound"] is None else "%.2f" % step["of_bound"], fmt(peak, 1), fmt(bw, 1)))
    return out


def tables(run):
    """Every table of a run, as the markdown compare.sh prints and table.md keeps."""
    lines = side_table(run) + [""] + footer(run) + trained_table(run) + shares_table(run) + roofline_table(run)
    return "\n".join(lines) + "\n"


def read_rounds(raw_dir):
    """{row: {side: {round: json}}} from RAW_DIR's NAME.SIDE.ROUND.json files; a file that is
    not JSON (a run that failed half-way) is left out, as the table always left it out."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(raw_dir, "*.json"))):
        m = ROUND_FILE.match(os.path.basename(path))
        if not m:
            continue
        try:
            with open(path) as f:
                obj = json.load(f)
        except ValueError:
            continue
        runs.setdefault(m["name"], {}).setdefault(m["side"], {})[m["round"]] = obj
    return runs


def dump(data):
    """RUN.json's text: the settings one per line, then one line per round's JSON, so that a
    file of a few hundred rounds stays readable and diffs by round."""
    head = {k: v for k, v in data.items() if k != "runs"}
    lines = ["{"] + ["  %s: %s," % (json.dumps(k), json.dumps(v, ensure_ascii=False)) for k, v in head.items()]
    lines.append('  "runs": {')
    names = list(data["runs"])
    for i, name in enumerate(names):
        lines.append("    %s: {" % json.dumps(name))
        sides = list(data["runs"][name])
        for j, side in enumerate(sides):
            lines.append("      %s: {" % json.dumps(side))
            rounds = sorted(data["runs"][name][side], key=int)
            for k, r in enumerate(rounds):
                lines.append("        %s: %s%s" % (json.dumps(r), json.dumps(data["runs"][name][side][r],
                                                                             ensure_ascii=False),
                                                   "," if k + 1 < len(rounds) else ""))
            lines.append("      }" + ("," if j + 1 < len(sides) else ""))
        lines.append("    }" + ("," if i + 1 < len(names) else ""))
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def fold(a):
    runs = read_rounds(a.raw_dir)
    if not runs:
        raise SystemExit("compare_table.py: no NAME.SIDE.ROUND.json files in %s" % a.raw_dir)
    machine = None
    if a.machine:
        with open(a.machine) as f:
            machine = json.load(f)
    data = {"format": FORMAT, "threads": a.threads, "steps": a.steps, "warmup": a.warmup, "rounds": a.rounds,
            "load_start": a.load_start, "load_end": a.load_end,
            "finished": a.finished or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "default_set": a.default_set, "machine": machine,
            "configs": [os.path.basename(c)[:-5] if c.endswith(".json") else c for c in a.configs],
            "trained": [t for t in a.trained.split(",") if t], "runs": runs}
    Run(data)  # the same checks a reader makes
    text = dump(data)
    with open(a.out, "w") as f:
        f.write(text)
    table = tables(Run(json.loads(text)))
    if a.table:
        with open(a.table, "w") as f:
            f.write(table)
    sys.stdout.write(table)


def main(argv):
    if argv[:1] != ["fold"]:
        if len(argv) != 1 or argv[0].startswith("-"):
            raise SystemExit("usage: compare_table.py RUN.json | compare_table.py fold RAW_DIR --out RUN.json ... "
                             "(see the head of bench/compare_table.py)")
        sys.stdout.write(tables(Run.read(argv[0])))
        return
    ap = argparse.ArgumentParser(prog="compare_table.py fold")
    ap.add_argument("raw_dir")
    ap.add_argument("configs", nargs="*", metavar="CONFIG.json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--table")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--warmup", type=int)
    ap.add_argument("--rounds", type=int, required=True)
    ap.add_argument("--load-start")
    ap.add_argument("--load-end")
    ap.add_argument("--trained", default="")
    ap.add_argument("--machine")
    ap.add_argument("--finished", help="when the run finished (UTC, ISO 8601; default: now)")
    ap.add_argument("--default-set", action="store_true")
    fold(ap.parse_intermixed_args(argv[1:]))


if __name__ == "__main__":
    main(sys.argv[1:])
