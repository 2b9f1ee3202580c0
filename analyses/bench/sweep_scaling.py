#!/usr/bin/env python3
"""Peer of analyses/bench/sweep_scaling: the same sweep written the way an mpi4py user would.

Launched under mpirun by the benchmark; prints one JSON line on rank 0.

  sweep     mp_sweep's grid (c, n, trial): K with N(0, 2/(n+d)) entries (Xavier normal), eigvalsh of
            the smaller Gram matrix, λ_max/λ_min⁺; items sorted by cost (min(n,d)²·max(n,d)), dealt
            cyclically to the ranks, results gathered with comm.gather. Whole-process time is
            measured by the caller; this reports the compute phase too.
  pool      mpi4py.futures.MPIPoolExecutor.map over N empty tasks (run as
            `mpirun -n R python3 -m mpi4py.futures sweep_scaling.py pool N`): µs per task.
  pingpong  one-byte round trips between ranks 0 and 1 with preallocated buffers: µs per message.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_common import import_numpy  # noqa: E402


def empty_task(i):
    return i


def sweep(cs, ns, trials, seed):
    np = import_numpy("sweep_scaling.py")
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    items = [(c, n, t) for c in cs for n in ns for t in range(trials)]
    def cost(item):
        c, n, _ = item
        d = max(2, round(n / c))
        return min(n, d) ** 2 * max(n, d)
    order = sorted(range(len(items)), key=lambda i: -cost(items[i]))
    start = time.perf_counter()
    mine = {}
    for k in order[rank::size]:
        c, n, t = items[k]
        d = max(2, round(n / c))
        rng = np.random.default_rng([seed, k])
        K = rng.standard_normal((n, d)) * np.sqrt(2.0 / (n + d))
        G = K.T @ K if n >= d else K @ K.T
        ev = np.linalg.eigvalsh(G)
        mine[k] = float(ev[-1] / ev[0])
    gathered = comm.gather(mine, root=0)
    if rank == 0:
        ratios = {}
        for part in gathered:
            ratios.update(part)
        elapsed = time.perf_counter() - start
        print(json.dumps({"items": len(ratios), "compute_s": elapsed}))


def pool(n):
    from mpi4py.futures import MPIPoolExecutor
    with MPIPoolExecutor() as ex:
        list(ex.map(empty_task, range(10)))  # workers up
        t0 = time.perf_counter()
        out = list(ex.map(empty_task, range(n)))
        elapsed = time.perf_counter() - t0
    assert out == list(range(n))
    print(json.dumps({"tasks": n, "us_per_task": elapsed / n * 1e6}))


def pingpong(n):
    np = import_numpy("sweep_scaling.py")
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    buf = np.zeros(1, dtype=np.uint8)
    comm.Barrier()
    t0 = time.perf_counter()
    for _ in range(n):
        if rank == 0:
            comm.Send([buf, MPI.BYTE], dest=1)
            comm.Recv([buf, MPI.BYTE], source=1)
        elif rank == 1:
            comm.Recv([buf, MPI.BYTE], source=0)
            comm.Send([buf, MPI.BYTE], dest=0)
    elapsed = time.perf_counter() - t0
    if rank == 0:
        print(json.dumps({"round_trips": n, "us_per_message": elapsed / (2 * n) * 1e6}))


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "sweep" and len(sys.argv) == 6:
        sweep([float(x) for x in sys.argv[2].split(",")], [int(x) for x in sys.argv[3].split(",")], int(sys.argv[4]), int(sys.argv[5]))
    elif mode == "pool" and len(sys.argv) == 3:
        pool(int(sys.argv[2]))
    elif mode == "pingpong" and len(sys.argv) == 3:
        pingpong(int(sys.argv[2]))
    else:
        print("usage: sweep_scaling.py sweep C,.. N,.. TRIALS SEED | pool N | pingpong N", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
