#!/usr/bin/python3
"""The report's web page (figures/report/index.html, issue 49) in Debian's headless Chromium.

sparseact_report runs on a copy of the repository's results (their JSON, runs.json, trends.json and ERRATA.md; no
figures), then Chromium loads the page it wrote from the file system:
- --dump-dom with filter fragments (#paper=003&kind=claim&verdict=holds, …): the rows shown equal REPORT.md's counts
  table for that filter, every shown row matches the filter, and the page records no script error;
- the page's counts table says what REPORT.md's says, cell for cell;
- a text search shows only rows that contain the text; "at the paper's setup" and "departs" split the rows;
- the console logs no error (--enable-logging=stderr);
- --screenshot of the top of the page: a PNG of the window's size that is not blank;
- without its figures the page is under 1 MB, and every image has alt text.
Usage: test_report_page.py SPARSEACT_REPORT REPO. Exit 0 pass, 1 fail, 77 skipped (no Chromium, or it cannot start)."""
import html.parser
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

VERDICTS = ["holds", "not refuted", "contradicted", "not reproduced", "direction only", "erratum", "inconclusive"]
# REPORT.md's counts table: its columns, by the verdict or kind they count.
COLUMNS = {"holds": 1, "not refuted": 2, "contradicted": 3, "not reproduced": 4, "direction only": 5, "erratum": 6,
           "inconclusive": 7, "own-question": 8, "observation": 9, "self-check": 10}


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Page(html.parser.HTMLParser):
    """The dumped DOM: every check's tbody (its data attributes, hidden or not), the first table's cells, the <html>
    element's data attributes and every image's alt."""

    def __init__(self):
        super().__init__()
        self.checks, self.items, self.first_table, self.root, self.alts = [], [], [], {}, []
        self._table_depth, self._tables_seen, self._cell, self._row = 0, 0, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "li" and "data-paper" in a:
            self.items.append(a)
        if tag == "html":
            self.root = a
        elif tag == "tbody" and "check" in (a.get("class") or "").split():
            self.checks.append(a)
        elif tag == "img":
            self.alts.append(a.get("alt"))
        elif tag == "table":
            self._tables_seen += 1
        elif self._tables_seen == 1 and tag == "tr":
            self._row = []
        elif self._tables_seen == 1 and tag in ("td", "th") and self._row is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if self._tables_seen == 1 and tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif self._tables_seen == 1 and tag == "tr" and self._row is not None:
            self.first_table.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def counts_table(report_md):
    """REPORT.md's counts table: paper → its cells (strings)."""
    rows = {}
    lines = report_md.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("| paper | holds |"))
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells
    return rows


