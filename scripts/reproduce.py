#!/usr/bin/env python3
"""Runs the paper's experiments (configs/paper/tables.json) and writes the tables.

For each requested table, every run (config x grid point x seed) whose result is
not yet in results/TABLE/RUN/result.json is trained with `liegrad train` into
runs/paper/TABLE/RUN (resumed from last.json when an earlier sitting was cut
short); its small files (config.json, metrics.jsonl, result.json) are then copied
into results/TABLE/RUN/. A run identical to a finished run of another table (same
config file, overrides and seed, e.g. the 100K rows of the scaling table) is copied
from it instead, with "reused_from" added to its result.json. Finally results/TABLE.json and results/TABLE.md are
written from whatever runs are finished (the rest are listed as pending), with
SVG plots where the table asks for one. Numbers are only ever read from the runs'
result.json files.

Long tables ("select": "best_val", scripts/long_tables.py) run to convergence with
early stopping and report each run's best-validation checkpoint; a run that stopped
early has its result.json and is finished like any other. Some of their runs wait for
others: a value chosen from a finished screen table ("set_from") or the extra seeds of
each family's best configuration ("best_seeds"); each table is planned again after
its ready runs finish, so one invocation trains everything that becomes ready.

Usage: scripts/reproduce.py [--list] [--dry-run] [--summarize-only] [--commit]
                            [--binary build/liegrad] [TABLE ...]
Standard library only.
"""
import argparse
import itertools
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

import long_tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "configs", "paper", "tables.json")
PAPER = {  # the paper's numbers (../shared/spec/models.md section 8): (val, test)
    ("ts100k", "osmformer-linear"): (2.254, 2.464),
    ("ts100k", "transformer"): (2.259, 2.583),
    ("recurrent", "osm-rnn-linear"): (None, 2.539),
    ("recurrent", "lstm"): (None, 2.594),
    ("ptb100k", "osmformer-linear"): (1.665, 1.614),
    ("ptb100k", "transformer"): (1.716, 1.664),
}


def fmt_value(v):
    if isinstance(v, float):
        return ("%g" % v)
    return str(v)


def expand(table_name, table):
    """(run id, base name, config path, overrides dict, seed) for every run of a table."""
    out = []
    grid = table.get("grid", {})
    keys = sorted(grid)
    points = list(itertools.product(*(grid[k] for k in keys))) if keys else [()]
    for run in table["runs"]:
        for point in points:
            for seed in table["seeds"]:
                sets = dict(table.get("budget", {}))
                sets.update(run.get("set", {}))
                tag = ""
                for k, v in zip(keys, point):
                    sets[k] = v
                    tag += "-%s=%s" % (k.split(".")[-1], fmt_value(v))
                sets["train.seed"] = seed
                run_id = "%s%s-s%d" % (run["name"], tag, seed)
                out.append({"id": run_id, "name": run["name"], "config": run["config"], "sets": sets,
                            "seed": seed, "point": dict(zip(keys, point))})
    return out


def set_args(sets):
    args = []
    for k, v in sets.items():
        args += ["--set", "%s=%s" % (k, v if isinstance(v, str) else json.dumps(v))]
    return args


def config_matches(run, result):
    """True if a finished run's resolved config holds every value of this run's config
    file and overrides (dotted keys), so training again would repeat it exactly."""
    with open(os.path.join(ROOT, run["config"])) as f:
        wanted = {}

        def flatten(prefix, obj):
            for k, v in obj.items():
                if k == "comment":  # documentation only; not part of the resolved config
                    continue
                if isinstance(v, dict):
                    flatten(prefix + k + ".", v)
                else:
                    wanted[prefix + k] = v
        flatten("", json.load(f))
    wanted.update(run["sets"])
    for key, value in wanted.items():
        node = result.get("config", {})
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node != value and not (isinstance(node, (int, float)) and isinstance(value, (int, float))
                                  and float(node) == float(value)):
            return False
    return True


def find_identical(manifest, table_name, table, run):
    """(table, run id, result dir) of a finished run in another table with the same config
    file, overrides and seed, or None. Such a run is copied instead of trained again."""
    if "wall_budget_s" in table:
        return None
    for other_name, other in manifest.items():
        if other_name in ("comment", table_name) or "wall_budget_s" in other:
            continue
        for o in expand(other_name, other):
            if o["config"] != run["config"] or o["sets"] != run["sets"]:
                continue
            d = os.path.join(ROOT, "results", other_name, o["id"])
            f = os.path.join(d, "result.json")
            if not os.path.exists(f):
                continue
            with open(f) as fh:
                result = json.load(fh)
            if not result.get("diverged") and result.get("reused_from") is None and config_matches(run, result):
                return other_name, o["id"], d
    return None


