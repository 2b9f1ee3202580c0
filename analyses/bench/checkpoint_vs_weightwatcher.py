#!/usr/bin/env python3
"""Peer of analyses/bench/checkpoint_vs_weightwatcher.cpp: WeightWatcher's analyze() on a whole safetensors checkpoint, as one process.

Run by the C++ benchmark as a subprocess, under the Python of the virtual environment that
checkpoint_vs_weightwatcher_venv.sh makes (Debian's python3-torch + pip's weightwatcher, safetensors,
numpy<2), with OMP_NUM_THREADS / OPENBLAS_NUM_THREADS set to the benchmark's thread count, and timed
from outside as a whole process (interpreter start and `import weightwatcher` included, as a user's
script would pay):

    checkpoint_vs_weightwatcher.py --model model.safetensors --outdir DIR [--variant analyze|mp_fit|both]
                                   [--repeats N] [--mp-fit-repeats N]

It loads the checkpoint with safetensors.numpy.load_file (a dict name → numpy array), hands that dict
to weightwatcher.WeightWatcher(model=...) and runs analyze() (--repeats times) and/or
analyze(mp_fit=True) (--mp-fit-repeats times, default 1: ~20 s on MiniLM here, 10× analyze()), each timed with
time.perf_counter. The last run's per-layer table of each variant goes to DIR/ww_analyze.csv and
DIR/ww_mp_fit.csv (every column WeightWatcher returns, floats with 17 significant digits, plus
`tensor`, the checkpoint's tensor name, to match layers by); one JSON line with the versions, the
timings and the peak resident memory (resource.getrusage ru_maxrss of this process) goes to stdout.
Exit 2 when weightwatcher or safetensors cannot be imported or the model cannot be read.

What WeightWatcher 0.7.7 does with such a dict (read from its source, weightwatcher.py, RMT_Util.py,
WW_powerlaw.py, constants.py; the numbers here are its defaults):

Which layers.
  A dict (or OrderedDict) is framework PYSTATEDICT. Only keys ending in ".weight" are layers; the layer
  name is the key without ".weight" (so "encoder.layer.0.attention.self.query"; `tensor` below adds it
  back); layer_id counts every ".weight" key from 1 in key order, skipped ones included. A 2-D weight
  is DENSE, a 4-D one CONV2D, anything else UNKNOWN and skipped (1-D LayerNorm weights; biases and
  other keys are never looked at). A layer is
  analysed when M·rf ≥ min_evals = 8 and M·rf ≤ max_evals = 15000 and N ≤ max_N = 50000, where
  N = max(rows, cols), M = min(rows, cols) and rf = 1 for dense layers. On MiniLM-L6 that keeps 39 of
  the 40 2-D weights: token_type_embeddings (2 × 384, M = 2 < 8) is the one left out;
  word_embeddings (30522 × 384) is in.

Eigenvalues.
  W is cast to float64 and its singular values taken with scipy.linalg.svd(W, compute_uv=False)
  (svd_method "fast" falls back to scipy's "accurate" SVD when torch has no CUDA, as here; with CUDA it
  would be torch.linalg.svdvals in float32 and the weights stored as float16). The ESD is
  λ_i = σ_i(W)², the min(N, M) eigenvalues of the smaller Gram matrix WᵀW or WWᵀ, NOT normalised
  (no 1/N; the `normalize` option was removed in 0.6.5, glorot_fix is off). Zero eigenvalues stay in
  the ESD (they count in num_evals, norm and stable_rank).

Columns of analyze().
  lambda_max = spectral_norm = max λ = σ_max(W)² (so WeightWatcher's "spectral norm" is the square of
  ‖W‖₂); log_spectral_norm = log10 λ_max; norm = Σλ = ‖W‖_F², log_norm = log10 Σλ;
  stable_rank = Σλ / λ_max; sv_max = σ_max, sv_min = the smallest singular value;
  alpha_weighted = alpha · log10 λ_max; log_alpha_norm = log10 Σ λ_i^alpha;
  matrix_rank = #{σ_i > σ_max · N · eps(float64)}, rank_loss = min(N,M) − that, weak_rank_loss =
  #{λ_i < 1e-6}; entropy = the matrix entropy of p_i = λ_i/Σλ divided by log(rank);
  alpha, xmin, xmax, D, sigma (the standard error (α − 1)/√n of alpha), num_pl_spikes (the tail size,
  #{λ_i ≥ xmin}) come from the power-law fit below; status "success"/"failed"; warning
  "over-trained" (α < 2) or "under-trained" (α > 6).

The power-law fit (pl_package = "ww", the default since 0.7.5: WW_powerlaw.WWFit; "powerlaw" is the
  older `powerlaw` package's Fit, only needed for fix_fingers = "xmin_peak" or xmax = "force").
  Eigenvalues ≤ EVALS_THRESH = 1e-5 (absolute, not relative to λ_max) are dropped first. The rest
  is sorted; every value but the largest is an x_min candidate (duplicates are not merged); for the
  candidate at sorted index i the tail is the n = N − i values from it on (so a tail can be as small as
  2 values: there is no minimum tail size), alpha_i = 1 + n / Σ_j ln(x_j / x_min) (the CSN MLE, no
  (n−1)/n bias correction) and D_i = max_j |1 − (x_j/x_min)^(1−alpha_i) − j/n| over the sorted tail
  j = 0..n−1 (the empirical CDF's left limit F_n(x−), one side of the KS step, as the `powerlaw`
  package does); candidates with alpha_i ≤ 1 keep D = 1. x_min is the first argmin of D (the
  smallest x_min on a tie). xmax is reported as the largest eigenvalue and not used (xmax = None:
  the tail runs to λ_max). Below SMALL_N_CUTOFF = 20 eigenvalues (after the threshold) a different
  fit is used: bias-corrected alpha = 1 + (n − 1)/Σ ln(x_j/x_min), tails ≥ 8 values, and x_min
  minimising D − 0.868/√n. None of MiniLM's layers is that small.
  fix_fingers (default False): "clip_xmax" refits after clipping up to max_fingers = 10 of the largest
  eigenvalues while alpha keeps dropping by more than finger_thresh = 1 ("fingers", finite-size
  outliers); "xmin_peak" restricts x_min to [0.95, 1.5] × the peak of the log10-histogram (100 bins)
  of the ESD. Neither is on by default, so the default alpha is the plain fit above.

analyze(mp_fit=True) adds, per layer (RMT_Util.fit_density_with_range and WeightWatcher.mp_fit):
  the ESD is rescaled to mean 1 (Wscale² = #evals / Σλ); sigma_mp is brute-forced on the grid
  [0.05, 2.0) × σ_s in steps of 0.01 σ_s (σ_s² = λ_max,rescaled / (1 + 1/√Q)², Q = N/M), then polished
  by scipy.optimize.fmin (optimize.brute's default finish), minimising Σ (ρ_MP(x; σ) − KDE(x))² over
  1000 points of [0, λ_max + 0.5] where a linear-kernel KDE (bandwidth 0.1, sklearn) of the ESD
  exceeds 0.01 — a fresh KDE for every σ tried, which is why mp_fit takes minutes. Fits whose MP
  edge lies below the KDE's peak or beyond the grid score 1000 per point. For a square layer (Q = 1)
  the fit is to the quarter-circle law (1/(πσ²))·√(4 − ν²) of the singular values ν = √λ instead.
  Then, in rescaled units, bulk_max = (sigma_mp (1 + 1/√Q))², bulk_min = (sigma_mp (1 − 1/√Q))²,
  the Tracy–Widom allowance TW = Q^(−1/2) bulk_max^(2/3) M^(−2/3), num_spikes = #{λ > bulk_max + √TW},
  mp_softrank = bulk_max / λ_max. Reported: num_spikes, sigma_mp (rescaled units), mp_softrank,
  W_scale (= Wscale), and bulk_max, bulk_min back in the original units (÷ Wscale²).

Conv2D (4-D weights; none in MiniLM). For a state dict the channels are LAST: a (N, M, kh, kw) tensor
  (PyTorch's out × in × kh × kw) gives the kh·kw slices W[:, :, i, j], each transposed to tall, with
  rf = kh·kw. With pool = True (the default) the slices' eigenvalues are concatenated into ONE ESD of
  M·rf eigenvalues (one row, one alpha per conv layer), min_evals/max_evals compare M·rf; and
  conv2d_norm = True (the default) multiplies every slice by √(conv2d_count/2) = 1/√2 (conv2d_count
  is 1 unless the deprecated ww2x slice iterator sets it), so a conv layer's eigenvalues, lambda_max,
  norm and spectral_norm are HALF of σ². pool = False (the old ww2x) analyses every slice as its own
  layer. conv2d_fft = True instead takes the 2-D FFT (32 × 32) of the kernel over its spatial axes.
"""
import argparse
import json
import math
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))  # peer_common.py lives next to this script
from peer_common import import_numpy  # noqa: E402

