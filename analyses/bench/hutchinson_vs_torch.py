#!/usr/bin/python3
"""Peer of analyses/bench/hutchinson_vs_torch.cpp: Hutchinson's Hessian trace the way PyTorch users compute it.

Run by the C++ benchmark as a subprocess (Debian's /usr/bin/python3, where python3-torch lives), with
OMP_NUM_THREADS / OPENBLAS_NUM_THREADS / MKL_NUM_THREADS set to the benchmark's thread count:

    hutchinson_vs_torch.py --dir DIR --threads T --repeats R --budget-s S

DIR holds what the benchmark exported (every matrix as a rows×cols float64 .npy through
sparseact/core/npy.hpp, so numpy reads it in its natural row-major shape):

    layout.json       the parameter tensors in the order of the flat vector θ: name, offset, rows,
                      cols, shape (a vector for biases and LayerNorm's γ, β), plus ln_eps, num_params
    <name>.npy        each tensor as its rows×cols matrix (e.g. input.W.npy, block1.ln.gamma.npy)
    x.npy, labels.npy the batch: features×B inputs, the B labels as one row
    Z.npy             the P×k Rademacher probes, column j the probe j of θ's column-major layout

It rebuilds the same network in float64 (F.linear, F.layer_norm, F.relu, F.cross_entropy with mean
reduction, what nn.Linear / nn.LayerNorm / nn.ReLU / nn.CrossEntropyLoss call), splits every probe
into per-parameter tensors (the column-major slice of θ read back as rows×cols), and times, with
time.perf_counter, PyHessian's way of getting zᵀHz:

    grads = torch.autograd.grad(loss, params, create_graph=True)           # once
    for each probe v: Hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
                      zᵀHz = sum((Hv_p * v_p).sum() over the tensors)     # PyHessian's group_product

the forward pass included, `repeats` times (median reported), stopping once another repeat would
take the total past `budget-s` seconds (at least one repeat always runs). The benchmark calls it with
--repeats 1, once per repeat, interleaved with its own timed runs. The per-probe values
zᵀHz go to DIR/quad_torch.npy and H z of probe 0, flattened back into θ's layout, to
DIR/hz0_torch.npy; one JSON line with the timings goes to stdout. Exit 2 when numpy or torch is
missing.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))  # peer_common.py lives next to this script
from peer_common import import_numpy, parse_timing_args, time_variant  # noqa: E402

np = import_numpy("hutchinson_vs_torch.py")
try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("hutchinson_vs_torch.py: torch is not importable by " + sys.executable + "; install python3-torch", file=sys.stderr)
    sys.exit(2)


def load_params(d, layout):
    """Every tensor of θ as a float64 leaf that requires grad, in θ's order."""
    params = {}
    for p in layout["params"]:
        a = np.load(os.path.join(d, p["name"] + ".npy"))
        if a.shape != (p["rows"], p["cols"]):
            print(f"hutchinson_vs_torch.py: {p['name']}.npy has shape {a.shape}, expected {(p['rows'], p['cols'])}", file=sys.stderr)
            sys.exit(2)
        t = torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64).reshape(p["shape"]))
        params[p["name"]] = t.requires_grad_(True)
    return params


def make_loss(P, X, y, layout):
    """The benchmark's network: h = W_in x + b_in; per block u = LN(h), h += V relu(K u + b_K) + b_V;
    logits = W_out h + b_out; mean cross-entropy. Samples are rows here (PyTorch's convention)."""
    d, eps = layout["d"], layout["ln_eps"]
    blocks = layout["blocks"]

    def loss():
        h = F.linear(X, P["input.W"], P["input.b"])
        for b in blocks:
            u = F.layer_norm(h, (d,), P[b + ".ln.gamma"], P[b + ".ln.beta"], eps)
            a = F.relu(F.linear(u, P[b + ".K"], P[b + ".b_K"]))
            h = h + F.linear(a, P[b + ".V"], P[b + ".b_V"])
        return F.cross_entropy(F.linear(h, P["output.W"], P["output.b"]), y)

    return loss


def split_probes(Z, layout):
    """Probe j of the P×k matrix Z as one tensor per parameter, in the parameters' own shapes: θ's
    slice is column-major rows×cols, i.e. numpy's (cols, rows) transposed. Made contiguous here,
    outside the timing (PyHessian draws its probes in place, already shaped)."""
    k = Z.shape[1]
    per_param = []
    for p in layout["params"]:
        s = Z[p["offset"]:p["offset"] + p["rows"] * p["cols"], :]  # size × k
        blk = np.ascontiguousarray(s.T.reshape(k, p["cols"], p["rows"]).transpose(0, 2, 1))  # k × rows × cols
        per_param.append(torch.from_numpy(blk.reshape([k] + p["shape"])))
    return [[t[j] for t in per_param] for j in range(k)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", required=True, help="the folder the benchmark exported into")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    args = parse_timing_args(p, "run")
    torch.set_num_threads(args.threads)

    d = args.dir
    with open(os.path.join(d, "layout.json")) as f:
        layout = json.load(f)
    P = load_params(d, layout)
    params = list(P.values())
    x = np.load(os.path.join(d, "x.npy"))  # features × B
    X = torch.from_numpy(np.ascontiguousarray(x.T, dtype=np.float64))
    y = torch.from_numpy(np.load(os.path.join(d, "labels.npy")).reshape(-1).astype(np.int64))
    Z = np.load(os.path.join(d, "Z.npy"))
    if Z.shape[0] != layout["num_params"]:
        print(f"hutchinson_vs_torch.py: Z.npy has {Z.shape[0]} rows, expected {layout['num_params']}", file=sys.stderr)
        sys.exit(2)
    probes = split_probes(Z, layout)
    del Z
    loss_fn = make_loss(P, X, y, layout)

    split = {}

    def trace_run():
        t0 = time.perf_counter()
        loss = loss_fn()
        grads = torch.autograd.grad(loss, params, create_graph=True)
        t1 = time.perf_counter()
        quad, hz0 = [], None
        for j, v in enumerate(probes):
            Hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
            quad.append(sum(torch.sum(h * z) for h, z in zip(Hv, v)).item())
            if j == 0:
                hz0 = Hv
        split["grad_create_graph_s"] = t1 - t0
        split["products_s"] = time.perf_counter() - t1
        return loss.item(), quad, hz0

    # Warm-up outside the timing (the C++ side does the same): autograd's first graph, OpenMP's and
    # the BLAS's thread pools, one double-backward product.
    loss = loss_fn()
    grads = torch.autograd.grad(loss, params, create_graph=True)
    torch.autograd.grad(grads, params, grad_outputs=probes[0], retain_graph=True)
    del loss, grads

    times, (loss_value, quad, hz0) = time_variant(trace_run, args.repeats, args.budget_s)
    np.save(os.path.join(d, "quad_torch.npy"), np.asarray(quad, dtype=np.float64))
    # H z of probe 0 back in θ's layout: each tensor flattened column-major.
    flat = [h.detach().numpy().reshape(p["rows"], p["cols"]).flatten(order="F") for h, p in zip(hz0, layout["params"])]
    np.save(os.path.join(d, "hz0_torch.npy"), np.concatenate(flat))

    out = {"torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
           "torch_threads": torch.get_num_threads(),
           "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
           "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
           "loss": loss_value, "estimate": statistics.fmean(quad), "probes": len(quad),
           "median_s": statistics.median(times), "times_s": times, "repeats": len(times),
           "last_repeat_split_s": split}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
