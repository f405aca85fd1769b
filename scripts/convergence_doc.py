"""The "At convergence" section of docs/results.md, from the long tables' summaries
(results/TABLE.json written by scripts/long_tables.py): rule-based verdicts on the
paper's claims judged by the best-validation checkpoints, the paper's numbers beside
ours, how the verdicts moved from the 2,000-step tables, and the tables with their
plots. Tables without finished runs say "not yet run". Standard library only."""
import json
import os

import noise

RESULTS_ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results")

SCREEN = "long_dropout_screen"
LONG = ["ts100k_long", "ptb100k_long", "recurrent_long", "ts_reading_long", "ptb_reading_long"]
# The target for the best OSMFormer reading at <= 91K parameters: best validation
# BPC, 3 seeds, at or below the paper's (its Table 1) and below our transformer's.
READING = (("ts_reading_long", "ts100k_long", "Tiny Shakespeare", 2.254),
           ("ptb_reading_long", "ptb100k_long", "Penn Treebank", 1.665))
READING_MODEL = "osmformer-91k-combined"

INTRO = """Here every run trains up to a step cap with early stopping (`train.patience`) and
is judged by its checkpoint with the best validation BPC: "test" below is
`test_bpc_at_best`, the test BPC of that checkpoint, and each family (OSMFormer,
transformer, OSM-RNN, LSTM) is represented by the configuration whose seed 1 had the
best validation BPC, which then gets seeds 2 and 3 (so its three-seed mean can end up
above another configuration's single seed). Learning rates, caps, patience and
the dropout screen are stated in each table's comment in `configs/paper/tables.json`;
the dropout rates come from the screen's best validation BPC, the OSM models' being
update dropout (docs/training.md, "Regularisation"). A run that diverged after its best
checkpoint is judged by that checkpoint (its table says so); one that diverged before
any evaluation has no checkpoint to judge and is left out of the means, and the
comparison says so. A ± after a BPC is the sample standard deviation of its seeds
("seed s.d."); a ± after a difference is the standard error of that difference of means
("SE of the difference", Welch's: the square root of s²/n summed over the two sides).
Where one side of a comparison has a single seed, the standard error takes the other
side's seed standard deviation for both sides (a single run has none of its own), and
says so; with a single seed on both sides there is no standard error. A difference is
beyond noise when it exceeds t_0.975 × SE, the two-sided 95% critical value of Student's
t at the Welch–Satterthwaite degrees of freedom (with 3 seeds a side df is 2 to 4 and
t_0.975 is 4.30 to 2.78; twice the standard error would cover only about 80% at df 2);
each comparison prints its df, t_0.975 and the bound t × SE. A comparison within noise
is a tie, whichever its sign; a verdict is drawn from the signs of the comparisons beyond
noise and names the ties (e.g. "does not hold on X, tie on Y")."""


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


def sd_text(s):
    return "%.4f" % s if s < 0.001 else "%.3f" % s


def fmt(r, key):
    """A row's mean, with '± s seed s.d.' (the sample standard deviation of its seeds)
    when it has several."""
    m, s = r[key + "_mean"], r[key + "_std"]
    if r["n"] > 1:
        return "%.3f ± %s seed s.d." % (m, sd_text(s))
    return "%.3f" % m


def diff_parts(a, b, key):
    """The variance parts (noise.welch) of a's mean minus b's; None with one seed on each
    side. A side with one seed is taken to spread as the other side's seeds do (a single
    run has none of its own): its part is s^2 / 1 with the other side's n - 1 df, so
    SE = s·sqrt(1 + 1/n)."""
    pa, pb = noise.parts(a, key), noise.parts(b, key)
    if pa is None and pb is not None:
        pa = [(pb[0][0] * b["n"], pb[0][1])]
    elif pb is None and pa is not None:
        pb = [(pa[0][0] * a["n"], pa[0][1])]
    return None if pa is None else pa + pb


