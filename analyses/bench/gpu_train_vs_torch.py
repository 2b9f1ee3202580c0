#!/usr/bin/python3
"""Peer of analyses/bench/gpu_train_vs_torch.cpp: paper 002's masked MLP trained, and its Hessian trace estimated, the way PyTorch users do it on a GPU.

Run by the C++ benchmark as a subprocess (Debian's /usr/bin/python3 by default; --python on the
benchmark names another, e.g. a virtual environment whose torch was built with CUDA), with
OMP_NUM_THREADS / OPENBLAS_NUM_THREADS / MKL_NUM_THREADS set to the benchmark's thread count:

    gpu_train_vs_torch.py --dir DIR --device cuda|cpu --threads T --repeats R --budget-s S
    gpu_train_vs_torch.py --info --device cuda          (torch's version and whether it sees a GPU; nothing timed)

--device cuda runs on torch's GPU 0 (the benchmark's own GPU when one is visible); --device cpu is for the
benchmark's CPU stand-in of the CUDA module, a smoke test, never a GPU timing. When --device cuda is asked
for and torch.cuda.is_available() is False (Debian's python3-torch is built without CUDA), it prints one
JSON line saying so ("cuda_available": false, "error") and exits 3; the benchmark then measures nothing.

DIR holds what the benchmark exported (float64 .npy through sparseact/core/npy.hpp, row-major as numpy
reads them):

    meta.json     widths N_0 … N_L, masks ("router" or "none"), k per hidden layer, lr, batch,
                  steps_per_epoch, epochs, hutchinson_inputs, probes, probe_seed, num_params
    theta0.npy    θ_0 (P × 1) in nn::PlainMlp's layout: layer by layer W_ℓ (N_ℓ × N_{ℓ−1}, column-major), b_ℓ
    V{l}.npy      COMET's fixed router V_ℓ (N_ℓ × N_{ℓ−1}), l = 1 … L − 1 (masks "router" only)
    X.npy         the training inputs, N_0 × M (one input per column, as the benchmark holds them)
    labels.npy    their M labels as one row
    orders.npy    (epochs · steps_per_epoch) × batch: the training examples of every SGD step, epoch by
                  epoch (nn::BatchStream's order, the very batches the benchmark trains on)

The network, with samples as rows (PyTorch's convention): the router's masks under torch.no_grad(),
c = z Vᵀ, m = scatter(topk(c, k)), z = m ∘ c from z = x (eqs. (4)–(6)); the backbone
x = m ∘ relu(F.linear(x, W, b)) and logits F.linear(x, W_L, b_L); F.cross_entropy, mean reduction.

  Hutchinson  on the first hutchinson_inputs training examples at θ_0: the forward pass,
              torch.autograd.grad(loss, params, create_graph=True) once, then per probe
              torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True) (PyHessian's way) and
              vᵀHv; also all probes in one call with is_grads_batched=True (vmap), where torch can; the
              faster of the two is the peer. The probes are cuda::rademacher(probe_seed, p, i) (splitmix64,
              the numbers the benchmark's GPU draws), made here and moved to the device outside the timing.
              Timed to the per-probe values on the host. Saves quad_torch.npy (vᵀHv per probe) and
              hz0_torch.npy (H v_0 in θ's layout).
  epoch       epochs consecutive epochs of SGD from θ_0 (torch.optim.SGD, lr; zero_grad(set_to_none=True),
              backward, step), the data and the orders on the device, each step's loss kept on the device
              (no synchronisation per step: PyTorch's fastest way), one epoch per timed repeat. Saves
              losses_torch.npy (every step's batch loss, float64).

Both run in float64 (the benchmark's precision) and again in float32 (informational). Timings use
time.perf_counter after torch.cuda.synchronize(); one untimed warm-up each. One JSON line goes to
stdout. Exit 2 when numpy or torch is missing.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))  # peer_common.py lives next to this script
from peer_common import import_numpy, parse_timing_args, time_variant  # noqa: E402

np = import_numpy("gpu_train_vs_torch.py")
try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("gpu_train_vs_torch.py: torch is not importable by " + sys.executable + "; install python3-torch", file=sys.stderr)
    sys.exit(2)


def rademacher(seed, probe, n):
    """cuda::rademacher(seed, probe, i) for i = 0 … n − 1 (cuda/plain_train.hpp, splitmix64), as float64 ±1."""
    u = np.uint64
    with np.errstate(over="ignore"):
        i = np.arange(n, dtype=np.uint64)
        z = u(seed) ^ (u(probe) * u(0x9E3779B97F4A7C15)) ^ (i * u(0xBF58476D1CE4E5B9)) ^ u(0xD1B54A32D192ED03)
        z = z + u(0x9E3779B97F4A7C15)
        z = (z ^ (z >> u(30))) * u(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> u(27))) * u(0x94D049BB133111EB)
        z = z ^ (z >> u(31))
    return np.where((z >> u(63)) != 0, 1.0, -1.0)


class Layout:
    """Where each tensor of θ lies: W_ℓ (N_ℓ × N_{ℓ−1}, column-major), then b_ℓ."""

    def __init__(self, widths):
        self.slices = []  # (offset, rows, cols); cols 0 for a bias
        off = 0
        for l in range(1, len(widths)):
            r, c = widths[l], widths[l - 1]
            self.slices.append((off, r, c))
            off += r * c
            self.slices.append((off, r, 0))
            off += r
        self.size = off

    def split(self, flat):
        """The flat vector (numpy) as per-tensor numpy arrays in torch's shapes (W: N_ℓ × N_{ℓ−1})."""
        out = []
        for off, r, c in self.slices:
            if c:
                out.append(np.ascontiguousarray(flat[off:off + r * c].reshape(c, r).T))
            else:
                out.append(np.ascontiguousarray(flat[off:off + r]))
        return out

    def join(self, tensors):
        """Per-tensor results back into θ's flat layout (W column-major)."""
        return np.concatenate([t.detach().cpu().numpy().astype(np.float64).flatten(order="F") for t in tensors])


