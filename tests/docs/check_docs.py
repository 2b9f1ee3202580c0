#!/usr/bin/env python3
"""The repository stands on its own (issue 42): two checks on the source tree, run by ctest as docs_links.

1. No tracked file refers to the project's former shared folder beside the checkout (the pattern below,
   spelled in pieces so that this file does not match itself; it is also skipped by path). A clone has no
   such folder: the design is docs/DESIGN.md, the papers are docs/papers.md, the errata ERRATA.md.
2. Every relative link and image in README.md, ERRATA.md and docs/*.md resolves to a file or folder inside
   the repository; a link to a heading (file.md#anchor or #anchor) must name a heading of that file
   (GitHub's anchor rules). Links with a scheme (https:, mailto:) are not followed.

    check_docs.py SOURCE_DIR

Files come from `git ls-files` where SOURCE_DIR is a git checkout, else from walking the tree (build*
folders and .git left out). Exit 0 when both hold, 1 with one line per problem otherwise.
"""
import os
import re
import subprocess
import sys

SELF = "tests/docs/check_docs.py"
DOTS = ".."
FORBIDDEN = re.compile(re.escape(DOTS + "/shared") + "|" + re.escape("shared/" + "DESIGN") + "|" + re.escape("shared/" + "papers"))


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
        files = [f for f in out.decode("utf-8", "surrogateescape").split("\0") if f]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git" and not x.startswith("build")]
        files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return files


def check_shared(root, files):
    problems = []
    for rel in files:
        if rel == SELF:
            continue
        path = os.path.join(root, rel)
        if not os.path.isfile(path) or os.path.islink(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data[:8192]:
            continue  # binary
        text = data.decode("utf-8", "replace")
        for n, line in enumerate(text.splitlines(), 1):
            if FORBIDDEN.search(line):
                problems.append(f"{rel}:{n}: refers outside the repository: {line.strip()[:120]}")
    return problems


FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    h = h.replace("`", "").replace("*", "")
    h = h.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def prose_lines(text):
    """Lines outside fenced code blocks, with inline code spans blanked out."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, re.sub(r"`[^`]*`", "``", line)


def anchors(path, cache={}):
    """The anchors of a Markdown file's headings (outside fenced code), duplicates numbered as GitHub does."""
    if path not in cache:
        seen, found, fenced = {}, set(), False
        with open(path, encoding="utf-8") as f:
            for line in f.read().splitlines():
                if FENCE.match(line):
                    fenced = not fenced
                    continue
                m = None if fenced else HEADING.match(line)
                if m:
                    base = slug(m.group(2))
                    k = seen.get(base, 0)
                    found.add(base if k == 0 else f"{base}-{k}")
                    seen[base] = k + 1
        cache[path] = found
    return cache[path]


def check_links(root, files):
    problems = []
    real_root = os.path.realpath(root)
    pages = [f for f in files if f in ("README.md", "ERRATA.md") or (f.startswith("docs/") and f.endswith(".md"))]
    for rel in sorted(pages):
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for n, line in prose_lines(text):
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                    continue  # https:, mailto:, ...
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                where = f"{rel}:{n}: link ({target})"
                if not os.path.realpath(dest).startswith(real_root + os.sep) and os.path.realpath(dest) != real_root:
                    problems.append(f"{where} leaves the repository")
                    continue
                if not os.path.exists(dest):
                    problems.append(f"{where} names a file that does not exist")
                    continue
                if anchor and dest.endswith(".md") and os.path.isfile(dest) and anchor.lower() not in anchors(dest):
                    problems.append(f"{where} names no heading of {os.path.relpath(dest, root)}")
    return problems, len(pages)


def main():
    if len(sys.argv) != 2:
        print("usage: check_docs.py SOURCE_DIR", file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    files = tracked_files(root)
    problems = check_shared(root, files)
    link_problems, pages = check_links(root, files)
    problems += link_problems
    for p in problems:
        print(p)
    print(f"check_docs: {len(files)} files searched for references outside the repository, "
          f"links of {pages} pages checked: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
