#!/usr/bin/python3
"""Peer of analyses/bench/mp_spectrum_vs_numpy.cpp: the spectrum of K Kᵀ as a numpy user computes it, as one process.

Run by the C++ benchmark as a subprocess (Debian's /usr/bin/python3, where python3-numpy lives), with
OMP_NUM_THREADS / OPENBLAS_NUM_THREADS set to the benchmark's thread count, and timed from outside
as a whole process (interpreter start and `import numpy` included, as a user's script would pay):

    mp_spectrum_vs_numpy.py --input K.npy --outdir DIR

It loads K (n×d) from the .npy the benchmark wrote (the matrix mp_spectrum draws for its trial 0) and
computes np.linalg.eigvalsh(K @ K.T), the n×n matrix users write. The eigenvalues go to
DIR/eig_kkt.npy (ascending, as eigvalsh returns them) and one JSON line with the time of the
eigenproblem itself (time.perf_counter, the matrix product included) goes to stdout.
Exit 2 when numpy is missing.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))  # peer_common.py lives next to this script
from peer_common import import_numpy, run_info  # noqa: E402

np = import_numpy("mp_spectrum_vs_numpy.py")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--input", required=True, help="K as a 2-d .npy")
    p.add_argument("--outdir", required=True, help="where eig_kkt.npy goes")
    args = p.parse_args()

    K = np.load(args.input)
    if K.ndim != 2:
        print(f"mp_spectrum_vs_numpy.py: {args.input}: expected a 2-d array, got shape {K.shape}", file=sys.stderr)
        sys.exit(2)
    out = run_info(np, K)
    t0 = time.perf_counter()
    eig = np.linalg.eigvalsh(K @ K.T)
    out["eigvalsh_s"] = time.perf_counter() - t0
    np.save(os.path.join(args.outdir, "eig_kkt.npy"), np.asarray(eig, dtype=np.float64))
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
