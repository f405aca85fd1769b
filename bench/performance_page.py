#!/usr/bin/env python3
"""Writes docs/performance.md from the newest reference run and the page's template.

  performance_page.py [--results results/performance] [--template bench/performance_page.md]
                      [--out docs/performance.md]

The reference run is the newest (by "finished") compare.json under --results that timed
compare.sh's default rows ("default_set"). Beside it the page shows the newest growth
table (results/performance/growth-*/growth.md, bench/growth.py) and generation table
(results/performance/sample-*/sample.md, bench/sampling.py), newest by the date their
JSON records, or says that the table has not been run yet and how to run it. The template holds the prose: how to measure,
what each table means, the design choices; every measured figure on the page is a
{{name}} placeholder filled here from that run's rounds (bench/compare_table.py's medians,
ranges and tables), so regenerating the page after a new run changes its numbers and
nothing else. A placeholder the generator does not know, or a page over 400 lines (not
counting the growth and generation tables, whose length their runs set), is an error; so is a page that names a session, a run number, an issue or a commit: the dated
history lives in docs/performance-log.md. Standard library only.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_table as ct  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_LINES = 400
OSM_MODELS = ("osm_rnn", "osmformer")
# What the page must never carry: the log's sessions, run numbers, issues and commits.
HISTORY = re.compile(r"\bsession \d|\bruns? \d|\bissue \d|(?<!\w)#\d|\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")


def newest_reference(results):
    """The path of the newest compare.json of the default rows under RESULTS."""
    found = []
    for path in glob.glob(os.path.join(results, "*", "compare.json")):
        with open(path) as f:
            head = json.load(f)
        if head.get("default_set"):
            found.append((head["finished"], path))
    if not found:
        raise SystemExit("performance_page.py: no compare.json of compare.sh's default rows under %s" % results)
    return max(found)[1]


# The tables the page shows from their own runs: placeholder, folder prefix, files, what
# the table is, the command that writes one.
SIDE_TABLES = (
    ("growth_table", "growth", "growth.json", "growth.md", "Training speed as T, d and the size grow",
     "python3 bench/growth.py --torch --out results/performance/growth-DATE"),
    ("sampling_table", "sample", "sample.json", "sample.md", "Generation speed at batch 1 beside PyTorch's",
     "python3 bench/sampling.py --out results/performance/sample-DATE"),
)


def newest_side_table(results, prefix, json_name, md_name):
    """The text of the newest RESULTS/PREFIX-*/MD_NAME (by the "date" of its JSON, then the
    folder's name), or None when there is none."""
    found = []
    for md in glob.glob(os.path.join(results, prefix + "-*", md_name)):
        folder = os.path.dirname(md)
        with open(os.path.join(folder, json_name)) as f:
            found.append((json.load(f).get("date", ""), os.path.basename(folder), md))
    if not found:
        return None
    with open(max(found)[2]) as f:
        return f.read().strip("\n")


def side_tables(results):
    """{placeholder: the newest table, or a line saying it has not been run and how}."""
    out = {}
    for name, prefix, json_name, md_name, title, command in SIDE_TABLES:
        text = newest_side_table(results, prefix, json_name, md_name)
        out[name] = text if text is not None else (
            "*%s: not run yet.* `%s` writes it; regenerating this page (`python3 bench/performance_page.py`) "
            "then shows it here." % (title, command))
    return out


def pct(x):
    return "%.0f%%" % (100 * x)


def readable(label):
    """A row label in prose: "osm-rnn-identity, trained" as "trained osm-rnn-identity"."""
    return "trained " + label[:-len(", trained")] if label.endswith(", trained") else label


def span_pct(vals):
    """"a–b%" over fractions VALS."""
    return span([100 * v for v in vals], "%.0f") + "%"


def span(vals, form="%.2f"):
    """"a–b" over VALS (one value when they agree to the printed digits)."""
    lo, hi = form % min(vals), form % max(vals)
    return lo if lo == hi else "%s–%s" % (lo, hi)


class Figures:
    """The run's figures the template names, each a string."""

    def __init__(self, run):
        self.run = run
        self.values = {}
        shares = ct.share_rows(run)
        self.shares = {label: (row, prods, fpt, gflops) for label, row, prods, fpt, gflops, _ in shares}
        self.torch_gflops = {label: t for label, _, _, _, _, t in shares if t is not None}
        self.roof = {label: (fam, step, peak, bw) for label, fam, step, peak, bw in ct.roofline_rows(run)}
        self.peak = run.gemm_peak()
        self.models = {label: (run.load(stem, "liegrad") or [{}])[0].get("model") for label, stem, _ in run.rows()}
        self.osm = [label for label in self.shares if self.models.get(label) in OSM_MODELS]

    def __getitem__(self, name):
        return self.values[name]

    def set(self, **kv):
        self.values.update(kv)

    def of_peak(self, label):
        return self.shares[label][3] / self.peak

    def ns_per_token(self, stem):
        """{family: median over rounds of the family's ns per token} (share × step time)."""
        runs = [r for r in self.run.load(stem, "liegrad") if isinstance(r.get("time_share"), dict)]
        out = {}
        for f in ct.FAMILIES:
            out[f] = statistics.median(r["time_share"].get(f, 0.0) * r["step_seconds_median"] * 1e9 /
                                       (r["batch"] * r["seq_len"]) for r in runs)
        out["step"] = statistics.median(r["step_seconds_median"] * 1e9 / (r["batch"] * r["seq_len"]) for r in runs)
        return out

    def compute(self):
        run, d = self.run, self.run.data
        first = run.load("osmformer-linear", "liegrad")[0]
        gemm = run.load("gemm", "liegrad")
        torch_versions = sorted({r.get("torch") for c in run.configs for r in run.load(c, "torch") if r.get("torch")})
        cores, torch_cores = ct.kernels(run)
        machine = d.get("machine") or {}
        self.set(date=d["finished"][:10], threads=str(d["threads"]), steps=str(d["steps"]), warmup=str(d["warmup"]),
                 rounds=str(d["rounds"]), batch=str(first["batch"]), seq_len=str(first["seq_len"]),
                 cpu=machine.get("cpu", "an unrecorded CPU"), cpus=str(machine.get("cpus", d["threads"])),
                 virtual="virtual " if machine.get("virtual") else "",
                 openblas=gemm[0].get("openblas_build", "OpenBLAS (build not reported)") if gemm else "OpenBLAS",
                 torch=" / ".join(torch_versions) or "not reported",
                 same_kernels="both sides on OpenBLAS's %s kernels" % ", ".join(cores)
                 if cores and [c.upper() for c in torch_cores] == [c.upper() for c in cores]
                 else "the two sides on different OpenBLAS kernels (the table's footer)",
                 cpu_ratio=ct.fmt_range(run.load("cores", "liegrad"), "slowest_over_fastest", 2),
                 peak=ct.fmt(self.peak, 1),
                 load_start="%.1f" % float(d["load_start"].split()[0]), load_end="%.1f" % float(d["load_end"].split()[0]))
        self.compute_ratios()
        self.compute_trained()
        self.compute_shares()
        self.compute_roofline()
        self.set(table_side="\n".join(ct.side_table(run)), footer="\n".join(ct.footer(run)),
                 table_trained="\n".join(ct.trained_table(run)).strip("\n"),
                 table_shares="\n".join(ct.shares_table(run)[3:]),
                 table_roofline="\n".join(ct.roofline_table(run)[3:]))

    def compute_ratios(self):
        run = self.run
        per_row = {label: statistics.median(run.paired(stem, stem, "liegrad", "torch"))
                   for label, stem, _ in run.rows() if run.paired(stem, stem, "liegrad", "torch")}
        osm = [v for label, v in per_row.items() if self.models.get(label) in OSM_MODELS]
        memory = []
        for label, stem, _ in run.rows():
            lm, tm = ct.med(run.load(stem, "liegrad"), "peak_rss_mib"), ct.med(run.load(stem, "torch"), "peak_rss_mib")
            if lm and tm:
                memory.append(tm / lm)
        self.set(osm_ratio=span(osm, "%.0f"), baseline_ratio=span([per_row["transformer"], per_row["lstm"]], "%.1f"),
                 memory=span(memory, "%.1f"))

    def compute_trained(self):
        lin, tr = self.shares["osmformer-linear"], self.shares["osmformer-linear, trained"]
        exp = lambda row: row["exp_forward"] + row["exp_pullback"]  # noqa: E731
        self.set(products_init="%.2f" % lin[1], products_trained="%.2f" % tr[1],
                 flops_more=pct(tr[2] / lin[2] - 1), exp_share_init=pct(exp(lin[0])), exp_share_trained=pct(exp(tr[0])))
        init, trained = self.ns_per_token("osmformer-linear"), self.ns_per_token("trained-osmformer-linear")
        grew = {f: trained[f] - init[f] for f in ct.FAMILIES}
        same_work = ["attention", "small_products", "tangent"]
        self.set(ns_init=ct.fmt(init["step"]), ns_trained=ct.fmt(trained["step"]),
                 ns_more=ct.fmt(trained["step"] - init["step"]), ns_exp_forward=ct.fmt(grew["exp_forward"]),
                 ns_exp_pullback=ct.fmt(grew["exp_pullback"]), ns_same_work=ct.fmt(sum(grew[f] for f in same_work)),
                 ns_same_work_parts=", ".join("%s %+.0f" % (f.replace("_", " "), grew[f]) for f in same_work))

    def compute_shares(self):
        exp = {label: self.shares[label][0]["exp_forward"] + self.shares[label][0]["exp_pullback"] for label in self.osm}
        rnn = [label for label in self.osm if self.models[label] == "osm_rnn"]
        small = [self.shares[label][0]["small_products"] for label in self.osm]
        tangent = [self.shares[label][0]["tangent"] for label in self.osm if self.shares[label][0]["tangent"] >= 0.005]
        osm_peak = {label: self.of_peak(label) for label in self.osm}
        lowest = sorted(osm_peak, key=osm_peak.get)[:2]
        self.set(exp_share=span_pct(list(exp.values())), exp_share_rnn=span_pct([exp[r] for r in rnn]),
                 small_share=span_pct(small), tangent_share=span_pct(tangent),
                 osm_of_peak=span(list(osm_peak.values())),
                 transformer_of_peak="%.2f" % self.of_peak("transformer"), lstm_of_peak="%.2f" % self.of_peak("lstm"),
                 torch_osm_of_peak=span([self.torch_gflops[label] / self.peak for label in self.osm
                                         if label in self.torch_gflops]),
                 torch_transformer_of_peak="%.2f" % (self.torch_gflops["transformer"] / self.peak),
                 torch_lstm_of_peak="%.2f" % (self.torch_gflops["lstm"] / self.peak),
                 lowest_of_peak=" and ".join("%s %.2f" % (readable(label), osm_peak[label]) for label in lowest),
                 transformer_dense=pct(self.shares["transformer"][0]["dense"]),
                 lstm_dense=pct(self.shares["lstm"][0]["dense"]))
        # exp share of osmformer-linear's trained FLOPs, from its roofline's per-family counts
        fams = [r["roofline"] for r in self.run.load("trained-osmformer-linear", "liegrad") if r.get("roofline")]
        exp_flops = statistics.median((ct.dig(f, "families", "exp_forward", "flops_per_token") +
                                       ct.dig(f, "families", "exp_pullback", "flops_per_token")) /
                                      ct.dig(f, "step", "flops_per_token") for f in fams)
        self.set(exp_flops_trained=pct(exp_flops))

    def compute_roofline(self):
        flop_only, far = {}, {}
        for label, (fam, step, peak, bw) in self.roof.items():
            runs = [r["roofline"] for r in self.run.load(self.stem(label), "liegrad") if r.get("roofline")]
            flop_only[label] = statistics.median(
                ct.dig(r, "step", "flops_per_token") / r["peak_gflop_per_s"] / ct.dig(r, "step", "bound_ns_per_token")
                for r in runs)
        osm = [label for label in self.roof if self.models.get(label) in OSM_MODELS]
        for f in ("exp_forward", "exp_pullback", "small_products", "optimizer"):
            rows = osm if f != "optimizer" else list(self.roof)
            far[f] = span([self.roof[label][0][f] for label in rows if self.roof[label][0][f] is not None])
        above = sorted({f.replace("_", " ") for fam, _, _, _ in self.roof.values() for f, v in fam.items()
                        if v is not None and v > 1})
        lowest = min(flop_only, key=flop_only.get)
        former = [label for label in osm if self.models[label] == "osmformer"]
        self.set(bound_vs_flops=span(list(flop_only.values())), bound_lowest="%s %.2f" % (readable(lowest), flop_only[lowest]),
                 above_one=", ".join(above) or "none", far_exp_forward=far["exp_forward"],
                 far_exp_pullback=far["exp_pullback"], far_small=far["small_products"], far_optimizer=far["optimizer"],
                 transformer_attention_bound="%.2f" % self.roof["transformer"][0]["attention"],
                 transformer_dense_bound="%.2f" % self.roof["transformer"][0]["dense"],
                 osmformer_attention_bound=span([self.roof[label][0]["attention"] for label in former]))

    def stem(self, label):
        return next(stem for lab, stem, _ in self.run.rows() if lab == label)


def render(template, figures):
    used = set()

    def fill(m):
        name = m.group(1)
        if name not in figures.values:
            raise SystemExit("performance_page.py: the template names {{%s}}, which the generator does not compute"
                             % name)
        used.add(name)
        return figures.values[name]

    template = template[template.index("\n# ") + 1:]  # the template's own head comment is not the page's
    page = re.sub(r"\{\{([a-z_]+)\}\}", fill, template)
    unused = sorted(set(figures.values) - used)
    if unused:
        raise SystemExit("performance_page.py: computed but not on the page: %s" % ", ".join(unused))
    return page


def check(page, table_lines=0):
    lines = page.count("\n") - table_lines
    if lines >= MAX_LINES:
        raise SystemExit("performance_page.py: the page has %d lines; it must stay under %d" % (lines, MAX_LINES))
    for number, line in enumerate(page.splitlines(), 1):
        m = HISTORY.search(line)
        if m:
            raise SystemExit("performance_page.py: line %d names history (%r); it belongs in "
                             "docs/performance-log.md" % (number, m.group(0)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(ROOT, "results", "performance"))
    ap.add_argument("--template", default=os.path.join(ROOT, "bench", "performance_page.md"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"))
    a = ap.parse_args()
    figures = Figures(ct.Run.read(newest_reference(a.results)))
    figures.compute()
    tables = side_tables(a.results)
    figures.set(**tables)
    with open(a.template) as f:
        page = render(f.read(), figures)
    check(page, sum(t.count("\n") for t in tables.values()))
    with open(a.out, "w") as f:
        f.write(page)
    print("wrote %s" % os.path.relpath(a.out))


if __name__ == "__main__":
    main()
