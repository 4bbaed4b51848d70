#!/usr/bin/env python3
"""No tracked file cites a tracker number ("issue N", "issues N and M", "#N"): a reader of
the repository has no tracker to follow, so a comment names the doc section it means, or
gives the reason itself. CHANGELOG.md keeps its historical wording. Files that git calls
binary (pictures, caches) are not read. Outside a git checkout (an unpacked sdist) there is
nothing to list, and the check is skipped (status 77).

usage: check_issue_citations.py REPO_ROOT
"""
import re
import subprocess
import sys

# "issue" or "issues" (any case) and a number, with or without "#", and a bare "#" and a
# number after a space or an opening parenthesis (never a colour, which follows a quote or
# ':', nor another tracker's "nccl#N").
CITATION = re.compile(r"\bissues? ?#?[0-9]+|(?:^|[\s(])#[0-9]+\b", re.IGNORECASE)
KEEPS_HISTORY = {"CHANGELOG.md"}


def main():
    root = sys.argv[1]
    try:
        listed = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        print("not a git checkout: nothing to check")
        return 77
    found = []
    files = [name for name in listed.decode().split("\0") if name and name not in KEEPS_HISTORY]
    for name in files:
        try:
            with open(f"{root}/{name}", "rb") as stream:
                data = stream.read()
        except OSError:  # listed but absent from the work tree (deleted, not yet committed)
            continue
        if b"\0" in data[:8000]:
            continue
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if CITATION.search(line):
                found.append(f"{name}:{number}: {line.strip()}")
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print(f"{len(found)} lines cite a tracker number: name the doc section (docs/README.md maps them) "
              "or give the reason instead", file=sys.stderr)
    print(f"{len(files)} tracked files, {len(found)} lines citing a tracker number")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
