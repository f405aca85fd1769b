"""One SVG with two panels for a long table: validation BPC against tokens seen (left)
and against training time at each model's quiet-machine speed (right; a point whose
time is None is left out of that panel), one line per row (its first seed). Used by
scripts/long_tables.py; standard library only."""

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def _ticks(lo, hi, n=5):
    return [lo + (hi - lo) * i / n for i in range(n + 1)]


def _panel(o, curves, x_of, x0, y0, w, h, xlabel, xfmt, ylo, yhi):
    curves = {k: [p for p in c if x_of(p) is not None] for k, c in curves.items()}
    xs = [x_of(p) for c in curves.values() for p in c]
    xlo, xhi = 0.0, max(xs) if xs and max(xs) > 0 else 1.0
    px = lambda x: x0 + (x - xlo) / (xhi - xlo) * w
    py = lambda y: y0 + h - (y - ylo) / (yhi - ylo) * h
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' % (x0, y0, w, h))
    for y in _ticks(ylo, yhi):
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (x0, x0 + w, py(y), py(y)))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%.2f</text>' % (x0 - 5, py(y) + 4, y))
    for x in _ticks(xlo, xhi):
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (px(x), y0 + h + 16, xfmt(x)))
    o.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (x0 + w / 2, y0 + h + 36, xlabel))
    for i, (label, c) in enumerate(sorted(curves.items())):
        pts = sorted(c, key=x_of)
        d = " ".join(("M" if j == 0 else "L") + "%.1f,%.1f" % (px(x_of(p)), py(min(max(p[2], ylo), yhi)))
                     for j, p in enumerate(pts))
        o.append('<path d="%s" fill="none" stroke="%s" stroke-width="1.8"/>' % (d, COLORS[i % len(COLORS)]))


def plot(path, title, curves):
    """curves: {label: [(tokens, seconds or None, val BPC), ...]}. Returns False (no file) when empty."""
    if not curves:
        return False
    ys = sorted(p[2] for c in curves.values() for p in c)
    # The interesting range: from the best to a little above the median, so the early
    # steep descent does not flatten the part where the models differ.
    ylo = ys[0] - 0.02
    yhi = max(ys[len(ys) // 2] + 0.1, ylo + 0.1)
    W, H, top, ph, pw = 1060, 430, 44, 320, 360
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="24" text-anchor="middle" font-size="14">%s: validation BPC</text>' % (W / 2 - 80, title)]
    _panel(o, curves, lambda p: p[0], 60, top, pw, ph, "tokens seen (millions)", lambda x: "%.0f" % (x / 1e6), ylo, yhi)
    _panel(o, curves, lambda p: p[1], 490, top, pw, ph, "training time at benchmark speed (hours, 2 threads)", lambda x: "%.1f" % (x / 3600), ylo, yhi)
    o.append('<text transform="translate(16,%d) rotate(-90)" text-anchor="middle">validation BPC</text>' % (top + ph / 2))
    for i, label in enumerate(sorted(curves)):
        o.append('<text x="%d" y="%d" fill="%s">%s</text>' % (870, top + 14 + 18 * i, COLORS[i % len(COLORS)], label))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")
    return True
