#!/usr/bin/env python3
"""Summaries of rotation-tracking tables ("kind": "rotations" in configs/paper/tables.json;
the rotation_tracking table), called by scripts/reproduce.py.

Reads every finished run's result.json (written by `liegrad train` on rotations:SO3:
per test length the mean and 95th-percentile geodesic angle error in degrees of the
model and of the floor, the exact integration in double of the model's own inputs) and
writes
  RESULTS/TABLE.json  one row per (manifest "row", learning rate): mean and standard
                      deviation over seeds of the mean and p95 angle error at every test
                      length, the floor's, the validation angle error; a row whose rate
                      was chosen from a screen ("set_from") is marked "chosen", and the
                      screen's seed-1 run at that rate joins it (both carry the same "row");
  RESULTS/TABLE.md    the chosen rows with the floors, then every screened rate at seed 1;
  RESULTS/TABLE.svg   mean angle error against length on log axes, one line per chosen
                      row, the noisy floor dashed and a uniformly random guess dotted.
Numbers are only ever read from result.json files. Standard library only.
"""
import json
import math
import os
import statistics

from length_tables import (finish_svg_lines, mean_std, read_run_results, svg_length_frame, svg_open,
                           svg_train_length_line, wall_time_line, write_summary_json, write_table_md)

# Mean geodesic angle of a uniformly random rotation: the Haar measure on SO(3) has
# angle density (1 - cos t) / pi on [0, pi], whose mean is pi/2 + 2/pi rad (126.5 degrees).
RANDOM_GUESS_DEG = math.degrees(math.pi / 2 + 2 / math.pi)
SCORES = ("mean_deg", "p95_deg", "floor_mean_deg", "floor_p95_deg")


def spec_of(table, name):
    return next(r for r in table["runs"] if r["name"] == name)


def lr_of(run):
    v = run["sets"].get("train.lr")
    return None if v is None else float(v)


def row_label(table, run):
    """A row's label: the manifest's "row" of the run (its name if none), and its learning
    rate when the run screens rates or takes one from a screen ("lstm lr=0.003")."""
    spec = spec_of(table, run["name"])
    label = spec.get("row", run["name"])
    screened = "train.lr" in run.get("point", {}) or "train.lr" in spec.get("set_from", {})
    if screened:
        lr = lr_of(run)
        label += " lr=%s" % ("%g" % lr if lr is not None else "(waits for its screen)")
    return label


def chosen_labels(table, runs):
    """Labels of the rows at a rate chosen from a screen (the runs with "set_from")."""
    return {row_label(table, r) for r in runs if "set_from" in spec_of(table, r["name"])}


def row_of(label, results, diverged, pending_ids, chosen):
    row = {"model": label, "chosen": chosen, "n": len(results), "diverged": len(diverged), "pending": pending_ids}
    if not results:
        if diverged:
            row["parameters"] = diverged[0].get("parameters")
        return row
    results = sorted(results, key=lambda r: r["config"]["train"]["seed"])
    r0 = results[0]
    cfg = r0["config"]
    row.update({"type": cfg["model"]["type"], "parameters": r0["parameters"], "lr": cfg["train"]["lr"],
                "steps": r0["steps"], "noise": cfg["data"].get("noise", 0.0), "max_len": cfg["data"]["max_len"],
                "seeds": [r["config"]["train"]["seed"] for r in results]})
    lengths = []
    for r in results:
        lengths += [s["length"] for s in r["test"] if s["length"] not in lengths]
    row["lengths"] = sorted(lengths)
    by_length = [{s["length"]: s for s in r["test"]} for r in results]
    for key in SCORES:
        # A seed evaluated without this length is left out of its mean, not paired with another length.
        row[key] = {str(L): mean_std([t[L][key] for t in by_length if L in t]) for L in row["lengths"]}
    row["val_angle_deg"] = mean_std([r["val"]["mean_deg"] for r in results])
    row["best_val_angle_deg_each"] = [r.get("best_val_angle_deg") for r in results]
    row["wall_s_each"] = [r["wall_seconds"] for r in results]
    row["wall_s"] = statistics.mean(row["wall_s_each"])
    return row


def fmt_deg(x):
    """Degrees with 3 significant digits; tiny errors in scientific notation."""
    if x == 0:
        return "0"
    if abs(x) < 0.01:
        return "%.2e" % x
    return "%.3g" % x if abs(x) < 100 else "%.0f" % x


