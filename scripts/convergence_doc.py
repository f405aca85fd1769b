"""The "At convergence" section of docs/results.md, from the long tables' summaries
(results/TABLE.json written by scripts/long_tables.py): rule-based verdicts on the
paper's claims judged by the best-validation checkpoints, the paper's numbers beside
ours, how the verdicts moved from the 2,000-step tables, and the tables with their
plots. Tables without finished runs say "not yet run". Standard library only."""
import math

SCREEN = "long_dropout_screen"
LONG = ["ts100k_long", "ptb100k_long", "recurrent_long"]

INTRO = """Here every run trains up to a step cap with early stopping (`train.patience`) and
is judged by its checkpoint with the best validation BPC: "test" below is
`test_bpc_at_best`, the test BPC of that checkpoint, and each family (OSMFormer,
transformer, OSM-RNN, LSTM) is represented by its configuration with the best
validation BPC, which is the one with three seeds. Learning rates, caps, patience and
the dropout screen are stated in each table's comment in `configs/paper/tables.json`;
the dropout rates come from the screen's best validation BPC, the OSM models' being
update dropout (docs/training.md, "Regularisation"). A run that diverged after its best
checkpoint is judged by that checkpoint (its table says so)."""


def rows_done(summary):
    return [r for r in (summary or {}).get("rows", []) if r.get("n", 0) > 0]


def family_row(summary, family):
    """The family's configuration chosen on validation: the table's choice once the extra
    seeds are assigned, else the finished row with the lowest best-checkpoint validation BPC.
    Final only when the choice is made and none of its seeds is still pending."""
    mine = [r for r in rows_done(summary) if r["family"] == family]
    if not mine:
        return None, False
    chosen = summary.get("chosen", {}).get(family)
    for r in mine:
        if r["model"] == chosen:
            return r, not r.get("pending")
    return min(mine, key=lambda r: r["best_val_bpc_mean"]), False


def model_row(summary, name):
    return next((r for r in rows_done(summary) if r["model"] == name), None)


def fmt(r, key):
    m, s = r[key + "_mean"], r[key + "_std"]
    if r["n"] > 1:
        return "%.3f ± %s" % (m, "%.4f" % s if s < 0.001 else "%.3f" % s)
    return "%.3f" % m


def compare(a, b, key="test_bpc_at_best"):
    d = a[key + "_mean"] - b[key + "_mean"]
    text = "%+.3f" % d
    if a["n"] > 1 and b["n"] > 1:
        se = math.sqrt(a[key + "_std"] ** 2 / a["n"] + b[key + "_std"] ** 2 / b["n"])
        text += " ± %.3f (standard error; %s)" % (se, "more than 2 standard errors" if abs(d) > 2 * se
                                                  else "within 2 standard errors")
    return d, text


def describe(r):
    paper = " (paper %.3f)" % r["paper_test_bpc"] if r.get("paper_test_bpc") else ""
    return "%s (lr %g, dropout %g, best step %s, %d seed%s) test %s%s" % (
        r["model"], r["lr"], r["dropout"], "/".join(map(str, r["best_step"])), r["n"], "s" if r["n"] > 1 else "",
        fmt(r, "test_bpc_at_best"), paper)


def partial_evidence(label, sides):
    """One comparison's line while a side has no finished run: what the other side has so far."""
    done = ["%s %s" % (name, describe(r)) for name, r in sides if r]
    missing = [name for name, r in sides if not r]
    if not done:
        return "%s: not yet run." % label
    return "%s: %s; %s not yet run." % (label, "; ".join(done), " and ".join(missing))


def verdict(flags):
    if not flags:
        return "not yet run"
    return "holds" if all(flags) else "does not hold" if not any(flags) else "mixed"


def claim_osmformer(tables):
    """The claim is about both datasets and each family's final configuration: until every
    part is in, the evidence so far is shown and the verdict is pending, not drawn from a part."""
    ev, flags, complete = [], [], True
    for t, label in (("ts100k_long", "Tiny Shakespeare"), ("ptb100k_long", "Penn Treebank")):
        s = tables.get(t)
        (o, o_final), (tr, t_final) = family_row(s, "osmformer"), family_row(s, "transformer")
        if not (o and tr):
            ev.append(partial_evidence(label, (("OSMFormer", o), ("transformer", tr))))
            complete = False
            continue
        d, txt = compare(o, tr)
        _, txtv = compare(o, tr, "best_val_bpc")
        flags.append(d < 0)
        complete = complete and o_final and t_final
        ev.append("%s: OSMFormer %s against transformer %s; difference %s; validation difference %s%s." % (
            label, describe(o), describe(tr), txt, txtv,
            "" if o_final and t_final else " (provisional: a family's configuration or its seeds 2 and 3 are not final yet)"))
    if flags and not complete:
        return "pending (partial evidence below; no verdict until both datasets' rows are final)", ev
    return verdict(flags), ev