def reuse(source, res_dir):
    """Copies a finished identical run's files into res_dir; result.json gains reused_from."""
    other_name, other_id, d = source
    os.makedirs(res_dir, exist_ok=True)
    for f in ("config.json", "metrics.jsonl"):
        shutil.copy(os.path.join(d, f), os.path.join(res_dir, f))
    with open(os.path.join(d, "result.json")) as fh:
        result = json.load(fh)
    result["reused_from"] = "%s/%s" % (other_name, other_id)
    with open(os.path.join(res_dir, "result.json"), "w") as fh:
        json.dump(result, fh, indent=1)


def train(binary, table_name, table, run, dry_run, commit, manifest):
    res_dir = os.path.join(ROOT, "results", table_name, run["id"])
    if os.path.exists(os.path.join(res_dir, "result.json")):
        return "done"
    source = find_identical(manifest, table_name, table, run)
    if source:
        print("[%s] %s: identical to %s/%s, copied" % (table_name, run["id"], source[0], source[1]), flush=True)
        if not dry_run:
            reuse(source, res_dir)
            if commit:
                git_commit_paths([res_dir], "results: %s/%s (copied from the identical %s/%s)" % (
                    table_name, run["id"], source[0], source[1]))
        return "done"
    run_dir = os.path.join(ROOT, "runs", "paper", table_name, run["id"])
    sets = dict(run["sets"])
    if "wall_budget_s" in table:
        # Equal compute: the trainer stops when its training steps have used the budget and
        # runs the lr decay on the fraction of it used (train.time_budget_s); the step
        # count is then only a cap, far above what either model reaches.
        sets["train.time_budget_s"] = table["wall_budget_s"]
        sets["train.steps"] = 1000000
    resume = os.path.exists(os.path.join(run_dir, "last.json")) and not os.path.exists(os.path.join(run_dir, "result.json"))
    cmd = [binary, "train", "--config", os.path.join(ROOT, run["config"]), "--out", run_dir] + set_args(sets)
    cmd += ["--resume"] if resume else ["--force"]
    print("[%s] %s%s" % (table_name, run["id"], " (resuming)" if resume else ""), flush=True)
    if dry_run:
        print("  " + " ".join(cmd))
        return "pending"
    if not os.path.exists(os.path.join(run_dir, "result.json")):
        os.makedirs(run_dir, exist_ok=True)
        started = time.time()
        with open(run_dir + ".log", "a") as log:
            rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
        if rc != 0:
            best = best_checkpoint(binary, run_dir) if long_tables.is_long(table) else None
            if record_divergence(run_dir, res_dir, time.time() - started, best):
                print("  diverged (non-finite loss); recorded in %s/result.json" % res_dir, flush=True)
                if commit:
                    git_commit_paths([res_dir], "results: %s/%s (diverged)" % (table_name, run["id"]))
                return "done"
            print("  failed (exit %d); see %s.log" % (rc, run_dir), flush=True)
            return "failed"
    os.makedirs(res_dir, exist_ok=True)
    for f in ("config.json", "metrics.jsonl", "result.json"):
        shutil.copy(os.path.join(run_dir, f), os.path.join(res_dir, f))
    if commit:
        git_commit_paths([res_dir], "results: %s/%s" % (table_name, run["id"]))
    return "done"


