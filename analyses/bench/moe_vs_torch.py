#!/usr/bin/python3
"""Peer of analyses/bench/moe_vs_torch.cpp: paper 004's decoder-only transformer (dense or top-2 MoE) the way
PyTorch users write it, loaded with the benchmark's θ and run on its tokens.

Run by the C++ benchmark as a subprocess (Debian's /usr/bin/python3, where python3-torch lives), with
OMP_NUM_THREADS / OPENBLAS_NUM_THREADS / MKL_NUM_THREADS set to the benchmark's thread count:

    moe_vs_torch.py --dir DIR --part moe|dense --threads T --repeats R --budget-s S

DIR/<part>/ holds what the benchmark exported (float64 .npy through sparseact/core/npy.hpp):

  meta.json     the shape {vocab, d, heads, layers, max_len, inner, experts, top, rms_eps, num_params} and
                `layout`: θ's segments in order, each {name, offset, rows, cols, kind}. θ is nn::DecoderModel's
                flat vector; a segment is a rows×cols matrix stored column-major (Eigen's order) at `offset`:
                  E (d×V), P (d×max_len)                                    kind "table"
                  per block l: block{l}.g1 (d), block{l}.attn.W_q, W_k, W_v, W_o (d×d),
                               block{l}.g2 (d), block{l}.ffn.W_r (K×d, only when K ≥ 2),
                               block{l}.ffn.expert{k}.W1 (f×d), .W2 (d×f)   kind "matrix" (gains: "gain")
                  final.g (d), W_out (V×d)
                "matrix": y = W x, i.e. exactly torch's Linear weight (out × in): flat.reshape(cols, rows).T.
                "table":  the columns are the embeddings, i.e. torch's Embedding weight (n × d) is the
                          transpose: flat.reshape(cols, rows) as it stands.
                "gain":   a d-vector.
  theta.npy     θ as one row (1 × num_params)
  tokens.npy    the inputs, T × B (column b: sequence b), ids as float64
  targets.npy   the next tokens, T × B; every position counts in the loss

The module (float64): H = E[tokens] + P[0 … T−1]; per block H += Attn(RMSNorm_g1(H)), H += FFN(RMSNorm_g2(H))
(pre-norm; RMSNorm y = g ⊙ x / √(mean(x²) + eps)); causal multi-head attention with W_q, W_k, W_v, W_o and no
biases; FFN: K = 1 one ReLU expert W2 relu(W1 x), else K experts and top-2 token-choice routing (a stable
descending sort of the router's logits, so ties go to the lowest index; softmax over the two chosen logits;
each expert runs on the tokens routed to it, Mixtral's way, outputs scattered back by index_add_); logits =
W_out RMSNorm_g(H); F.cross_entropy with mean reduction over every position.

Timed with time.perf_counter after one untimed warm-up: zero_grad, forward, loss, loss.backward(), `repeats`
times (peer_common.time_variant: stops once another repeat would take the total past budget-s). The gradient of
the last repeat, flattened back into θ's layout, goes to DIR/<part>/grad_torch.npy (1 × num_params); one JSON line
(loss, timings, tokens per expert per block) to stdout. Exit 2 when numpy or torch is missing.
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))  # peer_common.py lives next to this script
from peer_common import import_numpy, parse_timing_args, time_variant  # noqa: E402

np = import_numpy("moe_vs_torch.py")
try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    print("moe_vs_torch.py: torch is not importable by " + sys.executable + "; install python3-torch", file=sys.stderr)
    sys.exit(2)


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return self.weight * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class Attention(nn.Module):
    def __init__(self, d, heads, max_len):
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.register_buffer("future", torch.triu(torch.ones(max_len, max_len, dtype=torch.bool), diagonal=1))

    def forward(self, x):  # x: B × T × d
        B, T, d = x.shape
        q, k, v = (w(x).view(B, T, self.heads, self.dh).transpose(1, 2) for w in (self.q, self.k, self.v))
        s = (q @ k.transpose(-2, -1)) / math.sqrt(self.dh)
        p = torch.softmax(s.masked_fill(self.future[:T, :T], float("-inf")), dim=-1)
        return self.o((p @ v).transpose(1, 2).reshape(B, T, d))


class Expert(nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.w1 = nn.Linear(d, f, bias=False)
        self.w2 = nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.w2(F.relu(self.w1(x)))


class MoeFfn(nn.Module):
    """K = 1: the dense FFN. K ≥ 2: top-`top` token-choice routing without dropping (Mixtral's layer)."""

    def __init__(self, d, f, experts, top):
        super().__init__()
        self.top = min(top, experts)
        self.router = nn.Linear(d, experts, bias=False) if experts > 1 else None
        self.experts = nn.ModuleList(Expert(d, f) for _ in range(experts))
        self.load = [0] * experts

    def forward(self, x):
        if self.router is None:
            self.load = [x.shape[0] * x.shape[1]]
            return self.experts[0](x)
        shape = x.shape
        xf = x.reshape(-1, shape[-1])
        logits = self.router(xf)
        chosen = torch.sort(logits, dim=-1, descending=True, stable=True).indices[:, :self.top]  # ties: lowest index
        gates = torch.softmax(logits.gather(1, chosen), dim=-1)
        y = torch.zeros_like(xf)
        load = []
        for k, expert in enumerate(self.experts):
            tok, slot = torch.where(chosen == k)
            load.append(int(tok.numel()))
            if tok.numel():
                y.index_add_(0, tok, gates[tok, slot].unsqueeze(1) * expert(xf[tok]))
        self.load = load
        return y.reshape(shape)


class Block(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.n1, self.n2 = RMSNorm(m["d"], m["rms_eps"]), RMSNorm(m["d"], m["rms_eps"])
        self.attn = Attention(m["d"], m["heads"], m["max_len"])
        self.ffn = MoeFfn(m["d"], m["inner"], m["experts"], m["top"])

    def forward(self, h):
        h = h + self.attn(self.n1(h))
        return h + self.ffn(self.n2(h))


class Decoder(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.tok = nn.Embedding(m["vocab"], m["d"])
        self.pos = nn.Embedding(m["max_len"], m["d"])
        self.blocks = nn.ModuleList(Block(m) for _ in range(m["layers"]))
        self.norm = RMSNorm(m["d"], m["rms_eps"])
        self.out = nn.Linear(m["d"], m["vocab"], bias=False)

    def forward(self, tokens):  # B × T ids
        h = self.tok(tokens) + self.pos(torch.arange(tokens.shape[1]))
        for b in self.blocks:
            h = b(h)
        return self.out(self.norm(h))


def parameter_of(model, name):
    """The module parameter that holds θ's segment `name` (meta.json's layout)."""
    fixed = {"E": model.tok.weight, "P": model.pos.weight, "final.g": model.norm.weight, "W_out": model.out.weight}
    if name in fixed:
        return fixed[name]
    parts = name.split(".")
    blk = model.blocks[int(parts[0][len("block"):])]
    if parts[1] in ("g1", "g2"):
        return (blk.n1 if parts[1] == "g1" else blk.n2).weight
    if parts[1] == "attn":
        return {"W_q": blk.attn.q, "W_k": blk.attn.k, "W_v": blk.attn.v, "W_o": blk.attn.o}[parts[2]].weight
    if parts[2] == "W_r":
        return blk.ffn.router.weight
    e = blk.ffn.experts[int(parts[2][len("expert"):])]
    return (e.w1 if parts[3] == "W1" else e.w2).weight


def to_torch(seg, flat):
    """θ's column-major rows×cols segment as the torch tensor (module orientation, see the module docstring)."""
    r, c = seg["rows"], seg["cols"]
    a = flat[seg["offset"]:seg["offset"] + r * c]
    if seg["kind"] == "gain":
        return a.copy()
    if seg["kind"] == "table":
        return a.reshape(c, r).copy()
    return np.ascontiguousarray(a.reshape(c, r).T)


def to_flat(seg, g):
    """The inverse of to_torch for a gradient tensor."""
    if seg["kind"] in ("gain", "table"):
        return g.reshape(-1)
    return g.flatten(order="F")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", required=True, help="the folder the benchmark exported into")
    p.add_argument("--part", choices=["moe", "dense"], required=True)
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    args = parse_timing_args(p, "part")
    torch.set_num_threads(args.threads)
    torch.set_default_dtype(torch.float64)

    d = os.path.join(args.dir, args.part)
    with open(os.path.join(d, "meta.json")) as f:
        m = json.load(f)
    theta = np.load(os.path.join(d, "theta.npy")).reshape(-1)
    if theta.size != m["num_params"]:
        print(f"moe_vs_torch.py: theta.npy has {theta.size} entries, expected {m['num_params']}", file=sys.stderr)
        sys.exit(2)
    tokens = torch.from_numpy(np.load(os.path.join(d, "tokens.npy")).T.astype(np.int64).copy())    # B × T
    targets = torch.from_numpy(np.load(os.path.join(d, "targets.npy")).T.astype(np.int64).copy())  # B × T

    model = Decoder(m).double()
    covered = 0
    with torch.no_grad():
        for seg in m["layout"]:
            w = parameter_of(model, seg["name"])
            t = torch.from_numpy(to_torch(seg, theta))
            if tuple(w.shape) != tuple(t.shape):
                print(f"moe_vs_torch.py: segment {seg['name']} has shape {tuple(t.shape)}, the module's {tuple(w.shape)}", file=sys.stderr)
                sys.exit(2)
            w.copy_(t)
            covered += t.numel()
    n_module = sum(q.numel() for q in model.parameters())
    if covered != theta.size or n_module != theta.size:
        print(f"moe_vs_torch.py: layout covers {covered} entries, the module has {n_module}, θ {theta.size}", file=sys.stderr)
        sys.exit(2)
    V = m["vocab"]
    split = {}

    def step():
        t0 = time.perf_counter()
        model.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(tokens).reshape(-1, V), targets.reshape(-1))
        t1 = time.perf_counter()
        loss.backward()
        split["forward_and_loss_s"], split["backward_s"] = t1 - t0, time.perf_counter() - t1
        return loss.item()

    step()  # warm-up, untimed: allocator, thread pool, autograd's first graph
    times, loss = time_variant(step, args.repeats, args.budget_s)

    flat = np.zeros(theta.size)
    for seg in m["layout"]:
        g = parameter_of(model, seg["name"]).grad
        flat[seg["offset"]:seg["offset"] + seg["rows"] * seg["cols"]] = to_flat(seg, g.numpy()) if g is not None else 0.0
    np.save(os.path.join(d, "grad_torch.npy"), flat.reshape(1, -1))

    out = {"torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
           "torch_threads": torch.get_num_threads(),
           "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
           "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
           "loss": loss, "median_s": float(np.median(times)), "times_s": times, "repeats": len(times),
           "load": [b.ffn.load for b in model.blocks], "last_repeat_split_s": split}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
