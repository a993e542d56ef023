#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Work–precision diagrams from the output of bench/work_precision.sh: one log–log panel per model, the error on the x
axis and the right-hand sides on the y axis, one line per method, each point an rtol. Standard library only; writes
one SVG. Usage: bench/work_precision_plot.py RESULTS OUT.svg (RESULTS: the script's stdout, or a results Markdown
file that holds it in a fenced block)."""
import math
import sys
from collections import OrderedDict

COLORS = {"dopri5": "#1f77b4", "tsit5": "#2ca02c", "dop853": "#d62728"}
W, H, COLS = 300, 230, 4          # one panel, panels per row
ML, MR, MT, MB = 58, 10, 24, 36   # margins inside a panel


def read(path):
    """{model: {method: [(rtol, rhs, error)]}} from the CSV lines of the file (other lines are skipped)."""
    data = OrderedDict()
    with open(path) as f:
        for line in f:
            cells = line.strip().split(",")
            if len(cells) != 9 or cells[0] == "model":
                continue
            model, method, rtol, rhs, err = cells[0], cells[1], float(cells[2]), int(cells[3]), float(cells[8])
            if cells[6] != "0" or not err > 0.0 or math.isinf(err):
                continue  # a failed member or an exact result has no place on a log axis
            data.setdefault(model, OrderedDict()).setdefault(method, []).append((rtol, rhs, err))
    return data


def decades(lo, hi):
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return a, max(b, a + 1)


def panel(model, methods, x0, y0):
    errs = [p[2] for pts in methods.values() for p in pts]
    rhs = [p[1] for pts in methods.values() for p in pts]
    ex0, ex1 = decades(min(errs), max(errs))
    ry0, ry1 = decades(min(rhs), max(rhs))
    pw, ph = W - ML - MR, H - MT - MB

    def px(e):
        return x0 + ML + (math.log10(e) - ex0) / (ex1 - ex0) * pw

    def py(r):
        return y0 + MT + ph - (math.log10(r) - ry0) / (ry1 - ry0) * ph

    out = [f'<text x="{x0 + W / 2}" y="{y0 + 15}" text-anchor="middle" font-size="12">{model}</text>',
           f'<rect x="{x0 + ML}" y="{y0 + MT}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>']
    step = 1 if ex1 - ex0 <= 6 else 2
    for d in range(ex0, ex1 + 1, step):
        x = px(10.0 ** d)
        out.append(f'<line x1="{x}" y1="{y0 + MT}" x2="{x}" y2="{y0 + MT + ph}" stroke="#eee"/>')
        out.append(f'<text x="{x}" y="{y0 + MT + ph + 13}" text-anchor="middle" font-size="9">1e{d}</text>')
    for d in range(ry0, ry1 + 1):
        y = py(10.0 ** d)
        out.append(f'<line x1="{x0 + ML}" y1="{y}" x2="{x0 + ML + pw}" y2="{y}" stroke="#eee"/>')
        out.append(f'<text x="{x0 + ML - 4}" y="{y + 3}" text-anchor="end" font-size="9">1e{d}</text>')
    out.append(f'<text x="{x0 + ML + pw / 2}" y="{y0 + H - 6}" text-anchor="middle" font-size="9">largest error</text>')
    out.append(f'<text x="{x0 + 11}" y="{y0 + MT + ph / 2}" text-anchor="middle" font-size="9" '
               f'transform="rotate(-90 {x0 + 11} {y0 + MT + ph / 2})">right-hand sides</text>')
    for method, pts in methods.items():
        color = COLORS.get(method, "#555")
        pts = sorted(pts, key=lambda p: -p[0])
        path = " ".join(f"{px(e):.1f},{py(r):.1f}" for _, r, e in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>')
        for _, r, e in pts:
            out.append(f'<circle cx="{px(e):.1f}" cy="{py(r):.1f}" r="2.2" fill="{color}"/>')
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: work_precision_plot.py RESULTS OUT.svg")
    data = read(sys.argv[1])
    if not data:
        sys.exit(f"work_precision_plot.py: no work_precision CSV lines in {sys.argv[1]}")
    rows = (len(data) + COLS - 1) // COLS
    legend_h = 26
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{COLS * W}" height="{rows * H + legend_h}" '
           f'font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>']
    x = 10
    for method, color in COLORS.items():
        svg.append(f'<line x1="{x}" y1="14" x2="{x + 22}" y2="14" stroke="{color}" stroke-width="2"/>')
        svg.append(f'<text x="{x + 27}" y="18" font-size="12">{method}</text>')
        x += 100
    svg.append(f'<text x="{x + 10}" y="18" font-size="11">each point an rtol; lower left is better</text>')
    for i, (model, methods) in enumerate(data.items()):
        svg += panel(model, methods, (i % COLS) * W, legend_h + (i // COLS) * H)
    svg.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
