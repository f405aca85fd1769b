#!/usr/bin/env python3
"""The parts shared by the summaries of tables scored by length (scripts/words_table.py,
scripts/rotations_table.py): reading a table's runs' result.json files into rows, the
mean and standard deviation over seeds, writing RESULTS/TABLE.json and RESULTS/TABLE.md,
the wall-time line, the SVG plots' frame with a log2 length axis and their lines
(finish_svg_lines also draws scripts/reproduce.py's scatter plots), and a table's
markdown set into its page (scripts/state_tracking_doc.py, scripts/rotation_tracking_doc.py).
Standard library only.
"""
import json
import os
import statistics


def mean_std(xs):
    """[mean, sample standard deviation] of xs (standard deviation 0 for one value); None for none."""
    if not xs:
        return None
    return [statistics.mean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0]


def read_run_results(results_dir, table_name, runs, row_key):
    """Each run's RESULTS/TABLE/RUN/result.json, grouped by row_key(run) in the order the
    rows first appear: ({key: {"results": [...], "diverged": [...], "pending": [run ids],
    "not_run": [run ids]}}, every pending run id). A run without result.json is pending,
    unless it is marked "not_run" (reproduce.py expand); one whose result says "diverged" is
    counted apart from the finished ones."""
    rows, pending = {}, []
    for run in runs:
        key = row_key(run)
        rows.setdefault(key, {"results": [], "diverged": [], "pending": [], "not_run": []})
        f = os.path.join(results_dir, table_name, run["id"], "result.json")
        if "not_run" in run and not os.path.exists(f):  # left out on purpose (tables.json says why)
            rows[key]["not_run"].append(run["id"])
            continue
        if not os.path.exists(f):
            rows[key]["pending"].append(run["id"])
            pending.append(run["id"])
            continue
        with open(f) as fh:
            r = json.load(fh)
        rows[key]["diverged" if r.get("diverged") else "results"].append(r)
    return rows, pending


def write_summary_json(results_dir, table_name, summary):
    """Writes RESULTS/TABLE.json; returns its path."""
    path = os.path.join(results_dir, table_name + ".json")
    with open(path, "w") as f:
        json.dump(summary, f, indent=2)
    return path


def wall_time_line(rows):
    """The tables' "Wall time: ..." line from every row's wall_s_each."""
    walls = [w for r in rows for w in r.get("wall_s_each", [])]
    return "Wall time: %s." % ("%.1f min for %d finished runs" % (sum(walls) / 60, len(walls)) if walls
                               else "no run finished yet")


def write_table_md(results_dir, table_name, lines, pending):
    """Writes RESULTS/TABLE.md from its lines, closed by the pending runs if any; returns its path."""
    if pending:
        lines = lines + ["", "Pending runs: " + ", ".join(pending)]
    path = os.path.join(results_dir, table_name + ".md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def svg_open(W, H, L, R, title):
    """The first lines of a W x H SVG: white background and the title centred over the
    plot area between L and W - R."""
    return ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
            '<rect width="100%" height="100%" fill="white"/>',
            '<text x="%d" y="24" text-anchor="middle" font-size="14">%s</text>' % ((L + W - R) / 2, title)]


def svg_length_frame(o, frame, lengths, px, x_label, y_label):
    """Appends to the SVG lines `o` the lengths' tick labels at px(n), the plot area's
    frame and the axis labels; frame is (W, H, L, R, T, B): the size and the margins."""
    W, H, L, R, T, B = frame
    for n in lengths:
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (px(n), H - B + 16, n))
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' % (L, T, W - L - R, H - T - B))
    o.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % ((L + W - R) / 2, H - 12, x_label))
    o.append('<text transform="translate(16,%d) rotate(-90)" text-anchor="middle">%s</text>' % ((T + H - B) / 2, y_label))


def svg_train_length_line(o, frame, lengths, px, train_len):
    """Appends a dotted vertical line at the longest training length when it is given and
    within the plotted lengths."""
    W, H, L, R, T, B = frame
    if train_len and min(lengths) <= train_len <= max(lengths):
        o.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#888" stroke-dasharray="2,3"/>' % (
            px(train_len), px(train_len), T, H - B))


def finish_svg_lines(path, o, items, px, py, colors, r, legend):
    """Appends to the SVG lines `o` one polyline with markers of radius r per (label, points)
    of items, its colour from colors and its label at legend (x, first y, step in y), then
    closes the SVG and writes it to path."""
    lx, ly, dy = legend
    for i, (label, pts) in enumerate(items):
        c = colors[i % len(colors)]
        pts = sorted(pts)
        o.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"/>' % (
            " ".join(("M" if j == 0 else "L") + "%.1f,%.1f" % (px(x), py(y)) for j, (x, y) in enumerate(pts)), c))
        for x, y in pts:
            o.append('<circle cx="%.1f" cy="%.1f" r="%s" fill="%s"/>' % (px(x), py(y), r, c))
        o.append('<text x="%d" y="%d" fill="%s">%s</text>' % (lx, ly + dy * i, c, label))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def page_table_lines(results_dir, out_path, table, heading, plot_link_sep):
    """RESULTS/TABLE.md as lines of the page at out_path: its title replaced by `heading`,
    its "## " headings one level down, and the links to its plots ("](TABLE" followed by
    plot_link_sep: "-" for per-group plots TABLE-G.svg, "." for one plot TABLE.svg) made
    relative to the page."""
    with open(os.path.join(results_dir, table + ".md")) as f:
        text = f.read()
    rel = os.path.relpath(results_dir, os.path.dirname(os.path.abspath(out_path)))
    prefix = "" if rel == "." else rel + "/"
    text = text.replace("](%s%s" % (table, plot_link_sep), "](%s%s%s" % (prefix, table, plot_link_sep))
    lines = text.splitlines()
    lines[0] = heading
    return [("####" + l[2:]) if l.startswith("## ") else l for l in lines]