def cell(row, L, mean_key="mean_deg", p95_key="p95_deg"):
    m, p = row[mean_key].get(str(L)), row[p95_key].get(str(L))
    if m is None:
        return "—"
    text = fmt_deg(m[0]) + (" ± " + fmt_deg(m[1]) if row["n"] > 1 else "")
    return "%s (%s)" % (text, fmt_deg(p[0]))


def fmt_wall(s):
    return "%.0f s" % s if s < 120 else "%.1f min" % (s / 60)


def svg_plot(path, title, series, floor, lengths, train_len):
    """series: [(label, [(length, mean degrees)])]; floor: [(length, degrees)] or None.
    Log x and log y; zero errors (an exact floor) cannot be drawn and are left out."""
    W, H, L, R, T, B = 760, 440, 70, 230, 40, 55
    values = [y for _, pts in series for _, y in pts if y > 0] + [y for _, y in floor or [] if y > 0]
    values.append(RANDOM_GUESS_DEG)
    y0 = math.floor(math.log10(min(values)))
    y1 = max(math.ceil(math.log10(max(values))), y0 + 1)
    x0, x1 = math.log2(min(lengths)), math.log2(max(lengths))
    if x1 == x0:
        x1 = x0 + 1
    px = lambda n: L + (math.log2(n) - x0) / (x1 - x0) * (W - L - R)
    py = lambda d: H - B - (math.log10(d) - y0) / (y1 - y0) * (H - T - B)
    o = svg_open(W, H, L, R, title)
    for e in range(y0, y1 + 1):
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (L, W - R, py(10.0 ** e), py(10.0 ** e)))
        o.append('<text x="%d" y="%.1f" text-anchor="end">1e%d</text>' % (L - 5, py(10.0 ** e) + 4, e))
    frame = (W, H, L, R, T, B)
    svg_length_frame(o, frame, lengths, px, "walk length (log scale)",
                     "mean angle error, degrees (log scale, mean over seeds)")
    o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#888" stroke-dasharray="2,3"/>' % (
        L, W - R, py(RANDOM_GUESS_DEG), py(RANDOM_GUESS_DEG)))
    o.append('<text x="%d" y="%.1f" text-anchor="end" fill="#888">random guess</text>' % (W - R - 4, py(RANDOM_GUESS_DEG) - 4))
    svg_train_length_line(o, frame, lengths, px, train_len)
    if floor:
        pts = [(x, y) for x, y in floor if y > 0]
        o.append('<path d="%s" fill="none" stroke="#555" stroke-width="1.5" stroke-dasharray="6,4"/>' % " ".join(
            ("M" if j == 0 else "L") + "%.1f,%.1f" % (px(x), py(y)) for j, (x, y) in enumerate(pts)))
        o.append('<text x="%d" y="%d" fill="#555">floor with noise (dashed)</text>' % (W - R + 12, T + 16 + 18 * len(series)))
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
    finish_svg_lines(path, o, [(lab, [(x, y) for x, y in pts if y > 0]) for lab, pts in series],
                     px, py, colors, 3.5, (W - R + 12, T + 16, 18))


