#!/usr/bin/env python3
"""README's sample of the verification report, generated from figures/REPORT.md (issue 47).

The sample is REPORT.md's opening as a quotation: its title, the table of counts per paper and the first
list, "What the papers get wrong", cut to its first three entries. It sits in README.md between the lines
<!-- report-sample: begin --> and <!-- report-sample: end -->, so nothing in README copies the report by hand.

    readme_sample.py --write SOURCE_DIR   rewrite README.md's sample from figures/REPORT.md (the main command)
    readme_sample.py --check SOURCE_DIR   exit 1 unless README.md's sample is what --write would write (ctest)
"""
import os
import re
import sys

BEGIN = "<!-- report-sample: begin -->"
END = "<!-- report-sample: end -->"
ENTRIES = 3


def sample(report):
    lines = report.splitlines()
    out = [lines[0], ""]  # "# sparseact verification report"
    table = [l for l in lines if l.startswith("| paper | holds")]
    if not table:
        raise SystemExit("readme_sample: REPORT.md has no table of counts")
    at = lines.index(table[0])
    while at < len(lines) and lines[at].startswith("|"):
        out.append(lines[at])
        at += 1
    out.append("")
    heading = next((i for i, l in enumerate(lines) if l.startswith("### 1. ")), None)
    if heading is not None:
        out += [lines[heading], ""]
        entries = [l for l in lines[heading + 1:] if l.startswith("- ") or l.startswith("### ")]
        shown = []
        for l in entries:
            if l.startswith("### "):
                break
            shown.append(l)
        out += shown[:ENTRIES] if shown else ["Nothing at this scale."]
        if len(shown) > ENTRIES:
            out.append(f"- … and {len(shown) - ENTRIES} more in the report")
    # REPORT.md's links are relative to figures/: from README they point into it.
    relink = re.compile(r"\]\((?![a-z]+:)([^)]*)\)")
    out = [relink.sub(lambda m: "](figures/" + ("REPORT.md" if m.group(1).startswith("#") else "") + m.group(1) + ")", l) for l in out]
    return "\n".join("> " + l if l else ">" for l in out)


def expected_readme(readme, report):
    if BEGIN not in readme or END not in readme:
        raise SystemExit(f"readme_sample: README.md lacks the markers {BEGIN} … {END}")
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + "\n" + sample(report) + "\n" + END + tail


def main(argv):
    if len(argv) != 3 or argv[1] not in ("--write", "--check"):
        print(__doc__.strip().splitlines()[-2].strip(), file=sys.stderr)
        return 2
    root = argv[2]
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    with open(os.path.join(root, "figures", "REPORT.md"), encoding="utf-8") as f:
        report = f.read()
    want = expected_readme(readme, report)
    if argv[1] == "--check":
        if want != readme:
            print("readme_sample: README.md's report sample differs from figures/REPORT.md's opening; "
                  "run tools/report/readme_sample.py --write .", file=sys.stderr)
            return 1
        return 0
    if want != readme:
        tmp = os.path.join(root, "README.md.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(want)
        os.replace(tmp, os.path.join(root, "README.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