def best_checkpoint(binary, run_dir):
    """{best_step, best_val_bpc, test_bpc_at_best} of a stopped run's best.json (`liegrad
    eval` over the whole splits), or None. A long-table run that diverged after its best
    evaluation is still judged by that checkpoint, as early stopping would have kept it."""
    path = os.path.join(run_dir, "best.json")
    if not os.path.exists(path):
        return None
    out = {}
    for split in ("val", "test"):
        done = subprocess.run([binary, "eval", "--checkpoint", path, "--split", split, "--json"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            return None
        out[split] = json.loads(done.stdout)["bpc"]
    with open(path) as f:
        step = json.load(f)["step"]
    return {"best_step": step, "best_val_bpc": out["val"], "test_bpc_at_best": out["test"]}


def record_divergence(run_dir, res_dir, wall_seconds, best=None):
    """A run that stopped on a non-finite loss is a result (the setting diverged), not a
    failure to retry: writes a result.json with val/test BPC null and diverged true (and
    `best`, the best checkpoint's numbers, when given). Returns False when the log shows
    some other failure."""
    with open(run_dir + ".log") as f:
        log = f.read().splitlines()
    message = next((line for line in reversed(log) if "non-finite" in line), None)
    if message is None:
        return False
    params = None
    for line in log:
        if line.startswith("model ") and " parameters" in line:
            params = int(line.split(":")[1].split()[0])
            break
    with open(os.path.join(run_dir, "config.json")) as f:
        config = json.load(f)
    os.makedirs(res_dir, exist_ok=True)
    for f in ("config.json", "metrics.jsonl"):
        shutil.copy(os.path.join(run_dir, f), os.path.join(res_dir, f))
    result = {"diverged": True, "message": message.strip(), "val_bpc": None, "test_bpc": None,
              "parameters": params, "config": config, "steps": config["train"]["steps"],
              "tokens_seen": None, "tokens_per_second": None, "wall_seconds": wall_seconds}
    result.update(best or {})
    with open(os.path.join(res_dir, "result.json"), "w") as f:
        json.dump(result, f, indent=2)
    return True


def git_commit_paths(paths, message):
    """Commits exactly `paths` (nothing else that happens to be staged), retrying while
    another git process holds the index lock."""
    for attempt in range(30):
        add = subprocess.run(["git", "-C", ROOT, "add", "--"] + paths, capture_output=True, text=True)
        if add.returncode == 0:
            done = subprocess.run(["git", "-C", ROOT, "commit", "-q", "-m", message, "--"] + paths,
                                  capture_output=True, text=True)
            if done.returncode == 0:
                return
            err = done.stderr
        else:
            err = add.stderr
        if "index.lock" not in err:
            print("  git commit failed: %s" % err.strip(), flush=True)
            return
        time.sleep(2)
    print("  git commit gave up: the index stayed locked", flush=True)


def wall_summary(rows):
    """Total and per-run range of the finished runs' wall times, e.g. '41.2 min for 9 runs (54-410 s each)'."""
    walls = [w for r in rows for w in r.get("wall_s_each", [])]
    if not walls:
        return "none finished yet"
    return "%.1f min for %d runs (%.0f-%.0f s each; the rows give the mean over seeds)" % (
        sum(walls) / 60, len(walls), min(walls), max(walls))


def max_grad_norm(metrics_path):
    """The largest gradient norm (before clipping) logged in a run's metrics.jsonl: a
    norm in the thousands or more means exploding gradients, whatever the loss says."""
    if not os.path.exists(metrics_path):
        return None
    best = None
    with open(metrics_path) as f:
        for line in f:
            g = json.loads(line).get("grad_norm")
            if isinstance(g, (int, float)) and (best is None or g > best):
                best = g
    return best


def mean_std(xs):
    if not xs:
        return None, None
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def pm(m, s, n, diverged=0):
    if m is None:
        return "diverged" if diverged else "pending"
    return "%.3f ± %s" % (m, fmt_std(s)) if n > 1 else "%.3f" % m


def fmt_std(s):
    """A standard deviation with 3 decimals, or 4 when it is below 0.001 (so 0.0004 does
    not print as 0.000)."""
    return "%.4f" % s if s < 0.001 else "%.3f" % s


def svg_scatter(path, title, series, xlabel, ylabel):
    """series: {label: [(x, y), ...]} drawn as lines with markers."""
    pts = [p for s in series.values() for p in s]
    if not pts:
        return
    W, H, L, R, T, B = 720, 440, 70, 170, 40, 55
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    if x1 == x0:
        x1 = x0 + 1
    pad = max(0.02, 0.1 * (y1 - y0))
    y0, y1 = y0 - pad, y1 + pad
    px = lambda x: L + (x - x0) / (x1 - x0) * (W - L - R)
    py = lambda y: H - B - (y - y0) / (y1 - y0) * (H - T - B)
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e"]
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="24" text-anchor="middle" font-size="14">%s</text>' % ((L + W - R) / 2, title),
         '<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' % (L, T, W - L - R, H - T - B)]
    for i in range(6):
        y = y0 + (y1 - y0) * i / 5
        o.append('<text x="%d" y="%.1f" text-anchor="end">%.3f</text>' % (L - 5, py(y) + 4, y))
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (L, W - R, py(y), py(y)))
    for x in sorted(set(p[0] for p in pts)):
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (px(x), H - B + 16, "%dK" % round(x / 1000)))
    o.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % ((L + W - R) / 2, H - 12, xlabel))
    o.append('<text transform="translate(18,%d) rotate(-90)" text-anchor="middle">%s</text>' % ((T + H - B) / 2, ylabel))
    for i, (label, s) in enumerate(sorted(series.items())):
        c = colors[i % len(colors)]
        s = sorted(s)
        o.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"/>' % (" ".join(("M" if j == 0 else "L") + "%.1f,%.1f" % (px(x), py(y)) for j, (x, y) in enumerate(s)), c))
        for x, y in s:
            o.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>' % (px(x), py(y), c))
        o.append('<text x="%d" y="%d" fill="%s">%s</text>' % (W - R + 12, T + 20 + 20 * i, c, label))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def svg_heatmap(path, title, lrs, clips, values, best, diverged=()):
    W, H = 120 + 90 * len(clips), 110 + 50 * len(lrs)
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="22" text-anchor="middle" font-size="14">%s</text>' % (W / 2, title),
         '<text x="%d" y="44" text-anchor="middle">clip</text>' % (110 + 45 * len(clips))]
    for j, c in enumerate(clips):
        o.append('<text x="%d" y="62" text-anchor="middle">%s</text>' % (110 + 90 * j + 45, c))
    for i, lr in enumerate(lrs):
        o.append('<text x="100" y="%d" text-anchor="end">lr %s</text>' % (70 + 50 * i + 30, lr))
        for j, c in enumerate(clips):
            v = values.get((lr, c))
            if v is None and (lr, c) in diverged:
                fill, text = "rgb(255,110,110)", "diverged"
            elif v is None:
                fill, text = "#ddd", "pending"
            else:
                t = max(0.0, min(1.0, (v - best) / 0.5))  # 0 at the best, 1 at best + 0.5 BPC
                fill = "rgb(%d,%d,%d)" % (int(40 + 215 * t), int(160 + 60 * (1 - t)), int(80 + 100 * t))
                text = "%.3f" % v
            o.append('<rect x="%d" y="%d" width="88" height="48" fill="%s"/>' % (110 + 90 * j, 70 + 50 * i, fill))
            o.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (110 + 90 * j + 44, 70 + 50 * i + 29, text))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def plot_curves(binary, table_name, table, runs):
    """results/TABLE-curves.svg: training and validation BPC against steps for the finished
    runs of the first seed (`liegrad plot`); None when there is nothing to draw or the
    table is a grid (its heat maps say more)."""
    if table.get("grid"):
        return None
    first = table["seeds"][0]
    dirs = []
    for run in runs:
        d = os.path.join(ROOT, "results", table_name, run["id"])
        f = os.path.join(d, "result.json")
        if run["seed"] == first and os.path.exists(f):
            with open(f) as fh:
                if not json.load(fh).get("diverged"):
                    dirs.append(d)
    if not dirs:
        return None
    out = os.path.join(ROOT, "results", table_name + "-curves.svg")
    title = "%s: BPC against steps (seed %d)" % (table["title"], first)
    done = subprocess.run([binary, "plot"] + dirs + ["--out", out, "--title", title], capture_output=True, text=True)
    if done.returncode != 0:
        print("  plot failed: %s" % done.stderr.strip(), flush=True)
        return None
    return out