def diff_stats(a, b, key="test_bpc_at_best"):
    """(a's mean minus b's, its standard error, its df); the standard error and df are None
    with one seed on each side. With one seed on one side both parts come from the other
    side's one estimate of the spread, so df is that side's n - 1, not Welch's."""
    d = a[key + "_mean"] - b[key + "_mean"]
    p = diff_parts(a, b, key)
    if p is None:
        return d, None, None
    se, df = noise.welch(p)
    if (a["n"] == 1 or b["n"] == 1) and df is not None:
        df = max(a["n"], b["n"]) - 1
    return d, se, df


def compare(a, b, key="test_bpc_at_best"):
    """(a's mean minus b's, its text). With seeds on both sides the text gives the standard
    error of the difference of means; with one seed on one side it gives the standard
    error that side would have if its seeds spread as the other side's do (one seed has
    no spread of its own), and says so. Either way with its df, t_0.975 and whether the
    difference is beyond noise (noise.judged_text)."""
    d, se, df = diff_stats(a, b, key)
    text = "%+.3f" % d
    if se is None:
        return d, text + " (1 seed each; no standard error)"
    if a["n"] > 1 and b["n"] > 1:
        return d, text + " ± %.3f SE of the difference (%s)" % (se, noise.judged_text(d, se, df))
    seeded = a if a["n"] > 1 else b
    return d, text + (" (1 seed against %d; ± %.3f is the SE of the difference taking the %d seeds' standard "
                      "deviation for both sides; %s)" % (seeded["n"], se, seeded["n"],
                                                         noise.judged_text(d, se, df).replace("Welch df", "df")))


def resolved(a, b, key="test_bpc_at_best"):
    """Whether a's mean differs from b's by more than t_0.975 × the standard error
    compare() states (False: within noise, a tie); None when there is none (one seed on
    each side)."""
    d, se, df = diff_stats(a, b, key)
    return None if se is None else noise.beyond(d, se, df)


def named(label, model):
    """'OSMFormer osmformer-linear', but 'transformer' where the model is named as its family."""
    return label if model == label.lower() else "%s %s" % (label, model)


def describe(r):
    """A row's configuration and test BPC at its best checkpoint, for the claims' lines."""
    paper = " (paper %.3f)" % r["paper_test_bpc"] if r.get("paper_test_bpc") else ""
    lost = r.get("diverged_unjudged", 0)
    return "(lr %g, dropout %g, best step %s, %d seed%s%s) test %s%s" % (
        r["lr"], r["dropout"], "/".join(map(str, r["best_step"])), r["n"], "s" if r["n"] > 1 else "",
        "; %d more diverged before any evaluation, not judged" % lost if lost else "",
        fmt(r, "test_bpc_at_best"), paper)


def partial_evidence(label, sides):
    """One comparison's line while a side has no finished run: what the other side has so far."""
    done = ["%s %s" % (named(name, r["model"]), describe(r)) for name, r in sides if r]
    missing = [name for name, r in sides if not r]
    if not done:
        return "%s: not yet run." % label
    return "%s: %s; %s not yet run." % (label, "; ".join(done), " and ".join(missing))


def and_list(words):
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def verdict(parts, empty="not yet run", on="on"):
    """parts: per comparison (label, whether the claim's side has the lower mean, whether
    the difference is beyond noise: True, False for within it, None for no standard
    error). A comparison within noise is a tie, whatever its sign; the others count by
    their sign: "holds" / "does not hold" when they agree, "mixed: holds on X, does not
    hold on Y" when not, and the ties named after them ("does not hold on X, tie on Y";
    "tie on X and Y" when every comparison is one). A comparison without a standard error
    (one seed each side) counts by its sign and is named so. ON is the preposition before
    the labels ("on" datasets, "at" sizes)."""
    if not parts:
        return empty
    if len(parts) == 1:
        _, holds, b = parts[0]
        if b is False:
            return "tie (its difference is within noise)"
        return ("holds" if holds else "does not hold") + (
            " (its difference is beyond noise)" if b else " (one seed on each side: no standard error, judged by "
                                                          "the sign)")
    ties = [label for label, _, b in parts if b is False]
    held = [label for label, f, b in parts if b is not False and f]
    failed = [label for label, f, b in parts if b is not False and not f]
    unresolved = [label for label, _, b in parts if b is None]
    if held and failed:
        v = "mixed: holds %s %s, does not hold %s %s" % (on, and_list(held), on, and_list(failed))
    elif held or failed:
        v = ("holds" if held else "does not hold") + (" %s %s" % (on, and_list(held or failed)) if ties else "")
    else:
        v = ""
    if ties:
        v += "%stie %s %s" % (", " if v else "", on, and_list(ties))
    if unresolved:
        v += " (%s %s: one seed on each side, no standard error, judged by the sign)" % (on, and_list(unresolved))
    elif not ties:
        v += " (%s beyond noise)" % ("both differences" if len(parts) == 2 else "all %d differences" % len(parts))
    return v


