#!/usr/bin/env python3
"""Draws the engine's scaling curve (issue 42) as an SVG, from a CSV of match results.

    python3 scripts/scaling_chart.py docs/experiments/scaling.csv docs/experiments/scaling.svg

Each CSV row is one match, as `atomzero match` printed it: `series` (the line it belongs to),
`ours_ms` and `theirs_ms` (each engine's time a move), `wins`, `losses`, `draws` (ours). The
chart plots, for each series, the Elo difference against the time our engine had (log scale),
with the 95% error bars `atomzero match` prints (cutechess's formula, from the per-game score
variance). No third-party packages: the standard library writes the SVG.
"""

import csv
import math
import sys


def elo(score):
    return -400.0 * math.log10(1.0 / score - 1.0)


def elo_with_error(wins, losses, draws):
    """Elo difference and the half-width of its 95% interval (cutechess's `+/-`)."""
    n = wins + losses + draws
    mu = (wins + draws / 2.0) / n
    var = (wins * (1 - mu) ** 2 + losses * mu**2 + draws * (0.5 - mu) ** 2) / n
    ci = 1.959963984540054 * math.sqrt(var / n)
    lo, hi = max(mu - ci, 1e-6), min(mu + ci, 1 - 1e-6)
    return elo(mu), (elo(hi) - elo(lo)) / 2.0


def read(path):
    rows = []
    with open(path, newline="") as f:
        for i, row in enumerate(csv.DictReader(f), start=2):
            try:
                w, l, d = int(row["wins"]), int(row["losses"]), int(row["draws"])
                ours, theirs = float(row["ours_ms"]), float(row["theirs_ms"])
            except (KeyError, ValueError) as e:
                sys.exit(f"{path}:{i}: bad row ({e}): {row}")
            if w + l + d == 0 or ours <= 0 or theirs <= 0:
                sys.exit(f"{path}:{i}: a match needs games and positive times: {row}")
            e, err = elo_with_error(w, l, d)
            rows.append(dict(series=row["series"], ours=ours, theirs=theirs,
                             w=w, l=l, d=d, elo=e, err=err))
    if not rows:
        sys.exit(f"{path}: no matches")
    return rows


COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]


def svg(rows, title):
    width, height = 800, 440
    left, right, top, bottom = 70, 300, 40, 55
    xs = [r["ours"] for r in rows]
    x0, x1 = math.log10(min(xs)) - 0.1, math.log10(max(xs)) + 0.1
    lo = min(r["elo"] - r["err"] for r in rows)
    hi = max(r["elo"] + r["err"] for r in rows)
    y0, y1 = math.floor(min(lo, 0) / 100) * 100, math.ceil(max(hi, 0) / 100) * 100
    pw, ph = width - left - right, height - top - bottom

    def px(ms):
        return left + (math.log10(ms) - x0) / (x1 - x0) * pw

    def py(e):
        return top + (y1 - e) / (y1 - y0) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="14">{title}</text>']
    # Grid: every 100 Elo, and the times that occur.
    for e in range(int(y0), int(y1) + 1, 100):
        y = py(e)
        stroke = "#888" if e == 0 else "#ddd"
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="{stroke}"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{e:+d}</text>')
    for ms in sorted(set(xs)):
        x = px(ms)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#eee"/>')
        out.append(f'<text x="{x:.1f}" y="{top + ph + 18}" text-anchor="middle">{ms / 1000:g} s</text>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 12}" text-anchor="middle">'
               'our engine\'s time a move (log scale)</text>')
    out.append(f'<text x="18" y="{top + ph / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {top + ph / 2})">Elo (ours minus theirs), 95% bars</text>')
    series = list(dict.fromkeys(r["series"] for r in rows))
    for i, name in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        points = sorted((r for r in rows if r["series"] == name), key=lambda r: r["ours"])
        path = " ".join(f'{px(r["ours"]):.1f},{py(r["elo"]):.1f}' for r in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for r in points:
            x, y = px(r["ours"]), py(r["elo"])
            ya, yb = py(r["elo"] + r["err"]), py(r["elo"] - r["err"])
            out.append(f'<line x1="{x:.1f}" y1="{ya:.1f}" x2="{x:.1f}" y2="{yb:.1f}" stroke="{colour}"/>')
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/>')
            n = r["w"] + r["l"] + r["d"]
            out.append(f'<text x="{x + 6:.1f}" y="{y - 6:.1f}" fill="{colour}" font-size="10">'
                       f'{r["elo"]:+.0f} ({n})</text>')
        ly = top + 16 + 20 * i
        out.append(f'<line x1="{left + pw + 15}" y1="{ly - 4}" x2="{left + pw + 35}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{left + pw + 40}" y="{ly}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = read(sys.argv[1])
    for r in rows:
        n = r["w"] + r["l"] + r["d"]
        print(f'{r["series"]}: {r["ours"]:g} ms vs {r["theirs"]:g} ms: '
              f'{r["w"]} - {r["l"]} - {r["d"]} [{(r["w"] + r["d"] / 2) / n:.3f}] {n}  '
              f'Elo {r["elo"]:+.1f} +/- {r["err"]:.1f}')
    with open(sys.argv[2], "w") as f:
        f.write(svg(rows, "atomzero at equal and unequal time (each series: its binary and net)"))
    print(f"wrote {sys.argv[2]}")


if __name__ == "__main__":
    main()