np = import_numpy("checkpoint_vs_weightwatcher.py")

try:
    import safetensors
    import safetensors.numpy
    import weightwatcher
except ImportError as e:
    print(f"checkpoint_vs_weightwatcher.py: {e.name or e} is not importable by {sys.executable}; "
          "make the environment with analyses/bench/checkpoint_vs_weightwatcher_venv.sh VENV", file=sys.stderr)
    sys.exit(2)

# WeightWatcher's columns written first, in this order; whatever else it returns follows, sorted.
LEAD_COLUMNS = ["tensor", "name", "layer_id", "N", "M", "Q", "rf", "num_evals", "alpha", "xmin", "xmax", "D", "sigma",
                "num_pl_spikes", "lambda_max", "spectral_norm", "log_spectral_norm", "norm", "log_norm",
                "stable_rank", "alpha_weighted", "log_alpha_norm", "sv_max", "sv_min", "matrix_rank", "rank_loss",
                "weak_rank_loss", "entropy", "num_spikes", "sigma_mp", "mp_softrank", "bulk_max", "bulk_min",
                "W_scale", "status", "warning"]


def cell(v):
    """A CSV cell: floats with 17 significant digits (round-trips a double), quoted when needed."""
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return "nan" if math.isnan(v) else repr(v) if math.isinf(v) else f"{v:.17g}"
    s = str(v)
    return '"' + s.replace('"', '""') + '"' if any(c in s for c in ',"\n') else s


