#!/usr/bin/env python3
"""Summaries of group word tables ("kind": "words" in configs/paper/tables.json; the
state_tracking tables), called by scripts/reproduce.py.

Reads every finished run's result.json (written by `liegrad train` on a words:<group>
dataset: test scores by length, steps_to_99, parameters) and writes
  RESULTS/TABLE.json   one row per (model, group): mean and standard deviation over
                       seeds of the test accuracy at every evaluation length (per
                       position, whole word, last position), and the steps to reach
                       99% validation accuracy per position at the longest training
                       length (the first validation step, every train.eval_interval
                       steps, at which it is reached; "not reached" counts as such);
  RESULTS/TABLE.md     a table per group;
  RESULTS/TABLE-G.svg  per group: mean accuracy per position against length, one line
                       per model.
Numbers are only ever read from result.json files. Standard library only.
"""
import math
import os
import statistics

from length_tables import (finish_svg_lines, mean_std, read_run_results, svg_length_frame, svg_open,
                           svg_train_length_line, wall_time_line, write_summary_json, write_table_md)

METRICS = ("position_acc", "sequence_acc", "final_acc")


def group_of(run):
    return run["sets"].get("data.dataset", "").split(":", 1)[-1] or "?"


def row_label(run):
    """A row's model label: the run's name, and its grid values other than the dataset
    (a learning-rate screen's rows are "lstm lr=0.003", ...)."""
    extra = ["%s=%s" % (k.split(".")[-1], v) for k, v in sorted(run.get("point", {}).items()) if k != "data.dataset"]
    return " ".join([run["name"]] + extra)


def row_of(name, group, results, diverged, pending_ids, not_run_ids=()):
    row = {"model": name, "group": group, "n": len(results), "diverged": len(diverged), "pending": pending_ids}
    if not_run_ids:
        row["not_run"] = list(not_run_ids)
    if results:
        r0 = results[0]
        row["parameters"] = r0["parameters"]
        row["classes"] = r0["classes"]
        row["lr"] = r0["config"]["train"]["lr"]
        row["steps"] = r0["steps"]
        row["max_len"] = r0["config"]["data"]["max_len"]
        row["lengths"] = [s["length"] for s in r0["test"]]
        by_length = [{s["length"]: s for s in r["test"]} for r in results]  # each seed's entries, by length
        for m in METRICS:
            row[m] = {}
            for L in row["lengths"]:
                # A seed evaluated without this length is left out of its mean, not paired with another length.
                row[m][str(L)] = mean_std([t[L][m] for t in by_length if L in t])
        row["val_acc"] = mean_std([r["val"]["position_acc"] for r in results])
        reached = [r["steps_to_99"] for r in results if r.get("steps_to_99") is not None]
        row["seeds"] = [r["config"]["train"]["seed"] for r in results]  # the order of the *_each lists
        row["steps_to_99"] = {"reached": len(reached), "of": len(results), "each": [r.get("steps_to_99") for r in results],
                              "mean_of_reached": statistics.mean(reached) if reached else None}
        row["wall_s"] = statistics.mean(r["wall_seconds"] for r in results)
        row["wall_s_each"] = [r["wall_seconds"] for r in results]
        row["tokens_per_s"] = statistics.mean(r["tokens_per_second"] for r in results)
    elif diverged:
        row["parameters"] = diverged[0].get("parameters")
    return row


def fmt_acc(ms, n):
    if ms is None:
        return "—"
    return "%.3f ± %.3f" % (ms[0], ms[1]) if n > 1 else "%.3f" % ms[0]


def fmt_steps(s):
    if s is None:
        return "—"
    if s["reached"] == 0:
        return "not reached (0/%d)" % s["of"]
    text = "%.0f" % s["mean_of_reached"]
    return text if s["reached"] == s["of"] else "%s (%d/%d reached)" % (text, s["reached"], s["of"])


def svg_lines(path, title, series, lengths, chance=None, train_len=None):
    """series: {label: [(length, accuracy), ...]}; log2 x axis, accuracy 0..1."""
    W, H, L, R, T, B = 760, 440, 60, 210, 40, 55
    x0, x1 = math.log2(min(lengths)), math.log2(max(lengths))
    if x1 == x0:
        x1 = x0 + 1
    px = lambda n: L + (math.log2(n) - x0) / (x1 - x0) * (W - L - R)
    py = lambda a: H - B - a * (H - T - B)
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]
    o = svg_open(W, H, L, R, title)
    for k in range(0, 11, 2):
        a = k / 10
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (L, W - R, py(a), py(a)))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%.1f</text>' % (L - 5, py(a) + 4, a))
    frame = (W, H, L, R, T, B)
    svg_length_frame(o, frame, lengths, px, "word length (log scale)", "test accuracy per position (mean over seeds)")
    if chance is not None:
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#888" stroke-dasharray="6,4"/>' % (L, W - R, py(chance), py(chance)))
        o.append('<text x="%d" y="%.1f" text-anchor="end" fill="#888">chance</text>' % (W - R - 4, py(chance) - 4))
    svg_train_length_line(o, frame, lengths, px, train_len)
    finish_svg_lines(path, o, series.items(), px, py, colors, 3.5, (W - R + 12, T + 16, 18))