def summarize(results_dir, table_name, table, runs):
    """Writes RESULTS/TABLE.{json,md,svg}; returns the paths written."""
    chosen = chosen_labels(table, runs)
    rows, pending = read_run_results(results_dir, table_name, runs, lambda run: row_label(table, run))
    summary = {"table": table_name, "title": table["title"], "kind": "rotations", "budget": table.get("budget", {}),
               "seeds": table["seeds"], "random_guess_deg": RANDOM_GUESS_DEG, "rows": [], "pending": pending}
    for label, v in rows.items():
        summary["rows"].append(row_of(label, v["results"], v["diverged"], v["pending"], label in chosen))
    written = [write_summary_json(results_dir, table_name, summary)]

    # The main table: rows trained on their own (no screen) and the screens' chosen rates.
    screened = {spec_of(table, r["name"]).get("row", r["name"]) for r in runs if "train.lr" in r.get("point", {})}
    main = [r for r in summary["rows"] if r["chosen"] or r["model"].split(" lr=")[0] not in screened]
    done = [r for r in summary["rows"] if r["n"] > 0]
    lengths = sorted({L for r in done for L in r["lengths"]})
    lines = ["# %s" % table["title"], "",
             "Angle errors in degrees on the fixed test walks of each length (data.test_sequences walks per length): "
             "mean ± std over seeds of each seed's mean, and in brackets the mean over seeds of the 95th percentile. "
             "The floor is the exact integration in double of the same inputs (with their noise), scored the same "
             "way. A uniformly random guess scores %.1f degrees mean. Rows at a rate chosen by a screen take the "
             "screen's lowest validation angle error (length %s) at seed 1; the screen is listed below." % (
                 RANDOM_GUESS_DEG, done[0]["max_len"] if done else "data.max_len"),
             wall_time_line(summary["rows"]),
             "Produced by `scripts/reproduce.sh %s` from `configs/paper/tables.json`." % table_name, ""]
    if not done:
        lines.append("No finished runs yet.")
    else:
        lines += ["| model | params | lr | steps | " + " | ".join("%d" % L for L in lengths) + " | runs | wall/run |",
                  "| --- |" + " ---: |" * (len(lengths) + 5)]
        floors = {}
        for r in main:
            if r["n"] == 0:
                lines.append("| %s | — | — | — | %s | %s |  |" % (
                    r["model"], " | ".join("—" for _ in lengths), "diverged" if r["diverged"] else "pending"))
                continue
            lines.append("| %s | %d | %g | %d | %s | %d%s | %s |" % (
                r["model"], r["parameters"], r["lr"], r["steps"], " | ".join(cell(r, L) for L in lengths), r["n"],
                "".join(" (+%d %s)" % (k, w) for k, w in ((r["diverged"], "diverged"), (len(r["pending"]), "pending")) if k),
                fmt_wall(r["wall_s"])))
            floors.setdefault(r["noise"], r)
        for noise, r in sorted(floors.items()):
            lines.append("| floor: exact integration in double, noise %g rad | — | — | — | %s | %d |  |" % (
                noise, " | ".join(cell(r, L, "floor_mean_deg", "floor_p95_deg") for L in lengths), r["n"]))
        screen = [r for r in summary["rows"] if " lr=" in r["model"] and r["n"] > 0 and 1 in r["seeds"]]
        if screen:
            lines += ["", "## Learning-rate screens (seed 1)", "",
                      "| model | lr | validation mean angle (length %d) | %s | chosen |" % (
                          done[0]["max_len"], " | ".join("%d" % L for L in lengths)),
                      "| --- | ---: | ---: |" + " ---: |" * len(lengths) + " --- |"]
            for r in sorted(screen, key=lambda r: (r["model"].split(" lr=")[0], r.get("lr") or 0)):
                first = r["best_val_angle_deg_each"][r["seeds"].index(1)]
                lines.append("| %s | %g | %s | %s | %s |" % (
                    r["model"].split(" lr=")[0], r["lr"], fmt_deg(first),
                    " | ".join(seed_cell(results_dir, table_name, runs, table, r, L) for L in lengths),
                    "yes" if r["chosen"] else ""))
        series = [(r["model"], [(L, r["mean_deg"][str(L)][0]) for L in r["lengths"]]) for r in main if r["n"] > 0]
        noisy = [r for n, r in sorted(floors.items()) if n > 0]
        floor = [(L, noisy[0]["floor_mean_deg"][str(L)][0]) for L in noisy[0]["lengths"]] if noisy else None
        svg = os.path.join(results_dir, table_name + ".svg")
        svg_plot(svg, "SO(3) rotation tracking: angle error against length (trained on 1..%d)" % done[0]["max_len"],
                 series, floor, lengths, done[0]["max_len"])
        written.append(svg)
        lines += ["", "![angle error against length](%s.svg)" % table_name]
    written.append(write_table_md(results_dir, table_name, lines, pending))
    return written


def seed_cell(results_dir, table_name, runs, table, row, L):
    """The seed-1 run's mean (p95) angle error at length L of a screened row."""
    for run in runs:
        if run["seed"] != 1 or row_label(table, run) != row["model"]:
            continue
        f = os.path.join(results_dir, table_name, run["id"], "result.json")
        if not os.path.exists(f):
            continue
        with open(f) as fh:
            tests = {s["length"]: s for s in json.load(fh)["test"]}
        if L in tests:
            return "%s (%s)" % (fmt_deg(tests[L]["mean_deg"]), fmt_deg(tests[L]["p95_deg"]))
    return "—"