def png_size_and_variety(path):
    """The PNG's width and height, and the number of distinct byte values in its decompressed image data."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    width, height = struct.unpack(">II", data[16:24])
    idat, at = b"", 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"IDAT":
            idat += data[at + 8:at + 8 + length]
        at += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    report_bin, repo = sys.argv[1], sys.argv[2]
    browser = chromium()
    if browser is None:
        print("skipped: Chromium is not installed (Debian package chromium; `bash sparseact.sh test` installs it)")
        return 77
    failures = []

    def check(ok, what):
        print(f"{'ok  ' if ok else 'FAIL'} {what}", flush=True)
        if not ok:
            failures.append(what)

    work = tempfile.mkdtemp(prefix="sparseact-report-page-")
    try:
        figures = os.path.join(work, "figures")
        shutil.copytree(os.path.join(repo, "figures"), figures,
                        ignore=lambda d, names: [n for n in names if n.endswith((".png", ".svg", ".csv", ".pdf")) or n in
                                                 (".sweep", "report", "bench")])
        shutil.copy(os.path.join(repo, "ERRATA.md"), work)
        made = subprocess.run([report_bin, figures], capture_output=True, text=True)
        if made.returncode != 0:
            print(made.stdout + made.stderr)
            check(False, f"sparseact_report exits 0 on the repository's results (exit {made.returncode})")
            return 1
        page = os.path.join(figures, "report", "index.html")
        with open(os.path.join(figures, "REPORT.md"), encoding="utf-8") as f:
            table = counts_table(f.read())
        check(os.path.getsize(page) < 1 << 20, f"the page without its figures is under 1 MB ({os.path.getsize(page)} bytes)")

        profile = os.path.join(work, "profile")
        # --disable-dev-shm-usage: a container's small /dev/shm crashes Chromium's renderer.
        base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-extensions", f"--user-data-dir={profile}", "--virtual-time-budget=2000"]

        def dump(fragment):
            for attempt in range(2):  # a renderer that dies under load gets one more try; a page that fails, none
                r = subprocess.run(base + ["--enable-logging=stderr", "--v=0", "--dump-dom", f"file://{page}#{fragment}"],
                                   capture_output=True, text=True, timeout=120)
                p = Page()
                p.feed(r.stdout)
                if p.checks:
                    break
            console = [l for l in r.stderr.splitlines() if "CONSOLE" in l and re.search(r"error|uncaught", l, re.I)]
            return r, p, console

        r, everything, console = dump("")
        if r.returncode != 0 or not everything.checks:
            print(r.stderr[-2000:])
            print("skipped: Chromium cannot start here (see its output above)")
            return 77
        check(not console and "data-errors" not in everything.root,
              f"the page loads without a console or script error ({console[:2]}, {everything.root.get('data-errors')})")
        total = sum(int(cells[c]) if c != 10 else int(cells[c].split()[0]) for cells in [table["all"]] for c in COLUMNS.values())
        check(len(everything.checks) == total and not any("hidden" in c for c in everything.checks),
              f"unfiltered, every check is one shown row ({len(everything.checks)} rows; REPORT.md counts {total})")
        check(everything.first_table[1:] == [[c.replace("\\|", "|") for c in cells] for cells in table.values()],
              "the page's counts table is REPORT.md's, cell for cell")
        check(all(a for a in everything.alts) and everything.alts, f"every image has alt text ({len(everything.alts)} images)")
        check(everything.items and not any("hidden" in i for i in everything.items),
              f"unfiltered, every list line is shown ({len(everything.items)} lines)")

        # Filters, against REPORT.md's counts: each paper's claims by verdict, and every kind.
        filters = []
        for paper in table:
            if paper == "all":
                continue
            for v in ("holds", "not reproduced", "inconclusive"):
                filters.append((f"paper={paper}&kind=claim&verdict={v.replace(' ', '+')}", {"paper": paper, "kind": "claim", "verdict": v},
                                int(table[paper][COLUMNS[v]])))
            filters.append((f"paper={paper}&kind=self-check", {"paper": paper, "kind": "self-check"},
                            int(table[paper][COLUMNS["self-check"]].split()[0])))
        for kind in ("own-question", "observation"):
            filters.append((f"kind={kind}", {"kind": kind}, int(table["all"][COLUMNS[kind]])))
        filters.append(("kind=claim&verdict=erratum", {"kind": "claim", "verdict": "erratum"}, int(table["all"][COLUMNS["erratum"]])))
        for fragment, want, expected in filters:
            r, p, console = dump(fragment)
            shown = [c for c in p.checks if "hidden" not in c]
            matches = all(c.get(f"data-{k}") == v for c in shown for k, v in want.items())
            check(len(shown) == expected and matches and p.root.get("data-shown") == str(expected) and not console
                  and "data-errors" not in p.root,
                  f"#{fragment}: {len(shown)} rows shown, REPORT.md counts {expected}; all match: {matches}")
            # The lists' lines follow the filters too (all but the setup).
            lines = [i for i in p.items if "hidden" not in i]
            check(all(i.get(f"data-{k}") == v for i in lines for k, v in want.items() if k != "setup"),
                  f"#{fragment}: the {len(lines)} list lines shown all match")

        some = everything.checks[len(everything.checks) // 2]
        word = some["data-text"].split()[2]  # a check id
        r, p, _ = dump(f"q={word}")
        shown = [c for c in p.checks if "hidden" not in c]
        check(shown and all(word in c["data-text"] for c in shown) and
              len(shown) == sum(word in c["data-text"] for c in everything.checks), f"#q={word}: {len(shown)} rows, each contains it")
        split = []
        for setup in ("paper", "departs"):
            r, p, _ = dump(f"setup={setup}")
            shown = [c for c in p.checks if "hidden" not in c]
            split.append(len(shown))
            check(all(c["data-setup"] == setup for c in shown), f"#setup={setup}: {len(shown)} rows, all {setup}")
        check(sum(split) == total and all(split), f"the setup filter splits the {total} rows ({split[0]} + {split[1]})")

        shot = os.path.join(work, "top.png")
        subprocess.run(base + ["--hide-scrollbars", "--window-size=1200,900", f"--screenshot={shot}", f"file://{page}"],
                       capture_output=True, timeout=120)
        info = png_size_and_variety(shot) if os.path.exists(shot) else None
        check(info is not None and info[:2] == (1200, 900) and info[2] > 16,
              f"a screenshot of the top of the page is a 1200×900 PNG with content ({info})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("REPORT PAGE " + ("PASS" if not failures else "FAIL: " + "; ".join(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
