#!/usr/bin/env python3
"""An analysis's main stays readable at once (docs/DESIGN.md, Layout: "about 150 lines"; issue 47).

    check_main_length.py SOURCE_DIR [LIMIT]

Counts the lines of `int main(` … its closing `}` (the first line that is exactly "}") in every
analyses/*.cpp: the analyses, whose main DESIGN.md asks to read like the experiment section it reproduces
(the benchmarks under analyses/bench/ are not held to it). Exit 0 when every main has at most LIMIT lines (default 200:
"about 150" with room for a long check's prose), 1 with one line per file over it (move the science
into src/sparseact/<topic>/, the check plumbing into named functions), 2 on bad usage.
"""
import glob
import os
import re
import sys


def main_length(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    start = next((i for i, line in enumerate(lines) if re.match(r"int main\(", line)), None)
    if start is None:
        return None
    end = next((i for i in range(start, len(lines)) if lines[i] == "}"), None)
    return None if end is None else end - start + 1


def main():
    if len(sys.argv) not in (2, 3):
        print("usage: check_main_length.py SOURCE_DIR [LIMIT]", file=sys.stderr)
        return 2
    root = sys.argv[1]
    try:
        limit = int(sys.argv[2]) if len(sys.argv) == 3 else 200
    except ValueError:
        print(f"check_main_length: LIMIT {sys.argv[2]!r} is not an integer", file=sys.stderr)
        return 2
    files = sorted(glob.glob(os.path.join(root, "analyses", "*.cpp")))
    if not files:
        print(f"check_main_length: no analyses/*.cpp under {root}", file=sys.stderr)
        return 2
    over, longest = [], (0, "")
    for f in files:
        n = main_length(f)
        if n is None:
            continue
        longest = max(longest, (n, os.path.relpath(f, root)))
        if n > limit:
            over.append(f"{os.path.relpath(f, root)}: main has {n} lines (limit {limit})")
    for line in over:
        print(line)
    print(f"check_main_length: {len(files)} files, longest main {longest[0]} lines ({longest[1]}): {len(over)} over {limit}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
