"""Shared by the Python peers of the benchmarks in analyses/bench/ (spectrum_vs_numpy.py, lsh_vs_faiss.py).

Each peer puts its own folder first on sys.path and imports this module from there, so that it is
found from any working directory, in the source tree or in the copy the build makes next to the
benchmark executables.
"""
import os
import sys
import time


def import_numpy(script):
    """numpy, or exit 2 with a message naming `script` when this Python cannot import it."""
    try:
        import numpy
    except ImportError:
        print(script + ": numpy is not importable by " + sys.executable + "; install python3-numpy", file=sys.stderr)
        sys.exit(2)
    return numpy


def time_variant(fn, repeats, budget_s):
    """Calls fn `repeats` times, timing each call with time.perf_counter, but stops once another
    repeat would take the total past budget_s (at least one call always runs). Returns (the times,
    the last call's result)."""
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


def parse_timing_args(p, budget_per):
    """Adds --repeats and --budget-s (the budget per `budget_per`) to the argparse parser p, after the
    peer's own options, parses the command line and checks it."""
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--budget-s", type=float, default=300.0, help=f"time budget per {budget_per} for repeats beyond the first")
    args = p.parse_args()
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    return args


def run_info(np, a):
    """The head of the peer's JSON line: numpy's and Python's versions, the shape of the input matrix
    a, and the thread counts the benchmark set."""
    return {"numpy": np.__version__, "python": sys.version.split()[0], "n": a.shape[0], "d": a.shape[1],
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS")}
