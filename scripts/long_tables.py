"""The long tables of configs/paper/tables.json (those with "select": "best_val"): runs
trained to convergence under a step cap with early stopping (train.patience), each
judged by its best-validation checkpoint (result.json: best_val_bpc, test_bpc_at_best).

Two choices in these tables are made from finished runs by fixed rules, never by hand:

- "set_from" on a run takes a value from a finished screen table:
      "set_from": {"model.dropout": {"table": "long_dropout_screen", "run": "transformer"}}
  is the grid value of that screen run with the lowest validation BPC of its best
  checkpoint. Until every grid point of it is finished the run waits.
- "best_seeds" on a table adds those seeds to the best configuration of each "family"
  of runs (lowest mean best-checkpoint validation BPC over the table's own seeds), once
  every configuration of the family has finished them.

A run that diverged (non-finite loss) after an evaluation is judged by its best
checkpoint, which scripts/reproduce.py evaluates and records beside "diverged": true.

plan() returns the runs that can be trained now and those waiting (with the reason);
summarize() writes results/TABLE.{json,md} and the convergence plot. Used by
scripts/reproduce.py; standard library only.
"""
import json
import os
import statistics

import convergence_plot

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_long(table):
    return table.get("select") == "best_val"


def load_result(results_root, table_name, run_id):
    f = os.path.join(results_root, table_name, run_id, "result.json")
    if not os.path.exists(f):
        return None
    with open(f) as fh:
        return json.load(fh)


def judged(result):
    """Whether a run has a best checkpoint to judge: every finished run, and a diverged one
    whose best checkpoint was evaluated (reproduce.best_checkpoint)."""
    return not result.get("diverged") or result.get("test_bpc_at_best") is not None


def selection_bpc(result):
    """The validation BPC a run is selected by: its best checkpoint's (the final one's for
    runs older than early stopping, whose best_val_bpc was that of the interim evaluations)."""
    v = result.get("best_val_bpc")
    if isinstance(v, (int, float)):
        return v
    if "val_bpc" in result:
        return result["val_bpc"]
    if "best_val_loss" in result:
        return result["best_val_loss"]  # a group word run (kind "words"): its best validation loss
    return result.get("best_val_angle_deg")  # a rotation run (kind "rotations"): its best validation angle


def spec(table, name):
    return next(r for r in table["runs"] if r["name"] == name)


def resolve_set_from(manifest, expand, results_root, set_from):
    """({key: value}, None) from finished screen runs, or (None, reason)."""
    values = {}
    for key, src in set_from.items():
        screen = manifest.get(src["table"])
        if screen is None:
            return None, "no table %s" % src["table"]
        runs = [r for r in expand(src["table"], screen) if r["name"] == src["run"]]
        results = [(r, load_result(results_root, src["table"], r["id"])) for r in runs]
        done = [(r, x) for r, x in results if x is not None]
        if len(done) < len(runs):
            return None, "waits for %s/%s (%d of %d runs finished)" % (src["table"], src["run"], len(done), len(runs))
        scored = {}
        for r, x in done:
            if judged(x):
                value = r["point"].get(key, r["sets"].get(key))
                scored.setdefault(json.dumps(value), []).append(selection_bpc(x))
        if not scored:
            return None, "every %s/%s run diverged" % (src["table"], src["run"])
        best = min(scored, key=lambda v: statistics.mean(scored[v]))
        values[key] = json.loads(best)
    return values, None


def with_seed(run, seed):
    r = dict(run, sets=dict(run["sets"]), seed=seed)
    r["sets"]["train.seed"] = seed
    r["id"] = run["id"][: run["id"].rfind("-s")] + "-s%d" % seed
    return r


def families(table):
    out = {}
    for r in table["runs"]:
        out.setdefault(r.get("family", r["name"]), []).append(r["name"])
    return out


def family_best(table_name, table, ready, waiting_ids, names, results_root):
    """(the seed-1 run of the family's best configuration, None) or (None, reason)."""
    scores = {}
    for name in names:
        mine = [r for r in ready if r["name"] == name and r["seed"] in table["seeds"]]
        if len(mine) < len(table["seeds"]) or any(r["id"] in waiting_ids for r in mine):
            return None, "waits for %s" % name
        results = [load_result(results_root, table_name, r["id"]) for r in mine]
        if any(x is None for x in results):
            return None, "waits for %s (%d of %d seeds finished)" % (
                name, sum(x is not None for x in results), len(results))
        ok = [selection_bpc(x) for x in results if judged(x)]
        if ok:
            scores[name] = (statistics.mean(ok), mine[0])
    if not scores:
        return None, "every configuration diverged"
    return min(scores.values(), key=lambda s: s[0])[1], None


