#!/usr/bin/env python3
"""No tracked file cites a tracker number ("issue N", "issues N and M", "#N"): a reader of
the repository has no tracker to follow, so a comment names the doc section it means, or
gives the reason itself. CHANGELOG.md keeps its historical wording. Files that git calls
binary (pictures, caches) are not read. Outside a git checkout (an unpacked sdist) there is
nothing to list, and the check is skipped (status 77).

usage: check_issue_citations.py REPO_ROOT | --self-test
"""
import re
import subprocess
import sys

# "issue" or "issues" (any case) and a number, with or without "#", and a bare "#" and a
# number after a space or an opening parenthesis (never a colour, which follows a quote or
# ':', nor another tracker's "nccl#N").
CITATION = re.compile(r"\bissues? ?#?[0-9]+|(?:^|[\s(])#[0-9]+\b", re.IGNORECASE)
KEEPS_HISTORY = {"CHANGELOG.md"}


def citations(root):
    """(tracked file count, the lines citing a number); None outside a git checkout."""
    try:
        listed = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
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
    return len(files), found


def self_test():
    """The check finds a citation in a tracked file of a scratch repository, and only it."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        lines = {
            "a.cpp": "// see issue " + "7 for why\n",
            "b.py": "# Issues " + "3 and 4\n",
            "c.sh": "# fixed in (#" + "9)\n",
            "d.cpp": 'fill="#555" stroke:#999 nccl#964\n',
            "CHANGELOG.md": "- issue " + "5, historical\n",
        }
        for name, text in lines.items():
            with open(f"{root}/{name}", "w") as out:
                out.write(text)
        try:
            subprocess.run(["git", "-C", root, "init", "-q"], check=True, capture_output=True)
            subprocess.run(["git", "-C", root, "add", "."], check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError):
            print("no git here: the self-test cannot make a repository")
            return 77
        result = citations(root)
        flagged = sorted(line.split(":")[0] for line in result[1]) if result else None
        print(f"self-test: flagged {flagged}")
        return 0 if flagged == ["a.cpp", "b.py", "c.sh"] else 1


def main():
    if sys.argv[1] == "--self-test":
        return self_test()
    result = citations(sys.argv[1])
    if result is None:
        print("not a git checkout: nothing to check")
        return 77
    count, found = result
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print(f"{len(found)} lines cite a tracker number: name the doc section (docs/README.md maps them) "
              "or give the reason instead", file=sys.stderr)
    print(f"{count} tracked files, {len(found)} lines citing a tracker number")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
