#!/usr/bin/python3
"""Peer of analyses/bench/lsh_vs_faiss.cpp: sign-pattern (hyperplane) LSH codes the way numpy users compute them.

Run by the C++ benchmark as a subprocess (Debian's /usr/bin/python3, where python3-numpy lives), once
per run, with OMP_NUM_THREADS / OPENBLAS_NUM_THREADS set to the benchmark's thread count:

    lsh_vs_faiss.py --points X.npy --weights W16.npy,W64.npy --outdir DIR --repeats R --budget-s S

It loads the points X (N×d float64, one point per row) and, for each hyperplane matrix W (b×d float64,
one hyperplane per row; the same matrices the C++ side and FAISS use), times with time.perf_counter

    np.packbits(X @ W.T > 0, axis=1, bitorder="little")

the product and the packing together, `repeats` times (median reported), stopping once another
repeat would take that W's timing past `budget-s` seconds (at least one repeat always runs).
bitorder="little" puts hyperplane j in bit j % 8 of byte j // 8, FAISS's order (fvecs2bitvecs).
The codes of the last repeat go to DIR/codes_<b>.bin (N × ceil(b/8) bytes, row-major), and one JSON
line with the timings goes to stdout. Exit 2 when numpy is missing or an input is malformed.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))  # peer_common.py lives next to this script
from peer_common import import_numpy, parse_timing_args, run_info, time_variant  # noqa: E402

np = import_numpy("lsh_vs_faiss.py")


def fail(msg):
    print("lsh_vs_faiss.py: " + msg, file=sys.stderr)
    sys.exit(2)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--points", required=True, help="X as an N×d .npy (float64)")
    p.add_argument("--weights", required=True, help="comma-separated b×d .npy files, one per hyperplane count")
    p.add_argument("--outdir", required=True, help="where codes_<b>.bin go")
    args = parse_timing_args(p, "W")

    X = np.load(args.points)
    if X.ndim != 2:
        fail(f"{args.points}: expected a 2-d array, got shape {X.shape}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = {**run_info(np, X), "bits": {}}
    # Start OpenBLAS's thread pool outside the timing (the C++ side warms up the same way).
    w0 = np.ones((16, X.shape[1]))
    np.packbits(X[:4096] @ w0.T > 0, axis=1, bitorder="little")
    for path in args.weights.split(","):
        W = np.ascontiguousarray(np.load(path), dtype=np.float64)
        if W.ndim != 2 or W.shape[1] != X.shape[1]:
            fail(f"{path}: expected b×{X.shape[1]}, got shape {W.shape}")
        b = W.shape[0]
        times, codes = time_variant(lambda: np.packbits(X @ W.T > 0, axis=1, bitorder="little"), args.repeats, args.budget_s)
        codes.tofile(os.path.join(args.outdir, f"codes_{b}.bin"))
        out["bits"][str(b)] = {"median_s": statistics.median(times), "times_s": times, "repeats": len(times),
                               "code_bytes": int(codes.shape[1])}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
