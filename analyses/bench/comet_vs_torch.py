#!/usr/bin/python3
"""Peer of analyses/bench/comet_vs_torch.cpp: COMET's forward pass and empirical NTK the way PyTorch users write them.

Run by the C++ benchmark as a subprocess (Debian's /usr/bin/python3, where python3-torch lives), with
OMP_NUM_THREADS / OPENBLAS_NUM_THREADS / MKL_NUM_THREADS set to the benchmark's thread count:

    comet_vs_torch.py --dir DIR --part forward|ntk --repeats R --budget-s S

DIR holds what the benchmark exported (float64 .npy, row-major as numpy reads them):

  forward   X.npy (M × N_0 images), meta.json {nets, depth, k}, net{b}_V{l}.npy and net{b}_W{l}.npy
            (N_l × N_{l-1}; l = 1 … depth for V, 1 … depth + 1 for W). Each net runs eqs. (4)–(8) densely,
            as A.8's PyTorch code: c = z Vᵀ, m = scatter(topk(c, k)), z = m ∘ c, x = m ∘ relu(x Wᵀ), and the
            output x W_Lᵀ. Saves out_torch{b}.npy (M × N_L), win_torch{b}.npy (M × k: the last hidden layer's
            winners, ascending) and val_torch{b}.npy (x there).
  ntk       G_X.npy (M × N_0), G_W{l}.npy, G_mask{l}.npy (M × N_l, the router's masks, fixed) and meta.json
            {depth}. The full NTK Gram J Jᵀ (M N_L × M N_L, output-major within an input) with functorch /
            torch.func: jacrev + vmap Jacobians contracted, and NTK-vector products (vmap of vjp∘jvp); the
            faster is reported. Saves gram_torch.npy.

One JSON line with the timings (median_s, times_s, per variant for ntk) goes to stdout. Exit 2 when numpy
or torch is missing.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from peer_common import import_numpy, parse_timing_args, time_variant  # noqa: E402

np = import_numpy("comet_vs_torch.py")
try:
    import torch
except ImportError:
    print("comet_vs_torch.py: torch is not importable by " + sys.executable + "; install python3-torch", file=sys.stderr)
    sys.exit(2)
try:
    from torch.func import functional_call, jacrev, vmap, vjp, jvp  # noqa: F401  PyTorch ≥ 2.0
except ImportError:
    from functorch import jacrev, vmap, vjp, jvp  # PyTorch 1.13's functorch


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def forward_part(d, args):
    meta = json.load(open(os.path.join(d, "meta.json")))
    X = t(np.load(os.path.join(d, "X.npy")))
    nets = []
    for b in range(meta["nets"]):
        V = [t(np.load(os.path.join(d, f"net{b}_V{l}.npy"))) for l in range(1, meta["depth"] + 1)]
        W = [t(np.load(os.path.join(d, f"net{b}_W{l}.npy"))) for l in range(1, meta["depth"] + 2)]
        nets.append((V, W))
    k = meta["k"]

    def run():
        outs = []
        with torch.no_grad():
            for V, W in nets:
                z, x = X, X
                for l in range(meta["depth"]):
                    c = z @ V[l].T                                   # (4)
                    idx = torch.topk(c, k[l], dim=1).indices         # (5)
                    m = torch.zeros_like(c).scatter_(1, idx, 1.0)
                    z = m * c                                        # (6), g = identity
                    x = m * torch.relu(x @ W[l].T)                   # (7)–(8)
                out = x @ W[-1].T
                outs.append((out, torch.sort(idx, dim=1).values, x))
        return outs

    times, outs = time_variant(run, args.repeats, args.budget_s)
    for b, (out, win, x) in enumerate(outs):
        np.save(os.path.join(d, f"out_torch{b}.npy"), out.numpy())
        np.save(os.path.join(d, f"win_torch{b}.npy"), win.numpy().astype(np.float64))
        np.save(os.path.join(d, f"val_torch{b}.npy"), torch.gather(x, 1, win).numpy())
    return {"median_s": float(np.median(times)), "times_s": times}


def ntk_part(d, args):
    meta = json.load(open(os.path.join(d, "meta.json")))
    depth = meta["depth"]
    X = t(np.load(os.path.join(d, "G_X.npy")))
    Ws = tuple(t(np.load(os.path.join(d, f"G_W{l}.npy"))) for l in range(1, depth + 2))
    masks = [t(np.load(os.path.join(d, f"G_mask{l}.npy"))) for l in range(1, depth + 1)]

    def f(params, x, ms):  # one input: its masks are constants (eq. (8))
        h = x
        for l in range(depth):
            h = ms[l] * torch.relu(params[l] @ h)
        return params[-1] @ h

    def f_batch(params):
        return vmap(f, in_dims=(None, 0, 0))(params, X, tuple(masks))

    def via_jacobians():
        J = vmap(jacrev(f), in_dims=(None, 0, 0))(Ws, X, tuple(masks))  # per parameter: M × N_L × shape
        Jf = torch.cat([j.reshape(j.shape[0] * j.shape[1], -1) for j in J], dim=1)
        return Jf @ Jf.T

    def via_products():  # K = J Jᵀ column by column: K e_i = J (Jᵀ e_i), vjp then jvp, vmapped over the basis
        out, vjp_fn = vjp(f_batch, Ws)
        n = out.numel()
        basis = torch.eye(n, dtype=out.dtype).reshape(n, *out.shape)

        def column(e):
            (ct,) = vjp_fn(e)
            return jvp(f_batch, (Ws,), (ct,))[1].reshape(-1)

        return vmap(column)(basis)

    result = {}
    grams = {}
    for name, fn in (("jacobian_contraction", via_jacobians), ("ntk_vector_products", via_products)):
        times, g = time_variant(fn, args.repeats, args.budget_s)
        result[name] = {"median_s": float(np.median(times)), "times_s": times}
        grams[name] = g
    best = min(result, key=lambda v: result[v]["median_s"])
    np.save(os.path.join(d, "gram_torch.npy"), grams[best].numpy())
    diff = (grams["jacobian_contraction"] - grams["ntk_vector_products"]).abs().max().item()
    result.update({"median_s": result[best]["median_s"], "times_s": result[best]["times_s"], "variant": best,
                   "variants_max_abs_diff": diff})
    return result


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--part", choices=["forward", "ntk"], required=True)
    args = parse_timing_args(p, "part")
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    info = forward_part(args.dir, args) if args.part == "forward" else ntk_part(args.dir, args)
    info.update({"torch": torch.__version__, "threads": torch.get_num_threads()})
    print(json.dumps(info))


if __name__ == "__main__":
    main()