def plan(manifest, table_name, expand, results_root):
    """(runs ready to train or finished, [(what, reason)] waiting, {family: chosen run name})."""
    table = manifest[table_name]
    ready, waiting = [], []
    for run in expand(table_name, table):
        set_from = spec(table, run["name"]).get("set_from")
        if set_from:
            values, why = resolve_set_from(manifest, expand, results_root, set_from)
            if values is None:
                waiting.append((run["id"], why))
                continue
            run["sets"].update(values)
        ready.append(run)
    chosen = {}
    extra = table.get("best_seeds", [])
    if extra:
        waiting_ids = {w for w, _ in waiting}
        for family, names in families(table).items():
            best, why = family_best(table_name, table, ready, waiting_ids, names, results_root)
            if best is None:
                waiting.append(("%s: seeds %s of its best configuration" % (family, ", ".join(map(str, extra))), why))
                continue
            chosen[family] = best["name"]
            ready += [with_seed(best, s) for s in extra]
    return ready, waiting, chosen


def planned_count(table, expand, name):
    return len(expand(name, table)) + len(table.get("best_seeds", [])) * len(families(table))


def mean_std(xs):
    if not xs:
        return None, None
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def pm(m, s, n):
    if m is None:
        return "—"
    if n > 1:
        return "%.3f ± %s" % (m, "%.4f" % s if s < 0.001 else "%.3f" % s)
    return "%.3f" % m



def train_bpc_before(metrics_path, step, window):
    """The mean training BPC logged in (step - window, step]: what the model fitted on its
    training batches just before the checkpoint at `step` (for a run with dropout, with
    dropout active). None when the log has no such entries."""
    if step is None or not os.path.exists(metrics_path):
        return None
    with open(metrics_path) as f:
        logged = [json.loads(line) for line in f if line.strip()]
    near = [j["bpc"] for j in logged if isinstance(j.get("bpc"), (int, float)) and step - window < j["step"] <= step]
    return statistics.mean(near) if near else None


def wall_time_text(walls):
    """'2.5 h for 1 run (9108 s)' or '10.1 h for 6 runs (2234-12259 s each)'."""
    if len(walls) == 1:
        return "%.1f h for 1 run (%.0f s)" % (walls[0] / 3600, walls[0])
    return "%.1f h for %d runs (%.0f-%.0f s each)" % (sum(walls) / 3600, len(walls), min(walls), max(walls))

