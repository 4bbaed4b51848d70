#!/usr/bin/env python3
"""`pgroups plan --svg/--html` as a user runs it: the SVG parses as XML, has one panel per
mode of the plan, and in each panel every rank 0..W-1 has exactly one cell, labelled with
its number (text and title), coloured like the other members of its group and unlike the
members of a neighbouring group; nodes are outlined; the HTML page holds the same picture
and fetches nothing.

usage: check_plan_picture.py PGROUPS WORKDIR [plan arguments...]
"""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def main():
    pgroups, workdir, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(workdir, exist_ok=True)
    svg_path = os.path.join(workdir, "plan.svg")
    html_path = os.path.join(workdir, "plan.html")
    plan = subprocess.run([pgroups, "plan", *args, "--format", "json", "--svg", svg_path, "--html", html_path],
                          capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    plan = json.loads(plan.stdout)
    world = plan["config"]["world_size"]
    problems = []

    root = ET.parse(svg_path).getroot()
    assert root.tag == SVG + "svg", root.tag
    panels = {g.get("data-mode"): g for g in root.iter(SVG + "g") if g.get("class") == "panel"}
    if sorted(panels) != sorted(plan["kinds"]):
        problems.append(f"panels {list(panels)} differ from the modes {list(plan['modes'])}")
    for mode, panel in panels.items():
        groups = plan["kinds"][mode]["groups"]
        group_of = {rank: index for index, group in enumerate(groups) for rank in group}
        cells = [e for e in panel.iter(SVG + "rect") if e.get("class") == "cell"]
        ranks = sorted(int(c.get("data-rank")) for c in cells)
        if ranks != list(range(world)):
            problems.append(f"{mode}: cells for ranks {ranks[:5]}... ({len(ranks)}), expected 0..{world - 1}")
            continue
        labels = sorted(int(t.text) for t in panel.iter(SVG + "text") if t.get("class") == "label")
        if labels and labels != list(range(world)):
            problems.append(f"{mode}: labels {labels[:5]}... do not name every rank once")
        colour = {}
        for cell in cells:
            rank = int(cell.get("data-rank"))
            title = cell.find(SVG + "title")
            if title is None or not title.text.startswith(f"rank {rank}:"):
                problems.append(f"{mode}: rank {rank} has no title naming it")
            if int(cell.get("data-group")) != group_of[rank]:
                problems.append(f"{mode}: rank {rank} drawn in group {cell.get('data-group')}, the plan says {group_of[rank]}")
            colour.setdefault(group_of[rank], set()).add(cell.get("fill"))
        if any(len(c) != 1 for c in colour.values()):
            problems.append(f"{mode}: a group is drawn in more than one colour")
        if len(groups) > 1 and colour[0] == colour[1]:
            problems.append(f"{mode}: groups 0 and 1 share a colour")
        if "locality" in plan and not [p for p in panel.iter(SVG + "path") if p.get("class") == "node"]:
            problems.append(f"{mode}: no node outline although --gpus-per-node was given")
        if not labels:
            print(f"{mode}: cells too small for labels; titles name the ranks")

    html = open(html_path, encoding="utf-8").read()
    if not html.startswith("<!DOCTYPE html>") or open(svg_path, encoding="utf-8").read() not in html:
        problems.append("the HTML page does not hold the SVG picture")
    fetched = re.findall(r'(?:src|href)\s*=\s*"(?!#)[^"]*"|url\((?!#)[^)]*\)|@import', html)
    if fetched:
        problems.append(f"the HTML page refers to outside resources: {fetched[:3]}")

    for line in problems:
        print("FAIL: " + line)
    print(f"checked {len(panels)} panels x {world} ranks in {os.path.getsize(svg_path)} bytes of SVG")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
