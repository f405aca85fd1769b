#!/usr/bin/env python3
"""The rounds of the side-by-side speed scripts (bench/growth.py, bench/sampling.py).

Each round times every row on both sides, liegrad and PyTorch, in alternating order
(liegrad first in odd rounds, PyTorch first in even ones), so that neither side always
runs second, on a machine its twin has just warmed or loaded; after every round the
script writes its raw figures and its table, so a run cut short keeps the rounds it
finished. Standard library only.
"""
import json
import os
import platform
import time


def sides_in_round(i):
    """The order of the two sides in round i (0-based): liegrad first in even i."""
    return ["liegrad", "torch"] if i % 2 == 0 else ["torch", "liegrad"]


def time_round(i, rows, name_of, time_side, after_sides=None):
    """Round i (0-based): for every row, time_side(side, row) for both sides in the round's
    order, then after_sides(row) when given, then a progress line naming name_of(row)."""
    for row in rows:
        for side in sides_in_round(i):
            time_side(side, row)
        if after_sides is not None:
            after_sides(row)
        print("round %d: %s done" % (i + 1, name_of(row)), flush=True)


def machine():
    """Where the figures were taken: host name, CPU count and OPENBLAS_CORETYPE (or None)."""
    return {"host": platform.node(), "cpus": os.cpu_count(), "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE")}


def write_round_files(out_dir, stem, result, table_text):
    """Writes DIR/STEM.json (result with the machine and the UTC date added last) and
    DIR/STEM.md (table_text), as after every round."""
    result = dict(result, machine=machine(), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    with open(os.path.join(out_dir, stem + ".json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(out_dir, stem + ".md"), "w") as f:
        f.write(table_text)
