#!/usr/bin/python3
"""Peer of analyses/bench/routing_cost.cpp: nearest-prototype routing (paper 003, eq. (5)) the way numpy and
scipy users write it.

    routing_cost.py --dir DIR --repeats R --budget-s S

DIR holds P.npy (K × n prototypes) and X.npy (M × n inputs), float64. Times, with time.perf_counter:

    brute:  argmin_j ‖x − p_j‖² by numpy, in chunks of inputs (‖x‖² − 2 x·p + ‖p‖², then argmin per row)
    kdtree: scipy.spatial.cKDTree(P).query(X)   (the tree's construction included: users build it once, so
            the build time is also reported apart)

and writes the answers to DIR/brute.npy and DIR/kdtree.npy (as float64 indices). One JSON line to stdout.
Exit 2 when numpy or scipy is missing.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from peer_common import import_numpy, parse_timing_args, time_variant  # noqa: E402

np = import_numpy("routing_cost.py")
try:
    from scipy.spatial import cKDTree
except ImportError:
    print("routing_cost.py: scipy is not importable by " + sys.executable + "; install python3-scipy", file=sys.stderr)
    sys.exit(2)


def brute(P, X, chunk):
    p2 = (P * P).sum(axis=1)
    out = np.empty(X.shape[0], dtype=np.int64)
    for s in range(0, X.shape[0], chunk):
        x = X[s:s + chunk]
        d = (x * x).sum(axis=1)[:, None] - 2.0 * x @ P.T + p2[None, :]
        out[s:s + chunk] = d.argmin(axis=1)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    args = parse_timing_args(p, "variant")
    P = np.load(os.path.join(args.dir, "P.npy"))
    X = np.load(os.path.join(args.dir, "X.npy"))
    chunk = max(1, int(2e7 // max(1, P.shape[0])))  # ≤ 160 MB of distances at a time
    tb, ib = time_variant(lambda: brute(P, X, chunk), args.repeats, args.budget_s)
    t0 = time.perf_counter()
    tree = cKDTree(P)
    build_s = time.perf_counter() - t0
    tk, ik = time_variant(lambda: cKDTree(P).query(X)[1], args.repeats, args.budget_s)
    np.save(os.path.join(args.dir, "brute.npy"), ib.astype(np.float64))
    np.save(os.path.join(args.dir, "kdtree.npy"), np.asarray(ik, dtype=np.float64))
    print(json.dumps({"brute_s": tb, "kdtree_s": tk, "kdtree_build_s": build_s, "numpy": np.__version__}))


if __name__ == "__main__":
    main()