def verdict_head(v):
    """A verdict without its parenthesis, for comparing two verdicts."""
    return v.split(" (")[0]


def claim_osmformer(tables):
    """The claim is about both datasets and each family's final configuration: until every
    part is in, the evidence so far is shown and the verdict is pending, not drawn from a part."""
    ev, parts, complete = [], [], True
    for t, label in (("ts100k_long", "Tiny Shakespeare"), ("ptb100k_long", "Penn Treebank")):
        s = tables.get(t)
        (o, o_final), (tr, t_final) = family_row(s, "osmformer"), family_row(s, "transformer")
        if not (o and tr):
            ev.append(partial_evidence(label, (("OSMFormer", o), ("transformer", tr))))
            complete = False
            continue
        d, txt = compare(o, tr)
        _, txtv = compare(o, tr, "best_val_bpc")
        parts.append((label, d < 0, resolved(o, tr)))
        complete = complete and o_final and t_final
        ev.append("%s: %s %s against %s %s; difference %s; validation difference %s.%s" % (
            label, named("OSMFormer", o["model"]), describe(o), named("transformer", tr["model"]), describe(tr), txt,
            txtv, "" if o_final and t_final else
            " Provisional: a family's configuration or its seeds 2 and 3 are not final yet."))
    if parts and not complete:
        return "pending (partial evidence below; no verdict until both datasets' rows are final)", ev
    return verdict(parts), ev


def val_curve(path):
    """{step: validation BPC} from a run's metrics.jsonl ({} when it is missing)."""
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    rec = json.loads(line)
                    if "val_bpc" in rec:
                        out[int(rec["step"])] = rec["val_bpc"]
    return out


def reading_progress(results_root, table, base, label, every=2500):
    """A line per parked (unfinished) run of TABLE (results/parked/TABLE/RUN, the state an
    interrupted sitting left it in): its validation BPC at equal steps against the mean of the base
    table's osmformer-linear seeds (the relative reading at ~100K), every EVERY steps and
    at its last evaluation. [] when no run of TABLE is parked."""
    parked = os.path.join(results_root, "parked", table)
    if not os.path.isdir(parked):
        return []
    bases = [val_curve(os.path.join(results_root, base, d, "metrics.jsonl"))
             for d in sorted(os.listdir(os.path.join(results_root, base)))
             if d.startswith("osmformer-linear-s")] if os.path.isdir(os.path.join(results_root, base)) else []
    bases = [b for b in bases if b]
    out = []
    for run in sorted(os.listdir(parked)):
        mine = val_curve(os.path.join(parked, run, "metrics.jsonl"))
        common = sorted(k for k in mine if bases and all(k in b for b in bases))
        if not common:
            continue
        shown = [k for k in common if k % every == 0]
        if common[-1] not in shown:
            shown.append(common[-1])
        pairs = []
        for k in shown:
            ref = sum(b[k] for b in bases) / len(bases)
            pairs.append("%s: %.3f against %.3f (%+.3f)" % ("{:,}".format(k), mine[k], ref, mine[k] - ref))
        out.append("%s, in progress: %s is parked, last evaluated at step %s (results/parked/%s/%s); validation BPC at equal steps "
                   "against the relative reading (%s osmformer-linear, mean of its %d seeds): %s." % (
                       label, run, "{:,}".format(max(mine)), table, run, base, len(bases), "; ".join(pairs)))
    return out