def summarize(table_name, table, runs, waiting, chosen, paper, results_root, max_grad_norm):
    """Writes results/TABLE.json, TABLE.md and TABLE-convergence.svg once a run has finished;
    returns the paths written."""
    rows = {}
    for run in runs:
        key = run["name"] + "".join("-%s=%s" % (k.split(".")[-1], ("%g" % v) if isinstance(v, float) else v)
                                    for k, v in run["point"].items())
        row = rows.setdefault(key, {"run": key, "model": run["name"], "family": spec(table, run["name"]).get(
            "family", run["name"]), "point": run["point"], "ids": [], "results": [], "pending": []})
        x = load_result(results_root, table_name, run["id"])
        if x is None:
            row["pending"].append(run["id"])
        else:
            row["ids"].append(run["id"])
            row["results"].append(x)
    out_rows = []
    for key, r in rows.items():
        res = [x for x in r["results"] if judged(x)]
        res_ids = [i for i, x in zip(r["ids"], r["results"]) if judged(x)]
        trained = [train_bpc_before(os.path.join(results_root, table_name, i, "metrics.jsonl"), x.get("best_step"),
                                    table["budget"]["train.eval_interval"]) for i, x in zip(res_ids, res)]
        row = {"run": key, "model": r["model"], "family": r["family"], "point": r["point"], "n": len(res),
               "diverged": sum(1 for x in r["results"] if x.get("diverged")),
               # Of those, the runs with no best checkpoint (diverged before any evaluation): not judged.
               "diverged_unjudged": sum(1 for x in r["results"] if not judged(x)),
               "seeds": [x["config"]["train"]["seed"] for x in res], "ids": r["ids"], "pending": r["pending"]}
        # Final-model numbers exist only for runs that did not diverge.
        for name, values in (("best_val_bpc", [selection_bpc(x) for x in res]),
                             ("test_bpc_at_best", [x.get("test_bpc_at_best", x.get("test_bpc")) for x in res]),
                             ("val_bpc", [x["val_bpc"] for x in res if x["val_bpc"] is not None]),
                             ("test_bpc", [x["test_bpc"] for x in res if x["test_bpc"] is not None]),
                             # Only when every seed logged it, so it averages the seeds the other columns do.
                             ("train_bpc_at_best", trained if None not in trained else [])):
            row[name + "_mean"], row[name + "_std"] = mean_std(values)
            row[name + "_n"] = len(values)
        if res:
            cfg = res[0]["config"]
            row["lr"] = cfg["train"]["lr"]
            row["dropout"] = cfg["model"].get("dropout", 0.0)
            row["parameters"] = res[0]["parameters"]
            row["best_step"] = [x.get("best_step") for x in res]
            row["steps"] = [x["steps"] for x in res]
            row["stopped_early"] = sum(1 for x in res if x.get("stopped_early"))
            row["threads"] = sorted({x["config"]["train"].get("threads") for x in res} - {None})
            speeds = [x["tokens_per_second"] for x in res if x.get("tokens_per_second")]
            row["tokens_per_s"] = statistics.mean(speeds) if speeds else None
            row["wall_s"] = statistics.mean(x["wall_seconds"] for x in res)
            row["wall_s_each"] = [x["wall_seconds"] for x in res]
            speed = bench_speed(table, r["model"])
            seen = [x["tokens_seen"] for x in res if x.get("tokens_seen")]
            row["bench_tokens_per_s"] = speed
            row["bench_s"] = statistics.mean(seen) / speed if speed and seen else None
            norms = [max_grad_norm(os.path.join(results_root, table_name, i, "metrics.jsonl")) for i in r["ids"]]
            norms = [g for g in norms if g is not None]
            if norms:
                row["max_grad_norm"] = max(norms)
        spec_paper = spec(table, r["model"]).get("paper")
        if spec_paper and tuple(spec_paper) in paper:
            row["paper_val_bpc"], row["paper_test_bpc"] = paper[tuple(spec_paper)]
        out_rows.append(row)
    if not any(r["n"] or r["diverged"] for r in out_rows):
        return []  # nothing finished: no files, and docs/results.md says "not yet run"
    b = table["budget"]
    summary = {"table": table_name, "title": table["title"], "budget": b, "seeds": table["seeds"],
               "best_seeds": table.get("best_seeds", []), "select": "best_val", "chosen": chosen, "rows": out_rows,
               "pending": [i for r in out_rows for i in r["pending"]],
               "waiting": [{"what": w, "reason": why} for w, why in waiting]}
    with open(os.path.join(results_root, table_name + ".json"), "w") as f:
        json.dump(summary, f, indent=2)
    # Markdown.
    steps = b["train.steps"]
    walls = [w for r in out_rows for w in r.get("wall_s_each", [])]
    threads = sorted({t for r in out_rows for t in r.get("threads", [])})
    lines = ["# %s" % table["title"], "",
             "Budget per run: at most %d steps of batch %d x %d (%d tokens), validation over the whole split every "
             "%d steps, early stop after %d evaluations without a new best (train.patience). Every number is the "
             "checkpoint with the best validation BPC (its step in `best step`), the final model's beside it." % (
                 steps, b["train.batch"], b["train.seq_len"], steps * b["train.batch"] * b["train.seq_len"],
                 b["train.eval_interval"], b["train.patience"]),
             "Seed%s %s for every configuration%s." % ("s" if len(table["seeds"]) > 1 else "",
                                                      ", ".join(map(str, table["seeds"])), (
                 "; %s as well for the configuration of each family whose seed 1 has the best validation BPC (chosen by "
                 "scripts/long_tables.py from the finished runs)" % ", ".join(map(str, table["best_seeds"])))
                 if table.get("best_seeds") else ""),
             "Wall time: %s%s. The runs share a 2-core machine with other work, so their own tokens/s and wall "
             "times measure the load as much as the model; `time at bench speed` is the tokens a run trained "
             "at its model's speed in one benchmark run (2 threads, %s; a common yardstick, not an idle "
             "machine's speed), the time axis of the plot%s." % (
                 wall_time_text(walls) if walls else "none finished yet",
                 "; each run trained on %s thread%s (train.threads)" % (
                     " or ".join(map(str, threads)), "" if threads == [1] else "s") if threads else "", table.get("bench_dir", "no benchmark named"),
                 ("; a dropout row's is its model's speed without dropout" + (
                     ", so for the transformer, whose attention dropout slows it (docs/performance.md, \"Attention "
                     "dropout in the fused kernel\"), its time is a lower bound" if any(r.get("dropout") and r["family"] == "transformer"
                                                               for r in out_rows if r["n"]) else ""))
                 if any(r.get("dropout") for r in out_rows if r["n"]) else ""),
             "Produced by `scripts/reproduce.sh %s` from `configs/paper/tables.json`." % table_name, "",
             "| run | params | lr | dropout | best val BPC | test BPC at best | paper val | paper test | best step "
             "| steps | final val | final test | tokens/s | wall time per run | time at bench speed | max grad norm |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in out_rows:
        n = row["n"]
        if n == 0:
            state = "diverged" if row["diverged"] else "pending"
            lines.append("| %s | — | — | — | %s | %s | — | — | — | — | — | — | — | — | — | — |" % (row["run"], state, state))
            continue
        lines.append("| %s | %d | %g | %g | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f s | %s | %s |" % (
            row["run"] + (" (best of %s)" % row["family"] if chosen.get(row["family"]) == row["model"] else ""),
            row["parameters"], row["lr"], row["dropout"],
            pm(row["best_val_bpc_mean"], row["best_val_bpc_std"], n),
            pm(row["test_bpc_at_best_mean"], row["test_bpc_at_best_std"], n),
            "%.3f" % row["paper_val_bpc"] if row.get("paper_val_bpc") else "—",
            "%.3f" % row["paper_test_bpc"] if row.get("paper_test_bpc") else "—",
            "/".join(str(s) for s in row["best_step"]),
            "/".join(str(s) for s in row["steps"]) + "".join(
                " (%d %s)" % (k, what) for k, what in ((row["stopped_early"], "stopped early"),
                                                      (row["diverged"] - row["diverged_unjudged"],
                                                       "diverged after the best"),
                                                      (row["diverged_unjudged"],
                                                       "diverged before any evaluation, not judged")) if k),
            pm(row["val_bpc_mean"], row["val_bpc_std"], row["val_bpc_n"]),
            pm(row["test_bpc_mean"], row["test_bpc_std"], row["test_bpc_n"]),
            "%.0f" % row["tokens_per_s"] if row["tokens_per_s"] else "—", row["wall_s"],
            "%.0f s" % row["bench_s"] if row.get("bench_s") else "—",
            "%.3g" % row["max_grad_norm"] if "max_grad_norm" in row else "—"))
    if summary["pending"]:
        lines += ["", "Pending runs: " + ", ".join(summary["pending"]) + "."]
    if waiting:
        lines += ["", "Waiting: " + "; ".join("%s (%s)" % (w, why) for w, why in waiting) + "."]
    written = [os.path.join(results_root, table_name + ".json"), os.path.join(results_root, table_name + ".md")]
    svg = os.path.join(results_root, table_name + "-convergence.svg")
    if convergence_plot.plot(svg, table["title"], first_seed_curves(results_root, table_name, table, out_rows)):
        lines += ["", "![validation BPC against tokens and training time](%s-convergence.svg)" % table_name]
        written.append(svg)
    with open(os.path.join(results_root, table_name + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return written


def bench_speed(table, name):
    """The benchmark training speed (tokens/s, 2 threads, batch 32 x 128) of a run's
    model: the median over rounds of `liegrad bench`'s median in the table's "bench_dir"
    (a committed bench/compare.sh run, e.g. results/performance/compare-2026-12-01, whose
    rounds are folded into its compare.json), from the row named by the run's "bench" key
    (OSM models: their trained-weight row). None when the table or run names none, or the
    run or row is missing."""
    key = spec(table, name).get("bench")
    path = os.path.join(ROOT, table.get("bench_dir") or "", "compare.json")
    if not key or not table.get("bench_dir") or not os.path.exists(path):
        return None
    with open(path) as f:
        rounds = json.load(f)["runs"].get(key, {}).get("liegrad", {})
    speeds = [r["tokens_per_s"]["median"] for r in rounds.values()]
    return statistics.median(speeds) if speeds else None


def first_seed_curves(results_root, table_name, table, rows):
    """{row: [(tokens, seconds, val BPC), ...]} from the metrics of each row's first seed.
    The seconds are the tokens at the model's benchmark speed (bench_speed): the runs
    share a 2-core machine with other work, so their own clocks measure the load, not the
    model; without a benchmark for the row they are None and the time panel leaves it out."""
    b = table["budget"]
    per_step = b["train.batch"] * b["train.seq_len"]
    out = {}
    for row in rows:
        if not row["ids"]:
            continue
        run_id = sorted(row["ids"], key=lambda i: int(i.rsplit("-s", 1)[1]))[0]
        path = os.path.join(results_root, table_name, run_id, "metrics.jsonl")
        if not os.path.exists(path):
            continue
        speed = bench_speed(table, row["model"])
        points = []
        with open(path) as f:
            for line in f:
                j = json.loads(line)
                if "val_bpc" in j and "test_bpc" not in j:
                    tokens = j["step"] * per_step
                    points.append((tokens, tokens / speed if speed else None, j["val_bpc"]))
        if points:
            out[row["run"]] = points
    return out
