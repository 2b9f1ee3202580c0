#!/usr/bin/env python3
"""Compares an analysis's JSON from --device cpu with the same run's from --device cuda (standard library only:
the GPU machine may have nothing else).

Prints one JSON object: whether every check reaches the same verdict, the largest relative difference between
the two runs' numbers (checks' measured values and every number under `data`), and the GPU twin's self-checks
(docs/DESIGN.md, Devices). Timings, the device, the environment and the twin's own record are not compared.

usage: compare.py CPU.json CUDA.json [LABEL]   (LABEL names the row; default: the analysis)
"""
import json
import math
import sys

SKIP = {"elapsed_s", "gpu_twin", "environment", "device", "version", "figures", "files", "figure_error"}


def numbers(value, path=""):
    """(path, number) for every finite number under value."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        if math.isfinite(value):
            yield path, float(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in SKIP:
                yield from numbers(item, f"{path}/{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from numbers(item, f"{path}/{i}")


def relative(a, b):
    scale = max(abs(a), abs(b))
    return 0.0 if scale == 0 else abs(a - b) / scale


def main(cpu_file, gpu_file, label=None):
    with open(cpu_file) as f:
        cpu = json.load(f)
    with open(gpu_file) as f:
        gpu = json.load(f)
    cpu_checks = {c["id"]: c for c in cpu["checks"]}
    verdicts_differ, worst, worst_at, missing = [], 0.0, "", []
    twins = []
    for c in gpu["checks"]:
        if c["id"].startswith("gpu_twin_"):
            twins.append({"id": c["id"], "verdict": c["verdict"], "measured": c["measured"]})
            continue
        other = cpu_checks.get(c["id"])
        if other is None:
            missing.append(c["id"])
            continue
        if other["verdict"] != c["verdict"]:
            verdicts_differ.append(f'{c["id"]}: cpu {other["verdict"]}, cuda {c["verdict"]}')
    pairs = [(dict(numbers(cpu.get("data", {}), "data")), dict(numbers(gpu.get("data", {}), "data")))]
    pairs.append(({k: v for k, v in numbers({c["id"]: c.get("measured") for c in cpu["checks"]}, "measured")},
                  {k: v for k, v in numbers({c["id"]: c.get("measured") for c in gpu["checks"]}, "measured")}))
    compared = 0
    for a, b in pairs:
        for key in a.keys() & b.keys():
            compared += 1
            r = relative(a[key], b[key])
            if r > worst:
                worst, worst_at = r, key
    out = {
        "analysis": label or cpu.get("analysis"),
        "device": gpu.get("device"),
        "gpu": gpu.get("environment", {}).get("gpu", ""),
        "same_verdicts": not verdicts_differ and not missing,
        "verdicts_differ": verdicts_differ,
        "checks_missing_on_cpu": missing,
        "numbers_compared": compared,
        "max_relative_difference": worst,
        "where": worst_at,
        "twin": twins,
        "twin_agrees": bool(twins) and all(t["verdict"] == "holds" for t in twins),
        "twin_share_of_wall_time": gpu.get("data", {}).get("gpu_twin", {}).get("share_of_wall_time"),
        "cpu_elapsed_s": cpu.get("elapsed_s"),
        "cuda_elapsed_s": gpu.get("elapsed_s"),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
