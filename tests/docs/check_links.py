#!/usr/bin/env python3
"""Every relative link in README.md and docs/**/*.md reaches a file of the repository, and
every #anchor a heading of the page it names, so that moving or renaming a page or a
heading cannot leave a link behind. Links to the web (http:, https:, mailto:) are not
followed: the check runs without a network.

usage: check_links.py REPO_ROOT
"""
import pathlib
import re
import sys

# [text](target) and ![alt](target); the target ends at whitespace or ')'.
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target, a reference definition.
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")


def slug(heading):
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    text = text.lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page):
    found = set()
    counts = {}
    for line in blank_code(page.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            base = slug(match.group(1))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    for name in re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", page.read_text(encoding="utf-8")):
        found.add(name)
    return found


def blank_code(text):
    """The text with fenced blocks blanked (their newlines kept, so line numbers stay)."""
    return FENCE.sub(lambda match: "\n" * match.group(0).count("\n"), text)


def targets(page):
    text = blank_code(page.read_text(encoding="utf-8"))
    text = INLINE_CODE.sub("", text)
    # Over the whole text: a link's text may wrap onto the next line.
    for match in LINK.finditer(text):
        yield text.count("\n", 0, match.start()) + 1, match.group(1)
    for match in REFERENCE.finditer(text):
        yield text.count("\n", 0, match.start()) + 1, match.group(1)


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    pages = [root / "README.md"] + sorted((root / "docs").rglob("*.md"))
    broken = []
    checked = 0
    for page in pages:
        for line, target in targets(page):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            checked += 1
            path, _, anchor = target.partition("#")
            where = page if not path else (page.parent / path).resolve()
            name = f"{page.relative_to(root)}:{line}: link '{target}'"
            if not where.exists():
                broken.append(f"{name}: no file {where.relative_to(root) if root in where.parents else where}")
            elif root not in where.parents and where != root:
                broken.append(f"{name}: points outside the repository")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                broken.append(f"{name}: no heading '#{anchor}' in {where.relative_to(root)}")
    for line in broken:
        print(line, file=sys.stderr)
    print(f"{checked} relative links in {len(pages)} pages, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