def claim_osmformer_reading(tables, results_root=RESULTS_ROOT):
    """Claim 1 again with the best reading at <= 91K parameters (osmformer_fidelity's
    ranking: combined grounding, SO(15), 7 layers, one shared Gamma per layer) against the ~100K tables' transformer
    family, which is not run again. Besides the verdict each dataset states the
    target: best validation BPC at or below the paper's and below our transformer's."""
    ev, parts, complete, running = [], [], True, False
    for table, base, label, paper_val in READING:
        o = model_row(tables.get(table), READING_MODEL)
        tr, t_final = family_row(tables.get(base), "transformer")
        if not (o and tr):
            ev.append(partial_evidence(label, (("OSMFormer", o), ("transformer", tr))))
            progress = reading_progress(results_root, table, base, label)
            ev += progress
            running = running or bool(progress)
            complete = False
            continue
        final = t_final and o["n"] >= 3 and not o.get("pending")
        complete = complete and final
        d, txt = compare(o, tr)
        dv, txtv = compare(o, tr, "best_val_bpc")
        parts.append((label, d < 0, resolved(o, tr)))
        val = o["best_val_bpc_mean"]
        ev.append("%s: OSMFormer %s %s (%s parameters) against transformer %s; difference %s; validation difference "
                  "%s. Target: best validation %.3f, %+.3f against the paper's %.3f and %+.3f against our "
                  "transformer's %.3f.%s" % (
                      label, o["model"], describe(o), "{:,}".format(o["parameters"]) if o.get("parameters") else "?",
                      describe(tr), txt, txtv, val, val - paper_val, paper_val, dv, tr["best_val_bpc_mean"],
                      "" if final else " Provisional: seeds still pending."))
        rel, _ = family_row(tables.get(base), "osmformer")
        if rel:
            _, txt_rel = compare(o, rel, "best_val_bpc")
            ev.append("%s, against the relative reading at ~100K (%s %s): validation difference %s." % (
                label, named("OSMFormer", rel["model"]), describe(rel), txt_rel))
        if not final:
            ev += reading_progress(results_root, table, base, label)
    if parts and not complete:
        return "pending (partial evidence below; no verdict until both datasets' 3 seeds are in)", ev
    if not parts and running:
        return "in progress (no seed has finished; the runs so far below)", ev
    return verdict(parts), ev


def claim_rnn(tables):
    """The paper's OSM-RNN against the LSTM. Final once the OSM-RNN family's configuration
    is chosen (the paper's model could be the one that gets seeds 2 and 3) and neither
    row has seeds still pending; until then the evidence is shown and the verdict pending."""
    s = tables.get("recurrent_long")
    o, l = model_row(s, "osm-rnn-linear"), model_row(s, "lstm")
    if not (o and l):
        return "not yet run", [partial_evidence("recurrent_long", (("OSM-RNN", o), ("LSTM", l)))]
    final = model_final(s, o) and model_final(s, l)
    d, txt = compare(o, l)
    ev = ["OSM-RNN, linear mixing (the paper's) %s %s against LSTM %s; difference %s.%s" % (
        o["model"], describe(o), describe(l), txt, "" if final else
        " Provisional: the OSM-RNN's configuration or a row's seeds 2 and 3 are not final yet.")]
    b = model_row(s, "osm-rnn-bounded")
    if b:
        ev.append("For context, not judged: OSM-RNN with bounded mixing (liegrad's) %s %s; difference to the LSTM %s." % (
            b["model"], describe(b), compare(b, l)[1]))
    if not final:
        return "pending (partial evidence below; no verdict until the rows are final)", ev
    return verdict([("recurrent_long", d < 0, resolved(o, l))]), ev


def model_final(summary, r):
    """A model's row is final once its family's configuration is chosen (the model could
    be the one that gets seeds 2 and 3) and none of its seeds is pending."""
    return r["family"] in (summary.get("chosen") or {}) and not r.get("pending")


