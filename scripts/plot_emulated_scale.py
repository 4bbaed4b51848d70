#!/usr/bin/env python3
"""Draws the start's store time against the world, log-log, as an SVG line chart, from the
JSON lines of scripts/emulate-scale.sh: pgroups' creation emulated (NCCL ids, Megatron's
kinds), the model's seconds for it, torch's new_group loop (emulated, extrapolated from
its first groups), and DeviceMesh's one ncclCommSplit per kind as ring steps at an assumed
latency (no GPU here: labelled as such). Standard library only.

usage: plot_emulated_scale.py RESULTS.jsonl OUT.svg
       plot_emulated_scale.py --row < ONE_RESULT.json   # one line of the table
"""
import json
import math
import sys

# DeviceMesh's bound path: one ncclCommSplit per kind over the parent, about W/2 sequential
# ring steps each (docs/developing/scale.md). Its seconds need a step's latency, which this
# machine cannot measure: 10 microseconds is assumed, and the legend says so.
ASSUMED_RING_STEP_SECONDS = 10e-6
MEGATRON_KINDS = 11


def series(runs):
    megatron = [r for r in runs if r["kinds"] == "megatron"]
    pgroups = sorted((r["emulated_ranks"], r["seconds"]) for r in megatron if r["traffic"] == "nccl")
    model = sorted((r["emulated_ranks"], r["model_seconds"]) for r in megatron if r["traffic"] == "nccl")
    loop = sorted((r["emulated_ranks"], r["extrapolated_seconds"]) for r in megatron
                  if r["traffic"] == "new_group_loop")
    splits = [(w, MEGATRON_KINDS * w / 2 * ASSUMED_RING_STEP_SECONDS) for w, _ in pgroups]
    return [
        (pgroups, "#2ca02c", "pgroups, emulated (NCCL ids; relays past 16,384)"),
        (model, "#98df8a", "pgroups, model (110,000 requests/s)"),
        (loop, "#d62728", "torch new_group loop, emulated (extrapolated)"),
        (splits, "#7f7f7f", "DeviceMesh splits: 11 x W/2 ring steps at 10 us (assumed)"),
    ]


def main(results_path, svg_path):
    runs = [json.loads(line) for line in open(results_path) if line.strip()]
    lines = series(runs)
    values = [s for points, _, _ in lines for _, s in points]
    worlds = sorted({w for points, _, _ in lines for w, _ in points})
    width, height, left, right, top, bottom = 900, 480, 80, 400, 40, 50
    plot_w, plot_h = width - left - right, height - top - bottom
    low, high = 10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values)))
    w_low, w_high = math.log2(worlds[0]), math.log2(worlds[-1])

    def x(w):
        return left + (math.log2(w) - w_low) / (w_high - w_low) * plot_w

    def y(s):
        return top + plot_h - (math.log10(s) - math.log10(low)) / (math.log10(high) - math.log10(low)) * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="12"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="{left}" y="24" font-size="14">Starting the groups of tp8 cp2 pp8 dp (Megatron\'s 11 kinds): '
           f'seconds against ranks, one store</text>']
    decade = low
    while decade <= high:
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(decade):.1f}" y2="{y(decade):.1f}" '
                   f'stroke="#ddd"/><text x="{left - 8}" y="{y(decade) + 4:.1f}" text-anchor="end">'
                   f'{decade:g} s</text>')
        decade *= 10
    for w in worlds:
        out.append(f'<line x1="{x(w):.1f}" x2="{x(w):.1f}" y1="{top}" y2="{top + plot_h}" stroke="#eee"/>'
                   f'<text x="{x(w):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{w:,}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 8}" text-anchor="middle">ranks (W)</text>')
    for row, (points, colour, label) in enumerate(lines):
        path = " ".join(f"{x(w):.1f},{y(s):.1f}" for w, s in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2.5"/>')
        for w, s in points:
            out.append(f'<circle cx="{x(w):.1f}" cy="{y(s):.1f}" r="3.5" fill="{colour}"/>')
        ly = top + 20 + row * 22
        out.append(f'<line x1="{left + plot_w + 15}" x2="{left + plot_w + 40}" y1="{ly}" y2="{ly}" '
                   f'stroke="{colour}" stroke-width="2.5"/><text x="{left + plot_w + 46}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    with open(svg_path, "w") as svg:
        svg.write("\n".join(out) + "\n")


def row(r):
    seconds = r.get("extrapolated_seconds", r["seconds"])
    return (f"{r['emulated_ranks']:>7} {r['kinds']:>8} {r['traffic']:>15} connections {r['connections']:>6} "
            f"(x{r['ranks_per_connection']}) {seconds:>11.2f} s  turns {r['round_trips_per_rank']:>3}  "
            f"bytes/rank {r['bytes_per_rank']['max']:>9.0f}  model {r['model_seconds']:.2f} s")


if __name__ == "__main__":
    if sys.argv[1:] == ["--row"]:
        print(row(json.load(sys.stdin)))
    else:
        main(sys.argv[1], sys.argv[2])
