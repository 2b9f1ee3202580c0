#!/usr/bin/python3
"""Peer of analyses/bench/spectrum_vs_numpy.cpp: the spectrum of K Kᵀ the way numpy users compute it.

Run by the C++ benchmark as a subprocess (Debian's /usr/bin/python3, where python3-numpy lives), once
per matrix size, with OMP_NUM_THREADS / OPENBLAS_NUM_THREADS set to the benchmark's thread count:

    spectrum_vs_numpy.py --input K.npy --outdir DIR --repeats R --budget-s S

It loads K (n×d) from the .npy the benchmark wrote, and times, with time.perf_counter and the matrix
product included (users write it in one line):

    ktk: np.linalg.eigvalsh(K.T @ K)   # d×d, the smaller Gram matrix
    kkt: np.linalg.eigvalsh(K @ K.T)   # n×n, what users write

each `repeats` times (median reported), but stops repeating a variant once another repeat would take
its timing past `budget-s` seconds (at least one repeat always runs). The eigenvalues of the last
repeat go to DIR/eig_ktk.npy and DIR/eig_kkt.npy (ascending, as eigvalsh returns them), and one JSON
line with the timings goes to stdout. Exit 2 when numpy is missing.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))  # peer_common.py lives next to this script
from peer_common import import_numpy, parse_timing_args, run_info, time_variant  # noqa: E402

np = import_numpy("spectrum_vs_numpy.py")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--input", required=True, help="K as a 2-d .npy")
    p.add_argument("--outdir", required=True, help="where eig_kkt.npy and eig_ktk.npy go")
    args = parse_timing_args(p, "variant")

    K = np.load(args.input)
    if K.ndim != 2:
        print(f"spectrum_vs_numpy.py: {args.input}: expected a 2-d array, got shape {K.shape}", file=sys.stderr)
        sys.exit(2)
    K = np.ascontiguousarray(K, dtype=np.float64)

    out = run_info(np, K)
    # Start OpenBLAS's thread pool and LAPACK's first-call set-up outside the timing (the C++ side
    # does the same), so that the first repeat measures the computation alone.
    W = np.ones((64, 16)) + np.eye(64, 16)
    np.linalg.eigvalsh(W @ W.T)
    variants = {"ktk": lambda: np.linalg.eigvalsh(K.T @ K), "kkt": lambda: np.linalg.eigvalsh(K @ K.T)}
    for name, fn in variants.items():  # the fast one first
        times, eig = time_variant(fn, args.repeats, args.budget_s)
        np.save(os.path.join(args.outdir, f"eig_{name}.npy"), np.asarray(eig, dtype=np.float64))
        out[name] = {"median_s": statistics.median(times), "times_s": times, "repeats": len(times)}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
