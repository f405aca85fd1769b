"""Distinct settings of a grid sweep (the robustness table: learning rate x clipping), for
scripts/reproduce.py (the table's own counts) and scripts/results_doc.py (claim 5).

Two settings of one model can train identically: a clip the gradient norm never reaches
never acts, so e.g. the OSMFormer's clip 1 and clip none runs (its gradient norm stays
below 1) give the same model. Counted as two settings they would widen its "range" with
a setting it never trained differently in, so settings with the same learning rate and
the same results (validation BPC, test BPC and largest gradient norm equal within
TOLERANCE; the last digits can differ with the floating-point order of the clip code
path) count once. Standard library only."""

TOLERANCE = 1e-5  # BPC, and relative for the gradient norm
METRICS = ("val_bpc_mean", "test_bpc_mean")


def same_results(a, b):
    """Whether two finished summary rows of one model trained alike: same learning rate and
    the same metrics within TOLERANCE."""
    if a.get("lr") != b.get("lr") or not (a.get("n", 0) > 0 and b.get("n", 0) > 0):
        return False
    for k in METRICS:
        if a.get(k) is None or b.get(k) is None or abs(a[k] - b[k]) > TOLERANCE:
            return False
    ga, gb = a.get("max_grad_norm"), b.get("max_grad_norm")
    if (ga is None) != (gb is None):
        return False
    return ga is None or abs(ga - gb) <= TOLERANCE * max(abs(ga), abs(gb), 1.0)


def distinct(rows):
    """The groups of rows (one model's) that trained alike, in the rows' order: a list of
    lists, each a distinct setting; a row that did not finish is a group of its own."""
    groups = []
    for r in rows:
        for g in groups:
            if same_results(g[0], r):
                g.append(r)
                break
        else:
            groups.append([r])
    return groups


def clip_text(v):
    return "none" if v in ("none", None) else "%g" % v


def duplicates_text(groups):
    """'clip 1 and clip none gave identical results at lr 0.0003, 0.001, 0.003 and 0.01
    (...)' for the groups with more than one row, or None when every setting is distinct.
    Says whether the largest gradient norm stayed below the smallest clip in the group
    (then that clip never acted, which is why)."""
    merged = [g for g in groups if len(g) > 1]
    if not merged:
        return None
    by_clips = {}
    for g in merged:
        clips = tuple(r.get("point", {}).get("train.clip") for r in g)
        by_clips.setdefault(clips, []).append(g)
    parts = []
    for clips, gs in by_clips.items():
        lrs = [g[0]["lr"] for g in gs]
        norms = [r.get("max_grad_norm") for g in gs for r in g]
        numeric = [c for c in clips if isinstance(c, (int, float))]
        why = ""
        if numeric and all(x is not None for x in norms) and max(norms) < min(numeric):
            why = (": its gradient norm, at most %.3g, never reached clip %g, so that clip never acted" % (
                max(norms), min(numeric)))
        parts.append("%s gave identical results at lr %s (validation and test BPC within %g%s)" % (
            " and ".join("clip " + clip_text(c) for c in clips),
            ", ".join("%g" % x for x in lrs[:-1]) + (" and " if len(lrs) > 1 else "") + "%g" % lrs[-1],
            TOLERANCE, why))
    return "; ".join(parts)
