#!/usr/bin/python3
"""Both sides of analyses/bench/python_overhead.cpp: Hutchinson's Hessian trace of a torch MLP driven by
sparseact.hutchinson_trace through a Python HVP closure (ours), against the same probes in a plain
PyTorch loop (PyHessian's way, the peer), in one process: same device, same threads, same network.

    python_overhead.py --threads T --repeats R --width W --depth L --batch B --probes K --seed S --budget-s S

Prints one JSON line: the per-repeat times of each side (repeats interleaved, ours then peer), both
estimates, the network's size. Exit 2 with a message on stderr when torch or sparseact cannot be
imported (the benchmark then records the run as skipped).

Both sides, timed: the forward pass, the gradient with create_graph=True, then K double-backward
products H v = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True) and the sum of
vᵀ H v. Ours hands the products to the C++ estimator: it draws probe j from Rng(seed, stream_id(0, j)),
calls the closure with it as a numpy vector (the closure splits it into per-parameter views, runs the
product and concatenates the result back into a numpy vector), and keeps Welford's running mean. The
peer gets the very same probes, drawn once outside its timing already split per parameter, and loops.
What ours adds is the estimator: the probes, the numpy ↔ torch conversions, the callback into Python.
Informational, timed in the same rounds: PyHessian's loop as written, drawing its probes inside the loop
(torch.randint_like), whose estimate differs (other probes).
"""
import argparse
import json
import os
import statistics
import sys
import time

p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("--threads", type=int, default=2)
p.add_argument("--repeats", type=int, default=5)
p.add_argument("--width", type=int, default=256)
p.add_argument("--depth", type=int, default=2, help="hidden layers")
p.add_argument("--d-in", type=int, default=784)
p.add_argument("--batch", type=int, default=256)
p.add_argument("--probes", type=int, default=64)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--budget-s", type=float, default=300.0, help="stop the repeats beyond the third once this is spent")
args = p.parse_args()

try:
    import numpy as np
    import torch
except ImportError as e:
    print(f"python_overhead.py: {sys.executable} cannot import {e.name}; install python3-torch", file=sys.stderr)
    sys.exit(2)
try:
    import sparseact
except ImportError as e:
    print(f"python_overhead.py: {sys.executable} cannot import sparseact ({e}); build it (pybind11-dev) and set PYTHONPATH", file=sys.stderr)
    sys.exit(2)

torch.set_num_threads(args.threads)
torch.manual_seed(args.seed)
dtype = torch.float64
layers, d = [], args.d_in
for _ in range(args.depth):
    layers += [torch.nn.Linear(d, args.width), torch.nn.ReLU()]
    d = args.width
layers.append(torch.nn.Linear(d, 10))
model = torch.nn.Sequential(*layers).to(dtype)
params = list(model.parameters())
n = sum(q.numel() for q in params)
X = torch.randn(args.batch, args.d_in, dtype=dtype)
y = torch.randint(0, 10, (args.batch,))
loss_fn = torch.nn.CrossEntropyLoss()
sizes = [q.numel() for q in params]
shapes = [q.shape for q in params]


def gradient():
    loss = loss_fn(model(X), y)
    return torch.autograd.grad(loss, params, create_graph=True)


def ours():
    grads = gradient()

    def hvp(v):
        vt = torch.from_numpy(v)
        pieces = [t.view(s) for t, s in zip(torch.split(vt, sizes), shapes)]
        Hv = torch.autograd.grad(grads, params, grad_outputs=pieces, retain_graph=True)
        return torch.cat([h.reshape(-1) for h in Hv]).numpy()

    est = sparseact.hutchinson_trace(hvp, n, seed=args.seed, min_samples=args.probes, max_samples=args.probes)
    return est.estimate


# The peer's probes: exactly the estimator's (recorded once, untimed), split per parameter as PyHessian keeps them.
recorded = []
sparseact.hutchinson_trace(lambda v: (recorded.append(v.copy()), v)[1], n, seed=args.seed, min_samples=args.probes, max_samples=args.probes)
probes = [[t.view(s).clone() for t, s in zip(torch.split(torch.from_numpy(z), sizes), shapes)] for z in recorded]


def peer():
    grads = gradient()
    total = 0.0
    for v in probes:
        Hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
        total += sum(torch.sum(h * z) for h, z in zip(Hv, v)).item()
    return total / len(probes)


def peer_drawing():
    """Informational: PyHessian's loop as written, drawing each probe inside the loop with torch.randint_like
    (other values than the estimator's, so another estimate; what a plain-PyTorch user pays for probes)."""
    grads = gradient()
    total = 0.0
    for _ in range(args.probes):
        v = [torch.randint_like(q, high=2) * 2 - 1 for q in params]
        Hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
        total += sum(torch.sum(h * z) for h, z in zip(Hv, v)).item()
    return total / args.probes


ours(), peer(), peer_drawing()  # warm-up: autograd's first graph, the thread pools
ours_s, peer_s, drawing_s, spent = [], [], [], 0.0
for r in range(args.repeats):
    t0 = time.perf_counter()
    est_ours = ours()
    ours_s.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    est_peer = peer()
    peer_s.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    peer_drawing()
    drawing_s.append(time.perf_counter() - t0)
    spent += ours_s[-1] + peer_s[-1] + drawing_s[-1]
    if r >= 2 and spent + ours_s[-1] + peer_s[-1] + drawing_s[-1] > args.budget_s:
        break

print(json.dumps({"ours_s": ours_s, "peer_s": peer_s, "peer_drawing_probes_s": drawing_s, "estimate_ours": est_ours, "estimate_peer": est_peer, "params": n,
                  "probes": args.probes, "torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
                  "torch_threads": torch.get_num_threads(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
                  "sparseact": sparseact.__file__, "hvp_s": statistics.median(peer_s) / args.probes}), flush=True)