def summarize(results_dir, table_name, table, runs):
    """Writes RESULTS/TABLE.{json,md} and the per-group plots; returns the paths written."""
    groups = []
    for run in runs:
        if group_of(run) not in groups:
            groups.append(group_of(run))
    rows, pending = read_run_results(results_dir, table_name, runs, lambda run: (row_label(run), group_of(run)))
    summary = {"table": table_name, "title": table["title"], "kind": "words", "budget": table.get("budget", {}),
               "seeds": table["seeds"], "groups": groups, "rows": [], "pending": pending}
    for (name, g), v in rows.items():
        summary["rows"].append(row_of(name, g, v["results"], v["diverged"], v["pending"], v["not_run"]))
    written = [write_summary_json(results_dir, table_name, summary)]

    b = summary["budget"]
    lines = ["# %s" % table["title"], "",
             "Budget per run: %s steps of %s words of length uniform in data.min_len..data.max_len (1..64 in the configs), "
             "lr and schedule from each config; seeds %s." % (
                 b.get("train.steps", "config"), b.get("train.batch", "config"), ", ".join(map(str, table["seeds"]))),
             "Test accuracy per position on the fixed test words of each length (data.test_sequences per length; "
             "mean ± std over seeds); \"last\" is the accuracy at the last position of the longest words, i.e. of the "
             "product of the whole word; steps to 99%% are the first validation step (every %s steps) with accuracy "
             "per position >= 0.99 on the validation words (data.val_sequences words of the longest training "
             "length)." % b.get("train.eval_interval", "train.eval_interval"),
             wall_time_line(summary["rows"]),
             "Produced by `scripts/reproduce.sh %s` from `configs/paper/tables.json`." % table_name]
    # Rows whose own settings override the budget's steps or the configs' training length.
    differ = {}
    for r in summary["rows"]:
        notes = []
        if r.get("steps") is not None and b.get("train.steps") is not None and r["steps"] != b["train.steps"]:
            notes.append("%d steps" % r["steps"])
        if r.get("max_len") is not None and r["max_len"] != 64:
            notes.append("words of length <= %d" % r["max_len"])
        if notes:
            differ.setdefault(r["model"], notes)
    if differ:
        lines.insert(3, "Rows with their own budget or training length: %s." % "; ".join(
            "%s: %s" % (m, ", ".join(n)) for m, n in differ.items()))
    for g in groups:
        grow = [r for r in summary["rows"] if r["group"] == g]
        # every length some row was tested at; a row tested at fewer (a transformer's
        # limit below the recurrent models') shows "—" where it has none
        lengths = sorted({L for r in grow for L in r.get("lengths") or []}) or None
        lines += ["", "## %s" % g, ""]
        if lengths is None:
            lines.append("No finished runs yet.")
            continue
        head = "| model | params | " + " | ".join("acc@%d" % L for L in lengths) + " | last@%d | steps to 99%% | runs |" % lengths[-1]
        lines += [head, "|" + " --- |" + " ---: |" * (len(lengths) + 4)]
        for r in grow:
            if r["n"] == 0:
                status = "diverged" if r["diverged"] else "pending" if r["pending"] else "not run"
                lines.append("| %s | %s | %s | — | — | %s |" % (r["model"], r.get("parameters") or "—",
                                                            " | ".join(status for _ in lengths), status))
                continue
            accs = " | ".join(fmt_acc(r["position_acc"].get(str(L)), r["n"]) for L in lengths)
            lines.append("| %s | %d | %s | %s | %s | %d%s |" % (
                r["model"], r["parameters"], accs, fmt_acc(r["final_acc"].get(str(lengths[-1])), r["n"]),
                fmt_steps(r["steps_to_99"]), r["n"], "".join(" (+%d %s)" % (k, what) for k, what in (
                    (r["diverged"], "diverged"), (len(r.get("pending", [])), "pending"),
                    (len(r.get("not_run", [])), "not run")) if k)))
        series = {r["model"]: [(L, r["position_acc"][str(L)][0]) for L in lengths if str(L) in r["position_acc"]]
                  for r in grow if r["n"] > 0}
        svg = os.path.join(results_dir, "%s-%s.svg" % (table_name, g))
        done = next(r for r in grow if r["n"] > 0)  # lengths is set, so one row has finished
        svg_lines(svg, "words:%s: accuracy against length (trained on lengths 1..%d)" % (g, done["max_len"]), series,
                  lengths, 1.0 / done["classes"], done["max_len"])
        written.append(svg)
        lines += ["", "![words:%s accuracy against length](%s-%s.svg)" % (g, table_name, g)]
    not_run = {}
    for run in runs:
        if "not_run" in run and any(run["id"] in r.get("not_run", []) for r in summary["rows"]):
            not_run.setdefault(run["not_run"], []).append(run["id"])
    for why, ids in not_run.items():
        lines += ["", "Not run, on purpose: %s. Why (configs/paper/tables.json): %s" % (", ".join(ids), why)]
    written.append(write_table_md(results_dir, table_name, lines, pending))
    return written
