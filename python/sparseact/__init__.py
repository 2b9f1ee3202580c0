"""sparseact from Python: the library's measurements on numpy arrays, checkpoints and PyTorch models.

The compiled module (sparseact._sparseact, pybind11) holds the library's functions; this package
re-exports them and adds checkpoint_spectra's table (a pandas DataFrame when pandas is importable)
and run(), which runs an analysis executable and reads its JSON. The papers are listed in
docs/papers.md of the sparseact repository; each function's docstring names the one it measures.

Arguments that are numpy arrays must be float64, C- or Fortran-contiguous and finite; anything else
raises ValueError naming the argument. The library's own input errors are ValueErrors too.
"""
from ._sparseact import (  # noqa: F401
    MarchenkoPastur,
    SegmentTrace,
    Slq,
    Spectrum,
    TopEigen,
    TraceEstimate,
    active_units,
    comet_masks,
    comet_network_law,
    expected_overlap,
    hash,
    hutchinson_trace,
    hutchpp,
    hutchpp_adaptive,
    kkt_spectrum,
    kwta,
    layer_metrics,
    library_version,
    ratio_limit,
    slq,
    top_eigenvalues,
    zero_fraction_limit,
)
from . import _sparseact
from ._run import RunResult, run  # noqa: F401

__version__ = library_version


def marchenko_pastur(c, sigma2=1.0):
    """The Marchenko–Pastur law with ratio c and scale σ² (paper 001 Theorem 1, eq. (3)): an object with
    density(x), cdf(x), quantile(p), edges (a, b), atom and moments. Same as MarchenkoPastur(c, sigma2)."""
    return MarchenkoPastur(c, sigma2)


class LayerTable(list):
    """checkpoint_spectra's per-layer table as a list of dicts (one per layer, the keys of the analysis
    JSON's data.layers plus "eigenvalues"), with the checkpoint's `source`, `format`, `tensors` and the
    `skipped` tensors (name, shape, reason) as attributes."""

    def __init__(self, rows, source, format, tensors, conv, skipped):
        super().__init__(rows)
        self.source, self.format, self.tensors, self.conv, self.skipped = source, format, tensors, conv, skipped


def checkpoint_spectra(path, match=None, *, min_dim=32, conv="slices", spike_level=0.01, censor=0.05, mp_level=0.05,
                       ratio_level=0.05, near_zero=None, majority_fraction=None, solver="automatic", dataframe=None):
    """Every layer of a checkpoint against Marchenko–Pastur, a power law and paper 001 §8.4 (issue 16;
    Theorems 1 and 5): what the checkpoint_spectra analysis computes, in-process.

    path: a .safetensors file, a sharded model's index.json, a folder, .npz or .npy. match: a regex
    searched in tensor names (None: every tensor). A layer is a 2-D tensor (or a conv kernel's slices,
    conv="slices", or its reshaped matrix, conv="reshape") with both dimensions ≥ min_dim; the other
    tensors are listed as skipped, with the reason. The options are layer_metrics'.

    Returns a pandas DataFrame (one row per layer, `df.attrs` holding source, format, tensors and
    skipped) when pandas is importable and dataframe is not False, else a LayerTable: a list of dicts
    with the same attributes."""
    d = _sparseact._checkpoint_spectra(
        str(path), match or "", int(min_dim), conv, spike_level, censor, mp_level, ratio_level,
        _sparseact._default_near_zero if near_zero is None else near_zero,
        _sparseact._default_majority_fraction if majority_fraction is None else majority_fraction, solver)
    if dataframe is not False:
        try:
            import pandas
        except ImportError:
            if dataframe:
                raise
        else:
            df = pandas.DataFrame(d["layers"])
            df.attrs.update(source=d["source"], format=d["format"], tensors=d["tensors"], conv=d["conv"], skipped=d["skipped"])
            return df
    return LayerTable(d["layers"], d["source"], d["format"], d["tensors"], d["conv"], d["skipped"])
