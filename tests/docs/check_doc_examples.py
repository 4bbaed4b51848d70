#!/usr/bin/env python3
"""The command-line examples a reader copies first: every fenced block after a line
`<!-- run by tests/docs -->` (or `<!-- run by tests/docs: NAME=TEXT; NAME=TEXT -->`, files the
block's commands read, `\\n` for a line break) in README.md and docs/**/*.md is run here.

In such a block a line `$ COMMAND` (continued by a trailing backslash) is run by the shell in
a fresh directory holding the named files, with the built `pgroups` first on PATH; the lines
up to the next `$ ` are what it must print (standard output and error together, in order):
a line that is `...` alone stands for any number of lines, a line ending in `...` for any
line that begins with the rest, every other line must be printed as it is shown.

    check_doc_examples.py ROOT PGROUPS_CLI            the repository's pages
    check_doc_examples.py --self-test PGROUPS_CLI     a page the check must reject, and one it must pass

Exits 0 when every block printed what its page shows, 1 naming the page, the line and the
first difference otherwise, 77 (a skip) when no page has a marked block.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import tempfile
from typing import List, Tuple

MARKER = re.compile(r"^<!-- run by tests/docs(?::\s*(?P<files>.*?))?\s*-->$")
COMMAND_SECONDS = 60


def marked_blocks(page: pathlib.Path) -> List[Tuple[int, dict, List[str]]]:
    """(line number of the block, files, the block's lines) for each marked block."""
    lines = page.read_text().splitlines()
    found = []
    for i, line in enumerate(lines):
        marker = MARKER.match(line.strip())
        if not marker or i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            continue
        files = {}
        for entry in filter(None, (part.strip() for part in (marker.group("files") or "").split(";"))):
            name, _, text = entry.partition("=")
            files[name.strip()] = text.replace("\\n", "\n")
        end = next((j for j in range(i + 2, len(lines)) if lines[j].startswith("```")), len(lines))
        found.append((i + 3, files, lines[i + 2:end]))
    return found


def commands_of(block: List[str]) -> List[Tuple[str, List[str]]]:
    """(command, the lines it must print) for each `$ ` line of a block."""
    out: List[Tuple[str, List[str]]] = []
    i = 0
    while i < len(block):
        if not block[i].startswith("$ "):
            i += 1
            continue
        command = block[i][2:]
        while command.endswith("\\") and i + 1 < len(block):
            i += 1
            command = command[:-1] + " " + block[i].strip()
        i += 1
        shown = []
        while i < len(block) and not block[i].startswith("$ "):
            shown.append(block[i])
            i += 1
        while shown and not shown[-1].strip():
            shown.pop()
        out.append((command, shown))
    return out


def difference(shown: List[str], printed: List[str]) -> str:
    """Empty when `printed` is what `shown` shows; otherwise the first difference."""
    p = 0
    for s, want in enumerate(shown):
        want = want.rstrip()
        if want.strip() == "...":
            if s + 1 == len(shown):
                return ""
            following = shown[s + 1].rstrip()
            while p < len(printed) and not matches(following, printed[p]):
                p += 1
            continue
        if p >= len(printed):
            return f"shown line {s + 1} {want!r}: nothing more was printed"
        if not matches(want, printed[p]):
            return f"shown line {s + 1} {want!r}, printed {printed[p].rstrip()!r}"
        p += 1
    if p < len(printed):
        return f"printed more than shown, from {printed[p].rstrip()!r}"
    return ""


def matches(want: str, got: str) -> bool:
    got = got.rstrip()
    if want.endswith("..."):
        return got.startswith(want[:-3])
    return got == want


def check(root: pathlib.Path, cli: str) -> Tuple[int, List[str]]:
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))] if (root / "docs").is_dir() else \
        sorted(root.glob("*.md"))
    env = dict(os.environ, PATH=f"{pathlib.Path(cli).resolve().parent}{os.pathsep}{os.environ.get('PATH', '')}")
    failures: List[str] = []
    count = 0
    for page in pages:
        if not page.is_file():
            continue
        for line, files, block in marked_blocks(page):
            for command, shown in commands_of(block):
                count += 1
                with tempfile.TemporaryDirectory(prefix="pgroups_doc_example_") as scratch:
                    for name, text in files.items():
                        pathlib.Path(scratch, name).write_text(text)
                    run = subprocess.run(command, shell=True, cwd=scratch, env=env, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True, timeout=COMMAND_SECONDS)
                wrong = difference(shown, run.stdout.splitlines())
                if wrong:
                    failures.append(f"{page.relative_to(root)}:{line}: `{command}`: {wrong}")
    return count, failures


def self_test(cli: str) -> int:
    with tempfile.TemporaryDirectory(prefix="pgroups_doc_example_self_test_") as scratch:
        page = pathlib.Path(scratch, "page.md")
        page.write_text("<!-- run by tests/docs: m.json=[1, 0] -->\n```\n$ cat m.json\n[1, 0]\n"
                        "$ echo a; echo b\n...\nb\n```\n\n"
                        "<!-- run by tests/docs -->\n```\n$ echo right\nwrong\n```\n")
        count, failures = check(pathlib.Path(scratch), cli)
    expected = ["page.md:12: `echo right`: shown line 1 'wrong', printed 'right'"]
    if count != 3 or failures != expected:
        print(f"check_doc_examples self-test: {count} commands, failures {failures}; expected 3 and {expected}")
        return 1
    print("check_doc_examples self-test: a wrong example is flagged, the others pass")
    return 0


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--self-test":
        return self_test(sys.argv[2])
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    count, failures = check(pathlib.Path(sys.argv[1]), sys.argv[2])
    for failure in failures:
        print(failure)
    if count == 0:
        print("no page has a block marked '<!-- run by tests/docs -->'")
        return 77
    print(f"{count} documented commands run, {len(failures)} printed other than their page shows")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