CLAIMS = [
    ("OSMFormer reaches lower BPC than the parameter-matched transformer at ~100K, on both datasets",
     "each family's configuration chosen on seed 1's best validation BPC (with or without dropout); per dataset, a tie "
     "if the difference of mean test BPC at the best checkpoints is within noise (|difference| ≤ t_0.975 × its standard "
     "error, Welch df), else the OSMFormer wins it if its mean is lower; the claim holds on the datasets it wins, does "
     "not hold on those it loses, with the ties named",
     claim_osmformer, 1),
    ("with the best OSMFormer reading at ≤ 91K parameters (combined grounding, SO(15), 7 layers, one shared Γ "
     "per layer; osmformer_fidelity), the OSMFormer reaches lower BPC than the ~100K transformer, on both datasets",
     "as claim 1, the transformer's rows from the ~100K long tables", claim_osmformer_reading, 1),
    ("OSM-RNN reaches lower BPC than the LSTM",
     "the paper's OSM-RNN (linear mixing) against the LSTM, test BPC at the best checkpoint; a tie if the difference "
     "of means is within noise (|difference| ≤ t_0.975 × its standard error, Welch df), else holds if the OSM-RNN's "
     "mean is lower", claim_rnn, 3),
]


# The comparisons the "why" lines explain, as the claims make them: (label, long table,
# 2,000-step table, the two sides as (name, "family" or "model", its key, the 2,000-step
# table's model)). Claim 1 compares each family's chosen configuration, claim 3 two models.
WHY = [("Tiny Shakespeare", "ts100k_long", "ts100k",
        (("OSMFormer", "family", "osmformer", "osmformer-linear"),
         ("transformer", "family", "transformer", "transformer"))),
       ("Penn Treebank", "ptb100k_long", "ptb100k",
        (("OSMFormer", "family", "osmformer", "osmformer-linear"),
         ("transformer", "family", "transformer", "transformer"))),
       ("Recurrent models on Tiny Shakespeare", "recurrent_long", "recurrent",
        (("OSM-RNN", "model", "osm-rnn-linear", "osm-rnn-linear"), ("LSTM", "model", "lstm", "lstm")))]


def model_words(label, model):
    """'OSMFormer (osmformer-linear)', but 'transformer' where the model is named as its family."""
    return label if model == label.lower() else "%s (%s)" % (label, model)


def capitalised(text):
    return text[:1].upper() + text[1:]


def side_row(summary, kind, key):
    """(row, final): a family's chosen configuration, or a model's row."""
    if kind == "family":
        return family_row(summary, key)
    r = model_row(summary, key)
    return r, bool(r) and model_final(summary, r)


def mean_diff_parts(a, b, key):
    """The variance parts (noise.welch) of a's mean minus b's for summary rows with n and
    KEY_mean, KEY_std; None when a side has a single seed (no spread to estimate)."""
    pa, pb = noise.parts(a, key), noise.parts(b, key)
    return None if pa is None or pb is None else pa + pb


def move_bound(se, df):
    """'t_0.975 × SE = 3.18 × 0.009 = 0.029, Welch–Satterthwaite df 3.0': the noise bound of a move."""
    t, b = noise.bound(se, df)
    if t is None:
        return "SE 0, the seeds do not spread"
    return "t_0.975 × SE = %.2f × %.3f = %.3f, Welch–Satterthwaite df %s" % (t, se, b, noise.df_text(df))


def signed(x, down, up):
    """'fell by 0.148' / 'rose by 0.010' style words for a change x (down when x >= 0)."""
    return "%s %.3f" % (down if x >= 0 else up, abs(x))


def gap_words(gap):
    """'0.336 below' when training BPC is below validation by 0.336, '0.010 above' otherwise."""
    return "%.3f %s" % (abs(gap), "below" if gap >= 0 else "above")


def why_reading(moved_val, moved_test, st_val, st_test):
    """Which part carried the move of a comparison, by fixed rules on the moves of the two
    differences (validation and test) from the 2,000-step table to the best checkpoints.
    st_val, st_test: (standard error, Welch–Satterthwaite df) of each move (noise.welch
    over the four rows' parts), or None; a move within t_0.975 × SE is noise."""
    carry = moved_test - moved_val  # the part of the test move that validation did not see
    text = " So the test difference moved by %+.3f and the validation difference by %+.3f" % (moved_test, moved_val)
    if st_val is not None and not noise.beyond(moved_val, *st_val):
        text += " (the validation move within noise: %s)" % move_bound(*st_val)
    if st_test is not None and not noise.beyond(moved_test, *st_test):
        return text + (": the test comparison did not move beyond noise (%s), so the longer budget did not change "
                       "it beyond the seeds' noise." % move_bound(*st_test))
    if abs(carry) > 2 * abs(moved_val):
        return text + (": most of the test move is in how each side's best checkpoint carries from the validation "
                       "split to the test split, not in the validation BPC both are selected on.")
    if abs(moved_val) > 2 * abs(carry):
        return text + (": most of the test move is the validation move, so it is in how far each side got with the "
                       "longer budget, and the test split follows the validation split.")
    return text + ": both parts count, the longer budget's effect on validation and how each side carries it to test."