class MaskedMlp:
    """The benchmark's network in `dtype` on `device`: leaf tensors W_ℓ, b_ℓ, the router V_ℓ, k_ℓ."""

    def __init__(self, meta, layout, theta, V, dtype, device):
        self.params = [torch.from_numpy(a).to(device=device, dtype=dtype).requires_grad_(True) for a in layout.split(theta)]
        self.V = [torch.from_numpy(v).to(device=device, dtype=dtype) for v in V]
        self.k = meta["k"]
        self.routed = meta["masks"] == "router"

    def masks(self, X):
        if not self.routed:
            return None
        ms = []
        with torch.no_grad():
            z = X
            for V, k in zip(self.V, self.k):
                c = z @ V.T                                            # (4)
                idx = torch.topk(c, k, dim=1).indices                  # (5)
                m = torch.zeros_like(c).scatter_(1, idx, 1.0)
                z = m * c                                              # (6)
                ms.append(m)
        return ms

    def loss(self, X, y):
        ms = self.masks(X)
        h = X
        hidden = len(self.params) // 2 - 1
        for l in range(hidden):
            h = F.relu(F.linear(h, self.params[2 * l], self.params[2 * l + 1]))
            if ms is not None:
                h = h * ms[l]                                          # (7)–(8)
        return F.cross_entropy(F.linear(h, self.params[-2], self.params[-1]), y)


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def hutchinson_part(meta, layout, theta, V, X, y, dtype, device, args):
    """Timings of torch's double-backward Hutchinson, both variants; the values of the faster."""
    net = MaskedMlp(meta, layout, theta, V, dtype, device)
    params = net.params
    n = meta["hutchinson_inputs"]
    Xh, yh = X[:n].to(dtype), y[:n]
    probes = [[torch.from_numpy(a).to(device=device, dtype=dtype) for a in layout.split(rademacher(meta["probe_seed"], j, layout.size))]
              for j in range(meta["probes"])]
    stacked = [torch.stack([p[t] for p in probes]) for t in range(len(params))]

    def looped():
        loss = net.loss(Xh, yh)
        grads = torch.autograd.grad(loss, params, create_graph=True)
        quad, hz0 = [], None
        for j, v in enumerate(probes):
            Hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
            quad.append(sum(torch.sum(h * z) for h, z in zip(Hv, v)))
            if j == 0:
                hz0 = Hv
        q = torch.stack(quad).cpu()  # the values on the host, as ours returns them
        return loss.item(), q, hz0

    def batched():
        loss = net.loss(Xh, yh)
        grads = torch.autograd.grad(loss, params, create_graph=True)
        Hv = torch.autograd.grad(grads, params, grad_outputs=stacked, retain_graph=True, is_grads_batched=True)
        q = sum(torch.sum((h * z).reshape(h.shape[0], -1), dim=1) for h, z in zip(Hv, stacked)).cpu()
        return loss.item(), q, [h[0] for h in Hv]

    variants, values = {}, {}
    for name, fn in (("loop", looped), ("is_grads_batched", batched)):
        try:
            fn()  # warm-up: autograd's first graph, cuBLAS handles, the allocator
            synchronize(device)

            def timed():
                r = fn()
                synchronize(device)
                return r

            times, values[name] = time_variant(timed, args.repeats, args.budget_s)
            variants[name] = {"median_s": statistics.median(times), "times_s": times, "repeats": len(times)}
        except Exception as e:  # noqa: BLE001  (a torch that cannot vmap these ops: the loop stands alone)
            variants[name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
    timed_ok = [v for v in variants if "median_s" in variants[v]]
    if not timed_ok:
        raise RuntimeError("neither Hutchinson variant ran: " + json.dumps(variants))
    best = min(timed_ok, key=lambda v: variants[v]["median_s"])
    loss, q, hz0 = values[best]
    out = {"median_s": variants[best]["median_s"], "times_s": variants[best]["times_s"], "variant": best, "variants": variants,
           "loss": loss, "estimate": float(q.double().mean())}
    if "loop" in values and "is_grads_batched" in values:
        ql, qb = values["loop"][1].double().numpy(), values["is_grads_batched"][1].double().numpy()
        out["variants_max_rel_diff_quad"] = float(np.max(np.abs(ql - qb)) / max(np.max(np.abs(ql)), 1e-300))
    return out, q.double().numpy(), layout.join(hz0)


def epoch_part(meta, layout, theta, V, X, y, orders, dtype, device, args):
    """Consecutive epochs of SGD from θ_0, one per timed repeat; every step's loss."""
    net = MaskedMlp(meta, layout, theta, V, dtype, device)
    Xd = X.to(dtype)
    steps = meta["steps_per_epoch"]
    opt = torch.optim.SGD(net.params, lr=meta["lr"])
    # Warm-up outside the timing: one forward and backward on the first batch, no step (θ stays θ_0).
    net.loss(torch.index_select(Xd, 0, orders[0]), torch.index_select(y, 0, orders[0])).backward()
    opt.zero_grad(set_to_none=True)
    synchronize(device)
    done = [0]
    losses = []

    def one_epoch():
        e = done[0]
        out = torch.empty(steps, dtype=dtype, device=device)
        for t in range(steps):
            idx = orders[e * steps + t]
            # index_select, not Xd[idx]: the same rows, but advanced indexing took ~8 ms a batch on the CPU in torch 1.13
            loss = net.loss(torch.index_select(Xd, 0, idx), torch.index_select(y, 0, idx))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            out[t] = loss.detach()
        synchronize(device)
        done[0] += 1
        losses.append(out)
        return None

    times, _ = time_variant(one_epoch, min(args.repeats, meta["epochs"]), args.budget_s)
    all_losses = torch.cat(losses).double().cpu().numpy()
    return {"median_s": statistics.median(times), "times_s": times, "repeats": len(times), "steps_per_epoch": steps,
            "optimizer": "torch.optim.SGD(params, lr)", "last_loss": float(all_losses[-1])}, all_losses


def info(device):
    out = {"torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0], "executable": sys.executable,
           "cuda_available": torch.cuda.is_available(), "torch_cuda": torch.version.cuda, "device": device}
    if device == "cpu":
        out["device_name"] = "cpu"
    elif torch.cuda.is_available():
        out["device_name"] = torch.cuda.get_device_name(0)
    else:
        out["error"] = "torch.cuda.is_available() is False: this torch sees no CUDA GPU" + \
                       (" (it was built without CUDA)" if torch.version.cuda is None else "")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", help="the folder the benchmark exported into")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--info", action="store_true", help="print torch's version and whether it sees a GPU, time nothing")
    args = parse_timing_args(p, "part and precision")
    torch.set_num_threads(args.threads)
    head = info(args.device)
    head["torch_threads"] = torch.get_num_threads()
    if args.device == "cuda" and not torch.cuda.is_available():
        print(json.dumps(head), flush=True)
        sys.exit(3)
    if args.info:
        print(json.dumps(head), flush=True)
        return
    if not args.dir:
        p.error("--dir is required unless --info")

    d, dev = args.dir, args.device
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    layout = Layout(meta["widths"])
    theta = np.load(os.path.join(d, "theta0.npy")).reshape(-1)
    if theta.size != layout.size or layout.size != meta["num_params"]:
        print(f"gpu_train_vs_torch.py: theta0.npy has {theta.size} entries, expected {layout.size}", file=sys.stderr)
        sys.exit(2)
    V = [np.load(os.path.join(d, f"V{l}.npy")) for l in range(1, len(meta["widths"]) - 1)] if meta["masks"] == "router" else []
    X = torch.from_numpy(np.ascontiguousarray(np.load(os.path.join(d, "X.npy")).T)).to(dev)  # M × N_0, float64
    y = torch.from_numpy(np.load(os.path.join(d, "labels.npy")).reshape(-1).astype(np.int64)).to(dev)
    orders = torch.from_numpy(np.load(os.path.join(d, "orders.npy")).astype(np.int64)).to(dev)

    out = dict(head)
    out["hutchinson"], out["epoch"] = {}, {}
    for name, dtype in (("float64", torch.float64), ("float32", torch.float32)):
        h, quad, hz0 = hutchinson_part(meta, layout, theta, V, X, y, dtype, dev, args)
        e, losses = epoch_part(meta, layout, theta, V, X, y, orders, dtype, dev, args)
        out["hutchinson"][name], out["epoch"][name] = h, e
        if name == "float64":
            np.save(os.path.join(d, "quad_torch.npy"), quad)
            np.save(os.path.join(d, "hz0_torch.npy"), hz0)
            np.save(os.path.join(d, "losses_torch.npy"), losses)
    if dev == "cuda":
        out["max_memory_allocated_mib"] = torch.cuda.max_memory_allocated() / 2**20
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
