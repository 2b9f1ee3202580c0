# Type stubs of the package sparseact (__init__.py); the compiled module's are in _sparseact.pyi,
# sparseact.run's in _run.pyi. tests/python/test_stubs.py checks them against the package.
import os
from typing import Any, Optional, Union

from . import _sparseact as _sparseact
from ._run import RunResult as RunResult, run as run
from ._sparseact import (
    MarchenkoPastur as MarchenkoPastur,
    SegmentTrace as SegmentTrace,
    Slq as Slq,
    Spectrum as Spectrum,
    TopEigen as TopEigen,
    TraceEstimate as TraceEstimate,
    active_units as active_units,
    comet_masks as comet_masks,
    comet_network_law as comet_network_law,
    expected_overlap as expected_overlap,
    hash as hash,
    hutchinson_trace as hutchinson_trace,
    hutchpp as hutchpp,
    hutchpp_adaptive as hutchpp_adaptive,
    kkt_spectrum as kkt_spectrum,
    kwta as kwta,
    layer_metrics as layer_metrics,
    library_version as library_version,
    ratio_limit as ratio_limit,
    slq as slq,
    top_eigenvalues as top_eigenvalues,
    zero_fraction_limit as zero_fraction_limit,
)

__version__: str

def marchenko_pastur(c: float, sigma2: float = 1.0) -> MarchenkoPastur: ...

class LayerTable(list[dict[str, Any]]):
    source: str
    format: str
    tensors: Any
    conv: str
    skipped: list[dict[str, Any]]
    def __init__(self, rows: list[dict[str, Any]], source: str, format: str, tensors: Any, conv: str,
                 skipped: list[dict[str, Any]]) -> None: ...

def checkpoint_spectra(path: Union[str, os.PathLike[str]], match: Optional[str] = None, *, min_dim: int = 32,
                       conv: str = "slices", spike_level: float = 0.01, censor: float = 0.05, mp_level: float = 0.05,
                       ratio_level: float = 0.05, near_zero: Optional[float] = None,
                       majority_fraction: Optional[float] = None, solver: str = "automatic",
                       dataframe: Optional[bool] = None) -> Any: ...
