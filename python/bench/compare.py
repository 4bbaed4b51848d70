"""pgroups' front doors against what each replaces, at several world sizes, in one command.

    python3 python/bench/compare.py [--ranks 4,8,16] [--mpi-ranks 4,8,16,32] \\
        [--mesh tp=2,dp=-,pp=2] [--repeats 5] [--out build/compare]

For each torch world size, one mpirun job (python/bench/compare_job.py, on torch 2.x from
the project's venv) runs every front door and its anchor alternating:

    create_groups             against a plain new_group loop over every group of every kind
    device_mesh               against init_device_mesh for the same mesh
    colossal register()       against Colossal-AI's own initializers (init_parallel_groups)
    pgroups.megatron          against megatron-core's initialize_model_parallel

each timed until every process group it made carried one all-reduce, the slowest rank, the
median of --repeats runs. For each --gloo-ranks size, one torchrun job
(python/bench/gloo_backend.py) times pgroups' gloo backend (C++, no Python in the
creation, one gloo context per distinct group over the env bootstrap) against torch's
own new_group loop and init_device_mesh for the same groups, alternating, eager against
eager. For each MPI world size, `pgroups bench` times the context's
creation strategies against K MPI_Comm_dup (`limit`); at 32 ranks and more also the layout
3d, pipeline 4, tensor 8. Printed: a table of medians, ratios (anchor / pgroups: above 1 is
faster) and per-rank counts (process groups, new_group calls, store operations, MPI
communicator calls), and, in --out, the same as compare.json, compare.txt and compare.svg.
Run on a quiet machine: the ratios are of one job's alternating runs, but a second job
compiling beside it makes both sides noisy.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = os.path.join(ROOT, "python", "bench", "compare_job.py")
# front door -> (pgroups' case, its anchor, the ratio the door is held to at 16 ranks)
DOORS = {
    "create_groups": ("create_groups", "loop", 2.0),
    "device_mesh": ("device_mesh", "init_device_mesh", 1.0),
    "colossal": ("colossal_register", "colossal_own", 1.0),
    "megatron": ("megatron_pgroups", "megatron_own", 2.0),
}
MPI_LIMIT = 1.1  # the most the default strategy may take over K MPI_Comm_dup
GLOO_JOB = os.path.join(ROOT, "python", "bench", "gloo_backend.py")


def mpirun(ranks: int) -> List[str]:
    return ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1", "-np", str(ranks)]


def run_torch(args: argparse.Namespace, ranks: int, folder: str) -> Dict[str, Any]:
    out = os.path.join(folder, f"torch_{ranks}.json")
    env = dict(os.environ, PYTHONPATH=os.path.join(args.build, "python"), GLOO_SOCKET_IFNAME="lo",
               OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    command = mpirun(ranks) + ["-x", "PYTHONPATH", "-x", "GLOO_SOCKET_IFNAME", "-x", "OMP_NUM_THREADS", "-x",
                               "PYTHONWARNINGS", args.python, JOB, "--mesh", args.mesh, "--repeats",
                               str(args.repeats), "--out", out]
    print(f"torch W={ranks}: {' '.join(command[-8:])}", file=sys.stderr, flush=True)
    subprocess.run(command, env=env, check=True, timeout=args.timeout, stdout=subprocess.DEVNULL)
    with open(out) as result:
        return json.load(result)


def run_gloo(args: argparse.Namespace, ranks: int, folder: str) -> Dict[str, Any]:
    """One torchrun job of python/bench/gloo_backend.py at `ranks` ranks."""
    out = os.path.join(folder, f"gloo_{ranks}.json")
    env = dict(os.environ, PYTHONPATH=os.path.join(args.build, "python"), GLOO_SOCKET_IFNAME="lo",
               OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    env.pop("TORCH_GLOO_LAZY_INIT", None)  # eager against eager
    torchrun = os.path.join(os.path.dirname(args.python), "torchrun")
    command = [torchrun, "--standalone", "--nproc_per_node", str(ranks), GLOO_JOB, "--repeats", str(args.repeats),
               "--out", out]
    print(f"gloo W={ranks}: {' '.join(command[-6:])}", file=sys.stderr, flush=True)
    subprocess.run(command, env=env, check=True, timeout=args.timeout, stdout=subprocess.DEVNULL)
    with open(out) as result:
        return json.load(result)


def gloo_table(results: Dict[str, Any]) -> List[str]:
    """The gloo backend's rows: pgroups against each of torch's ways, ratio = torch / pgroups."""
    if not results.get("gloo"):
        return []
    lines = ["", "gloo backend under torchrun: median ms of the slowest rank until every group carried one "
             "collective; ratio = torch / pgroups (above 1: pgroups is faster)", "",
             f"{'W':>4} {'pgroups ms':>10} {'loop ms':>10} {'ratio':>7} {'device_mesh ms':>15} {'ratio':>7}"]
    for world in sorted(results["gloo"], key=int):
        median = results["gloo"][world]["median"]
        ours = median["pgroups"]
        lines.append(f"{world:>4} {ours * 1e3:10.1f} {median['loop'] * 1e3:10.1f} {median['loop'] / ours:6.2f}x "
                     f"{median['init_device_mesh'] * 1e3:15.1f} {median['init_device_mesh'] / ours:6.2f}x")
    return lines


def run_mpi(args: argparse.Namespace, ranks: int, layout: List[str]) -> Dict[str, Any]:
    command = mpirun(ranks) + [os.path.join(args.build, "cli", "pgroups"), "bench", *layout, "--repeats",
                               str(args.repeats), "--format", "json"]
    print(f"mpi W={ranks}: pgroups bench {' '.join(layout)}", file=sys.stderr, flush=True)
    done = subprocess.run(command, check=True, timeout=args.timeout, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def mpi_layouts(args: argparse.Namespace, ranks: int) -> List[Tuple[str, List[str]]]:
    """The torch jobs' mesh at every size, and the layout 3d, pipeline 4, tensor 8 where it fits."""
    fixed = math.prod(int(v) for _, v in (item.split("=") for item in args.mesh.split(",")) if v != "-")
    mesh = ",".join(item if not item.endswith("=-") else item[:-1] + str(ranks // fixed)
                    for item in args.mesh.split(","))
    layouts = [(f"mesh {mesh}", ["--mesh", mesh])]
    if ranks % 32 == 0:
        layouts.append(("3d pipeline 4 tensor 8", ["--pipeline", "4", "--tensor", "8", "--mode", "3d"]))
    return layouts


def mpi_calls(args: argparse.Namespace, layout: List[str], ranks: int) -> Dict[str, int]:
    """Communicator-creation calls per rank of each strategy, from the bench's cost model."""
    if "--mesh" in layout:
        return {}
    done = subprocess.run([os.path.join(args.build, "cli", "pgroups"), "bench", "--model", *layout, "--max-world",
                           str(ranks)], check=True, capture_output=True, text=True)
    lines = [line.split() for line in done.stdout.splitlines() if line.strip().startswith(str(ranks))]
    if not lines:
        return {}
    numbers = [int(n) for n in lines[-1][1:]]
    names = ["colossal-ai (gloo)", "colossal-ai (nccl)", "per_group", "comm_split", "comm_create", "create_group"]
    return {name: numbers[2 * i] for i, name in enumerate(names) if 2 * i < len(numbers)}


def table(results: Dict[str, Any]) -> str:
    versions = sorted({entry["torch"] for entry in results["torch"].values()})
    lines = [f"torch {', '.join(versions)} (gloo): median ms of the slowest rank until every group carried one "
             "all-reduce; ratio = anchor / pgroups (above 1: pgroups is faster)", ""]
    head = f"{'W':>4} {'front door':14s} {'pgroups ms':>10} {'anchor ms':>10} {'ratio':>7} {'target':>7}  " \
           f"{'groups':>11} {'new_group':>11} {'store ops':>11}"
    lines.append(head)
    for world in sorted(results["torch"], key=int):
        cases = results["torch"][world]["cases"]
        for door, (ours, anchor, target) in DOORS.items():
            if ours not in cases or anchor not in cases:
                continue
            a, b = cases[anchor], cases[ours]
            ratio = a["median_s"] / b["median_s"]
            lines.append(f"{world:>4} {door:14s} {b['median_s'] * 1e3:10.1f} {a['median_s'] * 1e3:10.1f} "
                         f"{ratio:6.2f}x {target:6.1f}x  {b['process_groups']:>4} / {a['process_groups']:<4} "
                         f"{b['new_group']:>4} / {a['new_group']:<4} {b['store_ops']!s:>4} / {a['store_ops']!s:<4}")
    lines += ["", "(groups, new_group, store ops: pgroups / anchor, per rank, the busiest rank)", "",
              "MPI: median ms of the slowest rank of the context's construction; ratio = strategy / limit "
              f"(K MPI_Comm_dup; the default is held to {MPI_LIMIT}x)", ""]
    lines.append(f"{'W':>4} {'layout':26s} {'strategy':14s} {'median ms':>10} {'/ limit':>8} {'calls/rank':>11}")
    for entry in results["mpi"]:
        strategies = entry["result"]["strategies"]
        limit = strategies["limit"]["median_s"]
        for name in ("create_group", "comm_split", "comm_create", "per_group", "limit", "allreduce"):
            if name not in strategies:
                continue
            calls = entry["calls"].get(name, "")
            lines.append(f"{entry['world']:>4} {entry['layout']:26s} {name:14s} "
                         f"{strategies[name]['median_s'] * 1e3:10.2f} {strategies[name]['median_s'] / limit:7.2f}x "
                         f"{calls!s:>11}")
    lines += gloo_table(results)
    return "\n".join(lines) + "\n"


def chart(results: Dict[str, Any]) -> str:
    """Two panels: each front door's ratio by world size (with its target), and the torch
    medians of every case by world size (log scale)."""
    worlds = sorted((int(w) for w in results["torch"]), key=int)
    colours = ["#2ca02c", "#1f77b4", "#d62728", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]
    width, height, pad = 980, 470, 60
    panel = (width - 3 * pad) // 2
    top, plot_h = 50, height - 150
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="12">', f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{pad}" y="24" font-size="15">pgroups against what it replaces (torch gloo; above 1: '
             f'pgroups faster)</text>']

    def x_of(i: int, left: int) -> float:
        return left + panel * (i + 0.5) / max(len(worlds), 1)

    # Ratios.
    doors = [d for d in DOORS if any(DOORS[d][0] in results["torch"][str(w)]["cases"] for w in worlds)]
    ratios = {d: [results["torch"][str(w)]["cases"][DOORS[d][1]]["median_s"]
                  / results["torch"][str(w)]["cases"][DOORS[d][0]]["median_s"]
                  if DOORS[d][0] in results["torch"][str(w)]["cases"] else None for w in worlds] for d in doors}
    high = max([3.0] + [r for rs in ratios.values() for r in rs if r is not None]) * 1.1

    def y_ratio(r: float) -> float:
        return top + plot_h * (1 - r / high)

    left = pad
    parts.append(f'<rect x="{left}" y="{top}" width="{panel}" height="{plot_h}" fill="none" stroke="#999"/>')
    for level in (1.0, 2.0):
        y = y_ratio(level)
        parts.append(f'<line x1="{left}" x2="{left + panel}" y1="{y:.1f}" y2="{y:.1f}" stroke="#555" '
                     f'stroke-dasharray="4,3"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{level:.0f}x</text>')
    bar = panel / max(len(worlds), 1) / (len(doors) + 1)
    for i, world in enumerate(worlds):
        parts.append(f'<text x="{x_of(i, left):.1f}" y="{top + plot_h + 18}" text-anchor="middle">W={world}</text>')
        for j, door in enumerate(doors):
            r = ratios[door][i]
            if r is None:
                continue
            x = x_of(i, left) - bar * len(doors) / 2 + j * bar
            parts.append(f'<rect x="{x:.1f}" y="{y_ratio(r):.1f}" width="{bar * 0.9:.1f}" '
                         f'height="{top + plot_h - y_ratio(r):.1f}" fill="{colours[j]}"><title>{door} W={world}: '
                         f'{r:.2f}x</title></rect>')
    for j, door in enumerate(doors):
        y = top + plot_h + 36 + 15 * j
        x = left
        parts.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{colours[j]}"/>'
                     f'<text x="{x + 14}" y="{y}">{door} (target {DOORS[door][2]:.0f}x at 16)</text>')
    # Medians.
    left = 2 * pad + panel
    # Each door's colour: pgroups' case solid, its anchor dashed.
    names = [name for door in doors for name in DOORS[door][:2]]
    colour_of = {name: colours[j] for j, door in enumerate(doors) for name in DOORS[door][:2]}
    values = [results["torch"][str(w)]["cases"][n]["median_s"] * 1e3 for w in worlds for n in names
              if n in results["torch"][str(w)]["cases"]]
    low, high_ms = 10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values)))

    def y_ms(ms: float) -> float:
        return top + plot_h * (1 - (math.log10(ms) - math.log10(low)) / (math.log10(high_ms) - math.log10(low)))

    parts.append(f'<rect x="{left}" y="{top}" width="{panel}" height="{plot_h}" fill="none" stroke="#999"/>')
    decade = low
    while decade <= high_ms:
        parts.append(f'<text x="{left - 6}" y="{y_ms(decade) + 4:.1f}" text-anchor="end">{decade:g} ms</text>')
        decade *= 10
    for i, world in enumerate(worlds):
        parts.append(f'<text x="{x_of(i, left):.1f}" y="{top + plot_h + 18}" text-anchor="middle">W={world}</text>')
    for k, name in enumerate(names):
        points = [(x_of(i, left), y_ms(results["torch"][str(w)]["cases"][name]["median_s"] * 1e3))
                  for i, w in enumerate(worlds) if name in results["torch"][str(w)]["cases"]]
        dash = "" if name in {v[0] for v in DOORS.values()} else ' stroke-dasharray="5,3"'
        colour = colour_of[name]
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="'
                     + " ".join(f"{x:.1f},{y:.1f}" for x, y in points) + '"/>')
        y = top + plot_h + 36 + 15 * (k // 2)
        x = left + (k % 2) * panel / 2
        parts.append(f'<line x1="{x}" x2="{x + 14}" y1="{y - 4}" y2="{y - 4}" stroke="{colour}" '
                     f'stroke-width="2"{dash}/><text x="{x + 18}" y="{y}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def default_python() -> str:
    venv = os.path.join(ROOT, ".venv", "bin", "python")
    return venv if os.path.exists(venv) else sys.executable


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="4,8,16", help="torch world sizes")
    parser.add_argument("--mpi-ranks", default="4,8,16,32", help="MPI world sizes")
    parser.add_argument("--gloo-ranks", default="8,16", help="torchrun world sizes of the gloo backend's rows")
    parser.add_argument("--mesh", default="tp=2,dp=-,pp=2", help="NAME=SIZE,... fastest first; '-' takes the rest")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--python", default=default_python(), help="the interpreter of the torch jobs")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "compare"))
    parser.add_argument("--timeout", type=float, default=900, help="seconds per job")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    results: Dict[str, Any] = {"mesh": args.mesh, "repeats": args.repeats, "torch": {}, "mpi": [], "gloo": {}}
    with tempfile.TemporaryDirectory() as folder:
        for ranks in (int(r) for r in args.ranks.split(",") if r):
            results["torch"][str(ranks)] = run_torch(args, ranks, folder)
        for ranks in (int(r) for r in args.gloo_ranks.split(",") if r):
            results["gloo"][str(ranks)] = run_gloo(args, ranks, folder)
    for ranks in (int(r) for r in args.mpi_ranks.split(",") if r):
        for name, layout in mpi_layouts(args, ranks):
            results["mpi"].append(dict(world=ranks, layout=name, result=run_mpi(args, ranks, layout),
                                       calls=mpi_calls(args, layout, ranks)))
    text = table(results)
    print(text, end="")
    with open(os.path.join(args.out, "compare.json"), "w") as out:
        json.dump(results, out, indent=1)
    with open(os.path.join(args.out, "compare.txt"), "w") as out:
        out.write(text)
    if results["torch"]:
        with open(os.path.join(args.out, "compare.svg"), "w") as out:
            out.write(chart(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