def config_notes(pairs):
    """Differences in learning rate or dropout between a long row and its 2,000-step row."""
    notes = []
    for name, long_row, short_row in pairs:
        if long_row.get("dropout"):
            notes.append("the %s's long configuration has dropout %g, its 2,000-step run none" % (
                name, long_row["dropout"]))
        if short_row.get("lr") is not None and long_row.get("lr") != short_row.get("lr"):
            notes.append("the %s's learning rate is %g in the long run and %g in the 2,000-step run" % (
                name, long_row["lr"], short_row["lr"]))
    return notes


def why(tables, short_tables):
    """How each comparison moved from the 2,000-step table's runs to the long runs' best
    checkpoints, split into what the models fit on training text, on validation and on
    test, with the rule-based reading of which part carried the change (why_reading).
    Every number comes from the summaries; the moves are computed from the printed,
    rounded differences so that the text adds up."""
    lines = []
    for label, long_name, short_name, sides in WHY:
        (na, kind_a, ka, sa), (nb, kind_b, kb, sb) = sides
        (a, fa), (b, fb) = side_row(tables.get(long_name), kind_a, ka), side_row(tables.get(long_name), kind_b, kb)
        rows = [r for r in (short_tables.get(short_name) or {}).get("rows", []) if r.get("n")]
        short = {m: [r for r in rows if r["model"] == m] for m in (sa, sb)}
        if not (a and b) or any(len(v) != 1 for v in short.values()):
            continue  # a side not run yet, or no single 2,000-step row to compare with
        a0, b0 = short[sa][0], short[sb][0]
        dv0, dt0 = (round(a0[k] - b0[k], 3) for k in ("val_bpc_mean", "test_bpc_mean"))
        dv, dt = (round(a[k] - b[k], 3) for k in ("best_val_bpc_mean", "test_bpc_at_best_mean"))
        text = ("%s, %s against %s%s: the %s's test BPC minus the %s's was %+.3f in the 2,000-step table "
                "and is %+.3f at the long runs' best checkpoints; on validation %+.3f and %+.3f. From the 2,000-step "
                "runs to the best checkpoints the %s's validation BPC %s and the %s's %s." % (
                    label, model_words(na, a["model"]), model_words(nb, b["model"]),
                    "" if fa and fb else " (provisional)", na, nb, dt0, dt,
                    dv0, dv, na, signed(a0["val_bpc_mean"] - a["best_val_bpc_mean"], "fell by", "rose by"), nb,
                    signed(b0["val_bpc_mean"] - b["best_val_bpc_mean"], "fell by", "rose by")))
        notes = config_notes([(na, a, a0), (nb, b, b0)])
        if notes:
            text += " (%s, so the moves include that as well as the budget.)" % capitalised("; ".join(notes))
        if a.get("train_bpc_at_best_mean") is not None and b.get("train_bpc_at_best_mean") is not None:
            ga = a["best_val_bpc_mean"] - a["train_bpc_at_best_mean"]
            gb = b["best_val_bpc_mean"] - b["train_bpc_at_best_mean"]
            text += (" At the best checkpoint the training BPC (the mean of the batches logged in the evaluation "
                     "interval ending there) is %s validation for the %s and %s for the %s%s." % (
                         gap_words(ga), na, gap_words(gb), nb,
                         "; dropout is active in training, which raises the training BPC of a side with dropout, "
                         "so its gap is not comparable with one without" if a["dropout"] or b["dropout"] else ""))
        oa = a["test_bpc_at_best_mean"] - a["best_val_bpc_mean"]
        ob = b["test_bpc_at_best_mean"] - b["best_val_bpc_mean"]
        text += " Test BPC sits %+.3f from validation for the %s and %+.3f for the %s." % (oa, na, ob, nb)
        st_val = noise.welch(mean_diff_parts(a, b, "best_val_bpc"), mean_diff_parts(a0, b0, "val_bpc"))
        st_test = noise.welch(mean_diff_parts(a, b, "test_bpc_at_best"), mean_diff_parts(a0, b0, "test_bpc"))
        text += why_reading(round(dv - dv0, 3), round(dt - dt0, 3), st_val, st_test)
        lines.append("- " + text)
    return lines


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


