#!/usr/bin/env python3
"""Draws the scaling of group creation as an SVG line chart, from the JSON lines that
`pgroups bench --format json` prints (one per world size). Standard library only.

usage: plot_scaling.py RESULTS.jsonl OUT.svg
"""
import json
import math
import sys

SERIES = [  # entry, colour, label
    ("per_group", "#d62728", "per_group (Colossal-AI's algorithm)"),
    ("comm_split", "#ff7f0e", "comm_split (MPI_Comm_split)"),
    ("comm_create", "#9467bd", "comm_create (MPI_Comm_create)"),
    ("create_group", "#2ca02c", "create_group (default)"),
    ("limit", "#1f77b4", "limit (K x MPI_Comm_dup)"),
    ("allreduce", "#7f7f7f", "allreduce (K x MPI_Allreduce)"),
]


def main(results_path, svg_path):
    runs = [json.loads(line) for line in open(results_path) if line.strip()]
    runs.sort(key=lambda r: r["world_size"])
    worlds = [r["world_size"] for r in runs]
    width, height, left, right, top, bottom = 760, 460, 70, 250, 40, 50
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [r["strategies"][name]["median_s"] * 1e3 for r in runs for name, _, _ in SERIES]
    low = 10 ** math.floor(math.log10(min(values)))
    high = 10 ** math.ceil(math.log10(max(values)))

    def x(w):
        span = math.log2(worlds[-1]) - math.log2(worlds[0]) or 1
        return left + plot_w * (math.log2(w) - math.log2(worlds[0])) / span

    def y(ms):
        return top + plot_h * (1 - (math.log10(ms) - math.log10(low)) / (math.log10(high) - math.log10(low)))

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{left}" y="22" font-size="14">Time to create every group (median of the slowest rank, ms, '
             f'log scale) vs world size</text>']
    decade = low
    while decade <= high:
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(decade):.1f}" y2="{y(decade):.1f}" '
                     f'stroke="#ddd"/><text x="{left - 8}" y="{y(decade) + 4:.1f}" text-anchor="end">{decade:g}</text>')
        decade *= 10
    for w in worlds:
        parts.append(f'<line x1="{x(w):.1f}" x2="{x(w):.1f}" y1="{top}" y2="{top + plot_h}" stroke="#eee"/>'
                     f'<text x="{x(w):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{w}</text>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 8}" text-anchor="middle">ranks W (oversubscribed '
                 f'on 2 cores)</text>')
    for index, (name, colour, label) in enumerate(SERIES):
        points = " ".join(f"{x(r['world_size']):.1f},{y(r['strategies'][name]['median_s'] * 1e3):.1f}" for r in runs)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for r in runs:
            parts.append(f'<circle cx="{x(r["world_size"]):.1f}" cy="{y(r["strategies"][name]["median_s"] * 1e3):.1f}" '
                         f'r="3" fill="{colour}"/>')
        ly = top + 10 + 20 * index
        parts.append(f'<line x1="{left + plot_w + 15}" x2="{left + plot_w + 35}" y1="{ly}" y2="{ly}" '
                     f'stroke="{colour}" stroke-width="2"/><text x="{left + plot_w + 40}" y="{ly + 4}">{label}</text>')
    parts.append("</svg>")
    with open(svg_path, "w") as out:
        out.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
