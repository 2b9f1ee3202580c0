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
import time

try:
    import numpy as np
except ImportError:
    print("spectrum_vs_numpy.py: numpy is not importable by " + sys.executable + "; install python3-numpy", file=sys.stderr)
    sys.exit(2)


def time_variant(fn, repeats, budget_s):
    times, result = [], None
    start = time.perf_counter()
    for i in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        spent = time.perf_counter() - start
        if i + 1 < repeats and spent + times[-1] > budget_s:
            break
    return times, result


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--input", required=True, help="K as a 2-d .npy")
    p.add_argument("--outdir", required=True, help="where eig_kkt.npy and eig_ktk.npy go")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--budget-s", type=float, default=300.0, help="time budget per variant for repeats beyond the first")
    args = p.parse_args()
    if args.repeats < 1:
        p.error("--repeats must be >= 1")

    K = np.load(args.input)
    if K.ndim != 2:
        print(f"spectrum_vs_numpy.py: {args.input}: expected a 2-d array, got shape {K.shape}", file=sys.stderr)
        sys.exit(2)
    K = np.ascontiguousarray(K, dtype=np.float64)

    out = {"numpy": np.__version__, "python": sys.version.split()[0], "n": K.shape[0], "d": K.shape[1],
           "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
           "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS")}
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