def summarize(table_name, table, runs, binary=None):
    res_root = os.path.join(ROOT, "results")
    rows, pending = {}, []
    for run in runs:
        f = os.path.join(res_root, table_name, run["id"], "result.json")
        key = run["name"] + "".join("-%s=%s" % (k.split(".")[-1], fmt_value(v)) for k, v in run["point"].items())
        rows.setdefault(key, {"name": run["name"], "point": run["point"], "results": [], "ids": []})
        if os.path.exists(f):
            rows[key]["ids"].append(run["id"])
            with open(f) as fh:
                rows[key]["results"].append(json.load(fh))
        else:
            pending.append(run["id"])
    budget = table.get("budget", {})
    summary = {"table": table_name, "title": table["title"], "budget": budget, "seeds": table["seeds"],
               "rows": [], "pending": pending}
    for key, r in rows.items():
        diverged = [x for x in r["results"] if x.get("diverged")]
        res = [x for x in r["results"] if not x.get("diverged")]
        vals = [x["val_bpc"] for x in res]
        tests = [x["test_bpc"] for x in res]
        row = {"run": key, "model": r["name"], "point": r["point"], "n": len(res), "diverged": len(diverged)}
        if diverged and not res:
            row["lr"] = diverged[0]["config"]["train"]["lr"]
            row["parameters"] = diverged[0]["parameters"]
        row["val_bpc_mean"], row["val_bpc_std"] = mean_std(vals)
        row["test_bpc_mean"], row["test_bpc_std"] = mean_std(tests)
        if res:
            row["lr"] = res[0].get("config", {}).get("train", {}).get("lr")
            row["parameters"] = res[0]["parameters"]
            row["tokens_per_s"] = statistics.mean(x["tokens_per_second"] for x in res)
            row["wall_s"] = statistics.mean(x["wall_seconds"] for x in res)
            row["wall_s_each"] = [x["wall_seconds"] for x in res]
            copied = [x["reused_from"] for x in res if x.get("reused_from")]
            if copied:
                row["reused_from"] = copied
        norms = [max_grad_norm(os.path.join(res_root, table_name, rid, "metrics.jsonl")) for rid in r["ids"]]
        norms = [x for x in norms if x is not None]
        if norms:
            row["max_grad_norm"] = max(norms)
            row["steps"] = res[0]["steps"]
            row["tokens_seen"] = res[0]["tokens_seen"]
        paper = PAPER.get((table_name, r["name"]))
        if paper:
            row["paper_val_bpc"], row["paper_test_bpc"] = paper
        summary["rows"].append(row)
    with open(os.path.join(res_root, table_name + ".json"), "w") as f:
        json.dump(summary, f, indent=2)
    # Markdown.
    b = budget
    steps = b.get("train.steps", "per model (equal wall time)")
    lines = ["# %s" % table["title"], "",
             "Budget per run: %s steps of batch %s x %s (%s tokens)%s; seeds %s." % (
                 steps, b.get("train.batch"), b.get("train.seq_len"),
                 ("%d" % (steps * b["train.batch"] * b["train.seq_len"])) if isinstance(steps, int) else "varies",
                 ", a budget of %d s of training-step time each (train.time_budget_s; evaluations not counted)"
                 % table["wall_budget_s"] if "wall_budget_s" in table else "",
                 ", ".join(map(str, table["seeds"]))),
             "Wall time: %s." % wall_summary(summary["rows"]),
             "Produced by `scripts/reproduce.sh %s` from `configs/paper/tables.json`." % table_name, "",
             "| run | params | lr | val BPC | test BPC | paper val | paper test | steps | tokens/s | wall time per run "
             "| max grad norm |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in summary["rows"]:
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            row["run"], row.get("parameters", "—"), "%g" % row["lr"] if row.get("lr") else "—",
            pm(row["val_bpc_mean"], row["val_bpc_std"], row["n"], row["diverged"]),
            pm(row["test_bpc_mean"], row["test_bpc_std"], row["n"], row["diverged"]),
            "%.3f" % row["paper_val_bpc"] if row.get("paper_val_bpc") else "—",
            "%.3f" % row["paper_test_bpc"] if row.get("paper_test_bpc") else "—",
            row.get("steps", "—"), "%.0f" % row["tokens_per_s"] if "tokens_per_s" in row else "—",
            "%.0f s" % row["wall_s"] if "wall_s" in row else "—",
            "%.3g" % row["max_grad_norm"] if "max_grad_norm" in row else "—"))
    copied = ["%s (from %s)" % (row["run"], ", ".join(row["reused_from"])) for row in summary["rows"]
              if row.get("reused_from")]
    if copied:
        lines += ["", "Copied, not trained again, because another table has a finished run with the same config, "
                  "overrides and seed (its wall time and tokens/s are that run's): " + "; ".join(copied) + "."]
    if pending:
        lines += ["", "Pending runs: " + ", ".join(pending)]
    # Table-specific extras.
    if table.get("plot") == "params_vs_test_bpc":
        series = {}
        for row in summary["rows"]:
            if row["test_bpc_mean"] is not None:
                family = row["model"].rsplit("-", 1)[0]
                series.setdefault(family, []).append((row["parameters"], row["test_bpc_mean"]))
        svg_scatter(os.path.join(res_root, table_name + ".svg"), "Tiny Shakespeare: test BPC against parameters",
                    series, "parameters", "test BPC")
        lines += ["", "![test BPC against parameters](%s.svg)" % table_name]
    if table.get("plot") == "heatmap":
        grid = table["grid"]
        for model in sorted(set(r["model"] for r in summary["rows"])):
            vals = {(r["point"]["train.lr"], r["point"]["train.clip"]): r["val_bpc_mean"]
                    for r in summary["rows"] if r["model"] == model and r["val_bpc_mean"] is not None}
            diverged = {(r["point"]["train.lr"], r["point"]["train.clip"])
                        for r in summary["rows"] if r["model"] == model and r["diverged"] and r["n"] == 0}
            if not vals:
                continue
            best = min(vals.values())
            within = sum(1 for v in vals.values() if v <= best + 0.05)
            svg_heatmap(os.path.join(res_root, "%s-%s.svg" % (table_name, model)),
                        "%s: validation BPC" % model, grid["train.lr"], grid["train.clip"], vals, best, diverged)
            lines += ["", "%s: best validation BPC %.3f; %d of %d settings within 0.05 BPC of it." % (
                model, best, within, len(grid["train.lr"]) * len(grid["train.clip"])),
                "![%s heat map](%s-%s.svg)" % (model, table_name, model)]
    if binary and plot_curves(binary, table_name, table, runs):
        lines += ["", "![BPC against steps](%s-curves.svg)" % table_name]
    with open(os.path.join(res_root, table_name + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return [os.path.join(res_root, n) for n in sorted(os.listdir(res_root))
            if n == table_name + ".json" or n == table_name + ".md" or
            (n.startswith(table_name) and n.endswith(".svg"))]


def run_long_table(a, manifest, t, results_root):
    """Trains what is ready of a long table, planning again until nothing new becomes
    ready, then writes its summary. Returns the number of failed runs."""
    failed, attempted = 0, set()
    while True:
        runs, waiting, chosen = long_tables.plan(manifest, t, expand, results_root)
        todo = [r for r in runs if r["id"] not in attempted]
        if a.summarize_only or not todo:
            break
        for run in todo:
            attempted.add(run["id"])
            failed += train(a.binary, t, manifest[t], run, a.dry_run, a.commit, manifest) == "failed"
    for what, why in waiting:
        print("[%s] %s: %s" % (t, what, why), flush=True)
    os.makedirs(results_root, exist_ok=True)
    written = long_tables.summarize(t, manifest[t], runs, waiting, chosen, PAPER, results_root, max_grad_norm)
    print("wrote results/%s.md" % t if written else "%s: no finished runs yet, nothing written" % t)
    if written and a.commit and not a.dry_run:
        git_commit_paths(written, "results: %s table from the finished runs" % t)
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tables", nargs="*")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--summarize-only", action="store_true")
    ap.add_argument("--commit", action="store_true", help="git-commit each finished run's result files")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "liegrad"))
    a = ap.parse_args()
    with open(MANIFEST) as f:
        manifest = json.load(f)
    names = [k for k in manifest if k != "comment"]
    if a.list:
        for n in names:
            t = manifest[n]
            count = long_tables.planned_count(t, expand, n) if long_tables.is_long(t) else len(expand(n, t))
            print("%-20s %3d runs  %s" % (n, count, t["title"]))
        return 0
    unknown = [t for t in a.tables if t not in names]
    if unknown:
        print("reproduce: unknown table(s) %s; known: %s" % (", ".join(unknown), ", ".join(names)), file=sys.stderr)
        return 2
    failed = 0
    results_root = os.path.join(ROOT, "results")
    for t in a.tables or names:
        if long_tables.is_long(manifest[t]):
            failed += run_long_table(a, manifest, t, results_root)
            continue
        runs = expand(t, manifest[t])
        if not a.summarize_only:
            for run in runs:
                failed += train(a.binary, t, manifest[t], run, a.dry_run, a.commit, manifest) == "failed"
        os.makedirs(os.path.join(ROOT, "results"), exist_ok=True)
        written = summarize(t, manifest[t], runs, None if a.dry_run else a.binary)
        print("wrote results/%s.md" % t)
        if a.commit and not a.dry_run:
            git_commit_paths(written, "results: %s table from the finished runs" % t)
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "results_doc.py")], check=True)
    if a.commit and not a.dry_run:
        git_commit_paths([os.path.join(ROOT, "docs", "results.md")], "docs/results.md from the finished runs")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