LATE = 0.9  # a best checkpoint at or after this fraction of the step cap is "late"


def cap_notes(tables):
    """Every run (every seed of every row) whose best checkpoint is in the last 10% of its
    step cap (best step >= 0.9 × cap): still improving, or close to it, when the cap
    stopped it, so not converged, and a higher cap could change it. A run that ended
    before the cap (diverged) is named with the step it ended at."""
    notes = []
    for name in LONG:
        s = tables.get(name)
        cap = (s or {}).get("budget", {}).get("train.steps")
        if not cap:
            continue
        for r in rows_done(s):
            late = [(i, b, n) for i, (b, n) in enumerate(zip(r["best_step"], r["steps"])) if b >= LATE * cap]
            if late:
                notes.append("- %s, %s: best checkpoint at step %s of the %d-step cap (%s)." % (
                    name, r["model"], "/".join(str(b) for _, b, _ in late), cap, ", ".join(
                        "seed %d%s" % (r["seeds"][i], "" if n >= cap else ", which ended at step %d" % n)
                        for i, _, n in late)))
    return notes


def section(tables, short_verdicts, table_md, short_tables=None):
    """tables: {name: summary or None} (the long tables and the screen); short_verdicts:
    {claim number: verdict at 2,000 steps}; table_md(name): a table's markdown or None;
    short_tables: {name: summary} of the 2,000-step tables (ts100k, ptb100k, recurrent)."""
    out = ["## At convergence", "", INTRO, ""]
    changes, seen = [], set()
    for claim, rule, fn, number in CLAIMS:
        v, ev = fn(tables)
        out.append("- **Claim %d at convergence%s: %s: %s.**" % (number, ", again" if number in seen else "", claim, v))
        out.append("  Rule: %s." % rule)
        out += ["  - %s" % e for e in ev]
        first = number not in seen  # the 2,000-step verdict is compared with the claim's first reading only
        seen.add(number)
        if first and v != "not yet run" and not v.startswith("pending") and number in short_verdicts:
            changes.append("- Claim %d: at 2,000 steps %s; at convergence %s%s." % (
                number, verdict_head(short_verdicts[number]), verdict_head(v),
                " (unchanged)" if verdict_head(short_verdicts[number]) == verdict_head(v) else ""))
    out.append("")
    capped = cap_notes(tables)
    if capped:
        out += ["Best checkpoint in the last 10%% of the step cap (best step ≥ %g × cap; every seed of every row "
                "checked), where the cosine schedule ends: still improving, or close to it, when the cap stopped "
                "them, so a higher cap could lower their BPC:" % LATE, ""] + capped + [""]
    extra = dropout_effects(tables)
    if extra:
        out += ["Dropout, not a claim of the paper:", ""] + extra + [""]
    if changes:
        out += ["What changed from the 2,000-step verdicts above:", ""] + changes + [""]
    explained = why(tables, short_tables or {})
    if explained:
        out += ["Why the comparisons moved from the 2,000-step tables (each side's numbers from its summary in "
                "results/; the training BPC is the mean of the logged training batches, so it is measured on the "
                "text being fitted):", ""] + explained + [""]
    for name in [SCREEN] + LONG:
        md = table_md(name) if rows_done(tables.get(name)) else None
        if md is None:
            out += ["### %s" % name, "", "Not yet run: `bash scripts/reproduce.sh %s`." % name, ""]
        else:
            out += [md, ""]
    return out
