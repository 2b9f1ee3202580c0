#!/usr/bin/python3
"""The Hessian trace of a small PyTorch model through sparseact.hutchinson_trace (paper 001 §3.4: flatness
measured by tr(H)), with a torch.autograd Hessian-vector-product closure as the operator, against the
exact trace from the full Hessian (torch.autograd.functional.hessian).

Needs Debian's python3-torch (it lives under /usr/bin/python3). Run after building:

    PYTHONPATH=build/python /usr/bin/python3 examples/python/hessian_trace_torch.py

Exit 0 when the estimator's 95 % interval contains the exact trace.
"""
import sys

import numpy as np
import torch

import sparseact

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)

# A 10-16-3 tanh MLP on 64 random points, cross-entropy: 227 parameters, so the exact Hessian is cheap.
X, y = torch.randn(64, 10), torch.randint(0, 3, (64,))
model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
params = [p for p in model.parameters()]
n = sum(p.numel() for p in params)
loss_fn = torch.nn.CrossEntropyLoss()

# The gradient with its graph, once; each product H v is one double-backward pass (PyHessian's way).
loss = loss_fn(model(X), y)
grads = torch.autograd.grad(loss, params, create_graph=True)
flat_grad = torch.cat([g.reshape(-1) for g in grads])


def hvp(v):
    """H v for a float64 numpy vector v of length n (the operator sparseact's estimators call)."""
    vt = torch.from_numpy(v)
    Hv = torch.autograd.grad(flat_grad @ vt, params, retain_graph=True)
    return torch.cat([h.reshape(-1) for h in Hv]).numpy()


est = sparseact.hutchinson_trace(hvp, n, seed=1, rel_tol=0.05, max_samples=2000)  # stop at ±5 %

# The exact trace: the full Hessian of the loss as a function of the flat parameter vector.
theta0 = torch.cat([p.detach().reshape(-1) for p in params])


def loss_of(theta):
    out, i = X, 0
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            w = theta[i:i + layer.weight.numel()].reshape(layer.weight.shape)
            i += layer.weight.numel()
            b = theta[i:i + layer.bias.numel()]
            i += layer.bias.numel()
            out = torch.nn.functional.linear(out, w, b)
        else:
            out = layer(out)
    return loss_fn(out, y)


H = torch.autograd.functional.hessian(loss_of, theta0)
exact = float(torch.trace(H))
lo, hi = est.interval
print(f"parameters: {n}; probes: {est.probes} (converged: {est.converged})")
print(f"Hutchinson tr(H) = {est.estimate:.6g} ± {est.half_width:.3g} (95 % interval [{lo:.6g}, {hi:.6g}])")
print(f"exact tr(H)      = {exact:.6g}  (eigenvalues: {np.linalg.eigvalsh(H.numpy())[[0, -1]]} extreme)")
top = sparseact.top_eigenvalues(hvp, n, 2)
print(f"top eigenvalues by Lanczos: {top.values}, exact {np.linalg.eigvalsh(H.numpy())[::-1][:2]}")
ok = lo <= exact <= hi
print("the interval contains the exact trace" if ok else "the interval MISSES the exact trace")
sys.exit(0 if ok else 1)
