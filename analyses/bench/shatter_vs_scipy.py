#!/usr/bin/python3
"""Peer of analyses/bench/shatter_vs_scipy.cpp: deciding halfspace labelings with scipy's HiGHS.

    shatter_vs_scipy.py --dir DIR --repeats R --budget-s S

DIR holds X.npy (m × n points) and meta.json {"all": m_all, "search": m_search}. Times, with time.perf_counter:

    all:     every labeling of the first m_all points, one LP each:
             scipy.optimize.linprog(0, A_ub = −y_i [x_i, 1], b_ub = −1, bounds free, method="highs")
    search:  Π(m_search) by brute force: every labeling of the first m_search points, one LP each

Writes DIR/all_peer.npy (1 where realisable, per labeling in binary order) and prints one JSON line.
Exit 2 when numpy or scipy is missing.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from peer_common import import_numpy, parse_timing_args, time_variant  # noqa: E402

np = import_numpy("shatter_vs_scipy.py")
try:
    from scipy.optimize import linprog
except ImportError:
    print("shatter_vs_scipy.py: scipy is not importable by " + sys.executable + "; install python3-scipy", file=sys.stderr)
    sys.exit(2)


def realisable(Xa, bits):
    m = Xa.shape[0]
    s = np.where((bits >> np.arange(m)) & 1, 1.0, -1.0)
    A = -(s[:, None] * Xa)
    r = linprog(np.zeros(Xa.shape[1]), A_ub=A, b_ub=-np.ones(m), bounds=[(None, None)] * Xa.shape[1], method="highs")
    return r.status == 0


def decide_all(X, m):
    Xa = np.hstack([X[:m], np.ones((m, 1))])
    return np.array([realisable(Xa, b) for b in range(1 << m)], dtype=np.float64)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    args = parse_timing_args(p, "part")
    X = np.load(os.path.join(args.dir, "X.npy"))
    meta = json.load(open(os.path.join(args.dir, "meta.json")))
    ta, flags = time_variant(lambda: decide_all(X, meta["all"]), args.repeats, args.budget_s)
    ts, flags_s = time_variant(lambda: decide_all(X, meta["search"]), args.repeats, args.budget_s)
    np.save(os.path.join(args.dir, "all_peer.npy"), flags)
    print(json.dumps({"all_s": ta, "search_s": ts, "search_count": int(flags_s.sum())}))


if __name__ == "__main__":
    main()
