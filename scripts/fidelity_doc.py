"""The OSMFormer fidelity screen's section of docs/results.md (table osmformer_fidelity,
configs/paper/tables.json): every grounding reading of docs/models.md section 5.1 on
Tiny Shakespeare (runs ts-*) and Penn Treebank (ptb-*), ranked on validation, against
the character n-gram floors of results/ngram_baselines.json and the transformer in
both head layouts. It states which readings break the first reading's cancellation
(the identity-mixing rows against the bigram), which reading is best at the paper's
91K and at ~100K, and which go on to the long protocol.

Used by scripts/results_doc.py; numbers only from results/osmformer_fidelity.json.
"""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "results")
TABLE = "osmformer_fidelity"
DATASETS = (("ts", "Tiny Shakespeare", "tinyshakespeare", 2.254), ("ptb", "Penn Treebank", "ptb_char", 1.665))
PAPER_PARAMS = 91000 * 1.02  # "the paper's 91K": counts up to 2% above it


def load(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def reading(run):
    """(layout, grounding) of a run name like ts-91k-combined or ptb-linear-relative-zero."""
    parts = run.split("-", 1)[1]
    if parts.startswith("transformer"):
        return ("transformer, tied head" if parts.endswith("tied") else "transformer, untied head"), "-"
    layout, _, g = parts.partition("-")
    names = {"identity": "identity mixing", "linear": "linear, ~100K", "91k": "linear, 91K (SO(15), 7 layers, shared)",
             "so15": "linear, 80K (SO(15), 3 layers, separate)"}
    if g == "off-6layers":
        return "linear, ~100K (6 layers)", "off"
    if g == "relative-zero":
        return names[layout], "relative, Γ_gnd = 0 at init"
    return names.get(layout, layout), g


def rows_of(summary, prefix):
    return [r for r in (summary or {}).get("rows", []) if r["run"].startswith(prefix + "-") and r.get("n", 0) > 0]


def section():
    s = load(os.path.join(RESULTS, TABLE + ".json"))
    grams = load(os.path.join(RESULTS, "ngram_baselines.json")) or {}
    out = ["## The OSMFormer's grounding readings", "",
           "The first specification's grounding step undoes the attention step to first order "
           "(docs/models.md section 5.1; `liegrad probe` measures 98% of it undone at initialisation). The "
           "screen `osmformer_fidelity` trains every reading once (seed 1) at the 2,000-step protocol of "
           "tables 1 and 2 (lr 0.01); `relative` is the first specification's reading. Rows are ranked on "
           "validation BPC; Δ is against the `relative` row of the same layout.", ""]
    if not s:
        return out + ["Not run yet: `bash scripts/reproduce.sh osmformer_fidelity`.", ""]
    pending = len(s.get("pending", []))
    for prefix, label, key, paper_val in DATASETS:
        rows = rows_of(s, prefix)
        g = grams.get(key, {})
        out += ["### %s" % label, ""]
        if not rows:
            out += ["No finished run yet.", ""]
            continue
        relative = {reading(r["run"])[0]: r for r in rows if reading(r["run"])[1] == "relative"}
        out += ["| reading | layout | parameters | val BPC | test BPC | Δ val |", "| --- | --- | ---: | ---: | ---: | ---: |"]
        for r in sorted(rows, key=lambda r: r["val_bpc_mean"]):
            layout, gnd = reading(r["run"])
            base = relative.get(layout)
            delta = "%+.3f" % (r["val_bpc_mean"] - base["val_bpc_mean"]) if base and base is not r and gnd != "-" else ""
            out.append("| %s | %s | %s | %.3f | %.3f | %s |" % (gnd, layout, "{:,}".format(r["parameters"]),
                                                                  r["val_bpc_mean"], r["test_bpc_mean"], delta))
        out.append("")
        if g:
            out.append("- **Floors** (count models on the training split, results/ngram_baselines.json): bigram "
                       "validation %.3f, trigram %.3f." % (g["bigram"]["val_bpc"], g["trigram"]["val_bpc"]))
        ident = [r for r in rows if reading(r["run"])[0] == "identity mixing"]
        if ident and g:
            out.append("- **Identity mixing** (the cancellation laid bare): " + "; ".join(
                "%s %.3f (%+.3f against the bigram)" % (reading(r["run"])[1], r["val_bpc_mean"],
                                                        r["val_bpc_mean"] - g["bigram"]["val_bpc"])
                for r in sorted(ident, key=lambda r: r["val_bpc_mean"])) + ".")
        osm = [r for r in rows if reading(r["run"])[1] != "-" and reading(r["run"])[0] != "identity mixing"]
        small = [r for r in osm if r["parameters"] <= PAPER_PARAMS]
        trans = [r for r in rows if reading(r["run"])[1] == "-"]
        if small:
            b = min(small, key=lambda r: r["val_bpc_mean"])
            text = ("- **Best at ≤ 91K parameters**: %s (%s, %s), validation %.3f, %+.3f against the paper's %.3f" % (
                reading(b["run"])[1], reading(b["run"])[0], "{:,}".format(b["parameters"]), b["val_bpc_mean"],
                b["val_bpc_mean"] - paper_val, paper_val))
            text += "".join("; %+.3f against the %s (%.3f)" % (b["val_bpc_mean"] - t["val_bpc_mean"],
                                                                reading(t["run"])[0], t["val_bpc_mean"]) for t in trans)
            out.append(text + ".")
        if osm:
            ranked = sorted(osm, key=lambda r: r["val_bpc_mean"])
            out.append("- **Best overall** (linear mixing, any size): %s (%s, %.3f). The best at ≤ 91K parameters, "
                       "the target's size, goes on to the long protocol (tables ts_reading_long and "
                       "ptb_reading_long, 3 seeds; \"At convergence\" above)." % (
                           reading(ranked[0]["run"])[1], reading(ranked[0]["run"])[0], ranked[0]["val_bpc_mean"]))
        out.append("")
    if pending:
        out += ["%d run(s) of the screen are still pending (`bash scripts/reproduce.sh osmformer_fidelity`); the "
                "rankings above are of the finished ones." % pending, ""]
    return out