def claim_rnn(tables):
    s = tables.get("recurrent_long")
    o, l = model_row(s, "osm-rnn-linear"), model_row(s, "lstm")
    if not (o and l):
        return "not yet run", [partial_evidence("recurrent_long", (("OSM-RNN", o), ("LSTM", l)))]
    d, txt = compare(o, l)
    ev = ["OSM-RNN, linear mixing (the paper's) %s against LSTM %s; difference %s." % (describe(o), describe(l), txt)]
    b = model_row(s, "osm-rnn-bounded")
    if b:
        ev.append("For context, not judged: OSM-RNN with bounded mixing (liegrad's) %s; difference to the LSTM %s." % (
            describe(b), compare(b, l)[1]))
    return verdict([d < 0]), ev


CLAIMS = [
    ("OSMFormer reaches lower BPC than the parameter-matched transformer at ~100K, on both datasets",
     "each family's configuration with the best validation BPC (with or without dropout); holds if the OSMFormer's "
     "mean test BPC at its best checkpoint is lower on both datasets, does not hold if on neither, mixed otherwise",
     claim_osmformer, 1),
    ("OSM-RNN reaches lower BPC than the LSTM",
     "the paper's OSM-RNN (linear mixing) against the LSTM, test BPC at the best checkpoint; holds if the OSM-RNN's "
     "mean is lower", claim_rnn, 3),
]


def dropout_effects(tables):
    lines = []
    for t in ("ts100k_long", "ptb100k_long"):
        for base in ("osmformer-linear", "transformer"):
            a, b = model_row(tables.get(t), base + "-dropout"), model_row(tables.get(t), base)
            if a and b:
                lines.append("- %s, %s: dropout %g changes the best validation BPC by %s and the test BPC at the best "
                             "checkpoint by %s; best steps %s with dropout, %s without." % (
                                 t, base, a["dropout"], compare(a, b, "best_val_bpc")[1],
                                 compare(a, b)[1], "/".join(map(str, a["best_step"])),
                                 "/".join(map(str, b["best_step"]))))
    s = tables.get(SCREEN)
    for model in ("osmformer-linear", "transformer"):
        mine = [r for r in rows_done(s) if r["model"] == model]
        if mine:
            best = min(mine, key=lambda r: r["best_val_bpc_mean"])
            lines.append("- Dropout screen, %s: best validation BPC %s; the long tables use dropout %g." % (
                model, ", ".join("%g: %.3f" % (r["dropout"], r["best_val_bpc_mean"]) for r in mine),
                best["dropout"]))
    return lines


def cap_notes(tables):
    """The runs whose best checkpoint is one of the last two evaluations before the step
    cap: still improving when stopped, so not converged, and a higher cap could change them."""
    notes = []
    for name in LONG:
        s = tables.get(name)
        budget = (s or {}).get("budget", {})
        cap, every = budget.get("train.steps"), budget.get("train.eval_interval")
        if not (cap and every):
            continue
        for r in rows_done(s):
            late = [(i, b) for i, (b, n) in enumerate(zip(r["best_step"], r["steps"])) if n >= cap and b >= cap - every]
            if late:
                notes.append("- %s, %s: best checkpoint at step %s of the %d-step cap (%s)." % (
                    name, r["model"], "/".join(str(b) for _, b in late), cap,
                    ", ".join("seed %d" % r["seeds"][i] for i, _ in late)))
    return notes


def section(tables, short_verdicts, table_md):
    """tables: {name: summary or None} (the long tables and the screen); short_verdicts:
    {claim number: verdict at 2,000 steps}; table_md(name): a table's markdown or None."""
    out = ["## At convergence", "", INTRO, ""]
    changes = []
    for claim, rule, fn, number in CLAIMS:
        v, ev = fn(tables)
        out.append("- **Claim %d at convergence: %s: %s.**" % (number, claim, v))
        out.append("  Rule: %s." % rule)
        out += ["  - %s" % e for e in ev]
        if v != "not yet run" and not v.startswith("pending") and number in short_verdicts:
            changes.append("- Claim %d: %s at 2,000 steps, %s at convergence%s." % (
                number, short_verdicts[number], v,
                " (unchanged)" if short_verdicts[number].split(" (")[0] == v else ""))
    out.append("")
    capped = cap_notes(tables)
    if capped:
        out += ["Best checkpoint at one of the last two evaluations before the step cap, where the cosine schedule ends: still improving when stopped, so a higher cap could lower their BPC:", ""] + capped + [""]
    extra = dropout_effects(tables)
    if extra:
        out += ["Dropout, not a claim of the paper:", ""] + extra + [""]
    if changes:
        out += ["What changed from the 2,000-step verdicts above:", ""] + changes + [""]
    for name in [SCREEN] + LONG:
        md = table_md(name) if rows_done(tables.get(name)) else None
        if md is None:
            out += ["### %s" % name, "", "Not yet run: `bash scripts/reproduce.sh %s`." % name, ""]
        else:
            out += [md, ""]
    return out
