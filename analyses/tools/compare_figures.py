#!/usr/bin/env python3
"""Compare figures/ JSON `data`, CSV tables and check verdicts between a git revision and the working tree.
usage: analyses/tools/compare_figures.py REPO OLD_REV [analysis ...]"""
import csv, io, json, math, subprocess, sys, os

repo, rev = sys.argv[1], sys.argv[2]
names = sys.argv[3:] or sorted(d for d in os.listdir(os.path.join(repo, "figures")) if os.path.isdir(os.path.join(repo, "figures", d)) and d != "bench")

def old(path):
    try:
        return subprocess.run(["git", "-C", repo, "show", f"{rev}:{path}"], capture_output=True, check=True).stdout.decode()
    except subprocess.CalledProcessError:
        return None

def rel(a, b):
    if a == b: return 0.0
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b): return 0.0
    return abs(a - b) / max(abs(a), abs(b), 1e-300)

def walk(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b: out.append((path + "/" + k, "only in " + ("new" if k in b else "old"), None)); continue
            walk(a[k], b[k], path + "/" + k, out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b): out.append((path, f"length {len(a)} -> {len(b)}", None)); return
        for i, (x, y) in enumerate(zip(a, b)): walk(x, y, f"{path}[{i}]", out)
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        r = rel(float(a), float(b))
        if r > 0: out.append((path, f"{a} -> {b}", r))
    elif a != b:
        out.append((path, f"{str(a)[:60]!r} -> {str(b)[:60]!r}", None))

for name in names:
    newf = os.path.join(repo, "figures", name, name + ".json")
    o = old(f"figures/{name}/{name}.json")
    if o is None or not os.path.exists(newf): print(f"== {name}: missing old or new"); continue
    jo, jn = json.loads(o), json.load(open(newf))
    diffs = []
    walk(jo.get("data"), jn.get("data"), "data", diffs)
    vo = {c["id"]: c["holds"] for c in jo["checks"]}; vn = {c["id"]: c["holds"] for c in jn["checks"]}
    verdicts = [f"{k}: {vo.get(k)} -> {vn.get(k)}" for k in sorted(set(vo) | set(vn)) if vo.get(k) != vn.get(k)]
    csvd = []
    for f in jn.get("files", []):
        if not f.endswith(".csv"): continue
        oc = old(f"figures/{name}/{f}")
        if oc is None: csvd.append(f"{f}: new file"); continue
        ro = list(csv.reader(io.StringIO(oc))); rn = list(csv.reader(open(os.path.join(repo, "figures", name, f))))
        if ro[0] != rn[0] or len(ro) != len(rn): csvd.append(f"{f}: shape/header {len(ro)}x{len(ro[0])} -> {len(rn)}x{len(rn[0])}"); continue
        worst = 0.0
        for x, y in zip(ro[1:], rn[1:]):
            for u, v in zip(x, y):
                try: worst = max(worst, rel(float(u), float(v)))
                except ValueError: worst = max(worst, 0.0 if u == v else 1.0)
        if worst > 0: csvd.append(f"{f}: max relative difference {worst:.3g}")
    big = [d for d in diffs if d[2] is None or d[2] > 1e-9]
    print(f"== {name}: {len(diffs)} data differences ({len(big)} above 1e-9 relative); verdict changes: {verdicts or 'none'}")
    for d in big[:12]: print("   ", d[0], d[1], "" if d[2] is None else f"(rel {d[2]:.3g})")
    if len(big) > 12: print(f"    ... {len(big) - 12} more")
    for c in csvd: print("    csv", c)