def write_table(details, path):
    """WeightWatcher's details DataFrame as CSV, with `tensor` (name + ".weight") first; written to a
    temporary name, then renamed."""
    rows = details.to_dict(orient="records")
    for r in rows:
        r["tensor"] = str(r.get("name", "")) + ".weight"
    present = set().union(*[r.keys() for r in rows]) if rows else {"tensor"}
    columns = [c for c in LEAD_COLUMNS if c in present] + sorted(c for c in present if c not in LEAD_COLUMNS)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(",".join(columns) + "\n")
        for r in rows:
            f.write(",".join(cell(r.get(c)) for c in columns) + "\n")
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="a .safetensors checkpoint (F32/F64/F16)")
    p.add_argument("--outdir", required=True, help="where ww_analyze.csv and ww_mp_fit.csv go")
    p.add_argument("--variant", choices=["analyze", "mp_fit", "both"], default="both",
                   help="analyze(), analyze(mp_fit=True), or both (default)")
    p.add_argument("--repeats", type=int, default=1, help="timed runs of analyze() in this process")
    p.add_argument("--mp-fit-repeats", type=int, default=1, help="timed runs of analyze(mp_fit=True) in this process")
    args = p.parse_args()
    if args.repeats < 1 or args.mp_fit_repeats < 1:
        p.error("--repeats and --mp-fit-repeats must be >= 1")

    t_start = time.perf_counter()
    try:
        t0 = time.perf_counter()
        weights = safetensors.numpy.load_file(args.model)
        load_s = time.perf_counter() - t0
    except Exception as e:  # a missing file, a bad header, an unloadable dtype (BF16 has no numpy type)
        print(f"checkpoint_vs_weightwatcher.py: --model {args.model}: {e}", file=sys.stderr)
        sys.exit(2)
    os.makedirs(args.outdir, exist_ok=True)

    out = {"weightwatcher": weightwatcher.__version__, "numpy": np.__version__,
           "safetensors": safetensors.__version__, "python": sys.version.split()[0], "model": args.model,
           "tensors": len(weights), "load_s": load_s,
           "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
           "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS")}
    try:
        import torch
        out["torch"] = torch.__version__
    except ImportError:
        out["torch"] = None

    variants = {"analyze": [("analyze", {}, args.repeats)],
                "mp_fit": [("mp_fit", {"mp_fit": True}, args.mp_fit_repeats)],
                "both": [("analyze", {}, args.repeats), ("mp_fit", {"mp_fit": True}, args.mp_fit_repeats)]}[args.variant]
    for name, kwargs, repeats in variants:
        times, details = [], None
        for _ in range(repeats):
            # A fresh WeightWatcher per run, as a user's script makes one; plot=False is analyze()'s default.
            t0 = time.perf_counter()
            watcher = weightwatcher.WeightWatcher(model=weights)
            details = watcher.analyze(**kwargs)
            times.append(time.perf_counter() - t0)
        write_table(details, os.path.join(args.outdir, f"ww_{name}.csv"))
        out[f"{name}_s"] = times
        out[f"{name}_layers"] = int(len(details))
    out["total_s"] = time.perf_counter() - t_start
    # ru_maxrss is in KiB on Linux: the peak resident memory of this process so far (all variants).
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
