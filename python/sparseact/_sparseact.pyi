# Type stubs of the compiled module sparseact._sparseact (python/src/*.cpp), written by pybind11-stubgen
# (PyPI) from the built module, numpy's shape annotations replaced by numpy.typing.NDArray:
#   PYTHONPATH=build/python pybind11-stubgen sparseact._sparseact -o /tmp/stubs
# tests/python/test_stubs.py checks that they list what the module has, with the same parameters.
"""
sparseact: measurements of sparsely activated networks (spectra, trace estimators, COMET routing, LSH) on numpy arrays.
"""
from __future__ import annotations
import numpy
import numpy.typing
import typing
__all__: list[str] = ['MarchenkoPastur', 'SegmentTrace', 'Slq', 'Spectrum', 'TopEigen', 'TraceEstimate', 'active_units', 'comet_masks', 'comet_network_law', 'expected_overlap', 'hash', 'hutchinson_trace', 'hutchpp', 'hutchpp_adaptive', 'kkt_spectrum', 'kwta', 'layer_metrics', 'library_version', 'ratio_limit', 'slq', 'top_eigenvalues', 'zero_fraction_limit']
class Spectrum:
    """
    The spectrum of K Kᵀ for K ∈ R^{n×d} from the smaller Gram matrix (paper 001 Theorems 5 and 6).
    """
    def __repr__(self) -> str:
        ...
    def all_eigenvalues(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        all n eigenvalues of K Kᵀ, ascending, the zeros exactly 0
        """
    @property
    def d(self) -> int:
        ...
    @property
    def gram(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        all min(n, d) eigenvalues of the smaller Gram matrix, ascending
        """
    @property
    def lambda_max(self) -> float:
        ...
    @property
    def lambda_min_nonzero(self) -> float:
        ...
    @property
    def n(self) -> int:
        ...
    @property
    def nonzero(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        the nonzero eigenvalues, ascending
        """
    @property
    def rank(self) -> int:
        """
        numerical rank of K
        """
    @property
    def rank_tol(self) -> float:
        """
        eigenvalues ≤ rank_tol count as zero
        """
    @property
    def ratio(self) -> float:
        """
        λ_max / λ_min⁺ (paper 001 Theorem 5)
        """
    @property
    def zero_fraction(self) -> float:
        """
        Theorem 5: 1 − d/n when n > d
        """
    @property
    def zeros(self) -> int:
        """
        number of zero eigenvalues of K Kᵀ, n − rank
        """
class MarchenkoPastur:
    """
    The Marchenko–Pastur law in paper 001's normalization (Theorem 1, eq. (3)): the limit of
    the eigenvalues of (1/n) X Xᵀ for X ∈ R^{p×n} with i.i.d. entries of variance σ², c = p/n. Edges
    a, b = σ²(1 ∓ √c)², an atom 1 − 1/c at 0 when c > 1. The CDF by quadrature (Boost.Math).
    """
    def __init__(self, c: float, sigma2: float = 1.0) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def cdf(self, x: numpy.typing.NDArray[numpy.float64]) -> typing.Any:
        """
        P(λ ≤ x), the atom included; vectorised over x
        """
    def density(self, x: numpy.typing.NDArray[numpy.float64]) -> typing.Any:
        """
        density of the continuous part (the atom excluded); vectorised over x
        """
    def density_grid(self, points: int = 200) -> tuple:
        """
        (x, density) on equally spaced points over [a, b]
        """
    def moment(self, k: int) -> float:
        """
        E[λ^k] in closed form (Narayana polynomials)
        """
    def quantile(self, p: float) -> float:
        """
        smallest x with cdf(x) ≥ p
        """
    @property
    def a(self) -> float:
        """
        lower edge σ²(1 − √c)²
        """
    @property
    def atom(self) -> float:
        """
        mass of the atom at 0: 1 − 1/c when c > 1
        """
    @property
    def b(self) -> float:
        """
        upper edge σ²(1 + √c)²
        """
    @property
    def c(self) -> float:
        ...
    @property
    def continuous_mass(self) -> float:
        ...
    @property
    def edges(self) -> tuple:
        """
        (a, b)
        """
    @property
    def mean(self) -> float:
        ...
    @property
    def sigma2(self) -> float:
        ...
    @property
    def variance(self) -> float:
        ...
class SegmentTrace:
    """
    One segment's trace tr(A_ll) from the same probes as the whole.
    """
    @property
    def estimate(self) -> float:
        ...
    @property
    def half_width(self) -> float:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def std_error(self) -> float:
        ...
class TraceEstimate:
    """
    A trace estimate with its standard error and (1 − α) Student-t interval.
    """
    def __repr__(self) -> str:
        ...
    @property
    def converged(self) -> bool:
        """
        the stopping rule fired (False: max_samples reached or a fixed budget)
        """
    @property
    def estimate(self) -> float:
        ...
    @property
    def exact_part(self) -> float:
        """
        Hutch++: tr(QᵀAQ); Hutchinson: 0
        """
    @property
    def half_width(self) -> float:
        """
        of the (1 − α) interval, Student-t quantile
        """
    @property
    def history(self) -> list:
        """
        per batch (probes, estimate, std_error, half_width), when keep_history
        """
    @property
    def interval(self) -> tuple:
        """
        (estimate − half_width, estimate + half_width)
        """
    @property
    def matvecs(self) -> int:
        ...
    @property
    def probes(self) -> int:
        ...
    @property
    def sample_variance(self) -> float:
        ...
    @property
    def segments(self) -> list[SegmentTrace]:
        ...
    @property
    def std_error(self) -> float:
        """
        of the stochastic part (Hutch++: the deflated part)
        """
class Slq:
    """
    Stochastic Lanczos quadrature: one Gauss rule (Ritz values, weights) per probe.
    """
    def density(self, grid: typing.Any = None, points: int = 200, sigma: float = 0.01) -> dict:
        """
        the SLQ density broadened by N(0, σ²) on `grid` (or `points` points around the nodes), with its standard error
        """
    def trace(self, f: typing.Callable[[float], float], alpha: float = 0.05) -> TraceEstimate:
        """
        tr f(A) ≈ n · mean over probes of Σ_i τ_i² f(θ_i), with its standard error across probes
        """
    @property
    def matvecs(self) -> int:
        ...
    @property
    def n(self) -> int:
        ...
    @property
    def probes(self) -> int:
        ...
    @property
    def quadrature(self) -> list:
        """
        per probe (Ritz values θ_i, weights τ_i²)
        """
class TopEigen:
    """
    The k largest eigenvalues of a symmetric operator (Spectra's restarted Lanczos).
    """
    @property
    def iterations(self) -> int:
        ...
    @property
    def matvecs(self) -> int:
        ...
    @property
    def values(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        largest first
        """
    @property
    def vectors(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        n × k unit eigenvectors, when asked
        """
def _checkpoint_spectra(path: str, match: str, min_dim: int, conv: str, spike_level: float, censor: float, mp_level: float, ratio_level: float, near_zero: float, majority_fraction: float, solver: str) -> dict:
    """
    The work of sparseact.checkpoint_spectra (see there).
    """
def active_units(p_k: float, N: int) -> int:
    """
    k = max(1, round(p_k · N)), halves away from zero (paper 002; ERRATA 002).
    """
def comet_masks(X0: typing.Any, widths: list[int], p_k: float, *, seed: int = 1, stream: int = 0, rule: str = 'strict') -> list[numpy.typing.NDArray[numpy.float64]]:
    """
    COMET's masks (paper 002 §4, eqs. (4)–(6)) for the columns of X0 (N_0 × M inputs): a fixed random routing
    network of widths N_0, N_1, …, N_L with V_ℓ ~ U(−N_{ℓ−1}^{−1/2}, N_{ℓ−1}^{−1/2}) from Rng(seed,
    stream_id(stream, ℓ)), c_ℓ = V_ℓ z_{ℓ−1}, m_ℓ = C_{k_ℓ}(c_ℓ), z_ℓ = m_ℓ ∘ c_ℓ, k_ℓ = max(1, round(p_k N_ℓ)).
    Returns the list m_1 … m_{L−1} of N_ℓ × M 0/1 matrices (no mask for the output layer).
    """
def comet_network_law(input_cos: float, p_k: float, widths: list[int], activation: str = 'relu') -> dict:
    """
    The large-width law of a COMET MLP of widths N_0 … N_L without biases (paper 002; issue 12), for two inputs at
    cosine input_cos: per hidden layer the routing overlap O_ℓ, the routing cosine and the activations' cosine;
    the concatenated masks' and activations' cosines; the NTK's per-block and trace cosines.
    activation: "relu" or "identity". Returns a dict.
    """
def expected_overlap(rho: numpy.typing.NDArray[numpy.float64], p_k: numpy.typing.NDArray[numpy.float64]) -> typing.Any:
    """
    O(ρ) = P(Z > t, Z′ > t)/p_k, t = Φ⁻¹(1 − p_k): the expected fraction of the k = p_k N winners of C_k that two
    inputs at cosine ρ share in a wide random layer (COMET's routing, paper 002; issue 12). O(0) = p_k, O(1) = 1.
    Vectorised over rho and p_k.
    """
def hash(X: typing.Any, *, family: str = 'sign', tables: int = 1, bits: int = 16, offset_range: float = 1.0, eps: float = 1.0, seed: int = 1, stream: int = 0) -> typing.Any:
    """
    Hash the columns of X (d × N points) with paper 000's families (§2.2), functions drawn from (seed, stream):
      "sign"    hyperplanes through the origin, h_j(x) = sign(w_jᵀx), w_j ~ N(0, I_d);
      "offset"  hyperplanes with offsets, sign(w_jᵀx + c_j), c_j ~ U[−offset_range, offset_range];
      both: `tables` tables of `bits` ≤ 62 bits, packed: a tables × N uint64 array, entry (i, n) =
      Σ_j 2^j · 1[w_{i·bits+j}ᵀx_n + c > 0] (exact signs, independent of BLAS and threads);
      "euclidean" ⌊(a_iᵀx + b_i)/eps⌋, a_i ~ N(0, I_d), b_i ~ U[0, eps], for i < tables: a tables × N int32 array.
    """
def hutchinson_trace(matvec: typing.Callable, n: int, *, seed: int = 0, stream: int = 0, batch: int = 8, min_samples: int = 10, max_samples: int = 1000, alpha: float = 0.05, abs_tol: float = 0.0, rel_tol: float = 0.01, block: bool = False, keep_history: bool = False, segments: list[tuple[str, int, int]] = []) -> TraceEstimate:
    """
    tr(A) by Hutchinson's estimator (Hutchinson 1990), the measure of flatness of paper 001 §3.4 when A is
    a network's Hessian. Rademacher probe j is drawn from Rng(seed, stream_id(stream, j)), as in C++.
    Stopping rule: stop once the (1 − alpha) Student-t half-width ≤ max(abs_tol, rel_tol·|estimate|),
    with at least min_samples probes, or at max_samples. segments: (name, offset, size) triples; each
    gets tr(A_ll) from the same probes. Returns a TraceEstimate.
        matvec: a callable taking a float64 array x of shape (n,) and returning A x, shape (n,), float64
        (with block=True it takes and returns n × k arrays, k probes at once). A is assumed symmetric.
    """
def hutchpp(matvec: typing.Callable, n: int, matvecs: int, *, seed: int = 0, stream: int = 0, batch: int = 8, alpha: float = 0.05, block: bool = False) -> TraceEstimate:
    """
    tr(A) by Hutch++ (Meyer, Musco, Musco & Woodruff 2021) with a fixed budget of `matvecs` products: a
    sketch of k = matvecs/3 columns, tr(QᵀAQ) exactly, Hutchinson on the deflated rest. Returns a TraceEstimate
    (std_error and interval of the deflated part).
        matvec: a callable taking a float64 array x of shape (n,) and returning A x, shape (n,), float64
        (with block=True it takes and returns n × k arrays, k probes at once). A is assumed symmetric.
    """
def hutchpp_adaptive(matvec: typing.Callable, n: int, sketch: int, *, seed: int = 0, stream: int = 0, batch: int = 8, min_samples: int = 10, max_samples: int = 1000, alpha: float = 0.05, abs_tol: float = 0.0, rel_tol: float = 0.01, block: bool = False) -> TraceEstimate:
    """
    Hutch++ with a given sketch size, the deflated part under Hutchinson's stopping rule.
        matvec: a callable taking a float64 array x of shape (n,) and returning A x, shape (n,), float64
        (with block=True it takes and returns n × k arrays, k probes at once). A is assumed symmetric.
    """
def kkt_spectrum(K: typing.Any, solver: str = 'automatic') -> Spectrum:
    """
    The spectrum of K Kᵀ for K ∈ R^{n×d} (paper 001 Theorems 5 and 6) without forming the n×n matrix:
    the eigenvalues of the smaller Gram matrix (one syrk and LAPACK's dsyevd), and n − rank(K) zeros.
    K: float64 array, C or Fortran order. Returns a Spectrum; Spectrum.all_eigenvalues() equals
    numpy.linalg.eigvalsh(K @ K.T) to rounding.
    """
def kwta(v: typing.Any, k: int, rule: str = 'strict') -> typing.Any:
    """
    The k-winner-take-all cap C_k of paper 002 (COMET), eq. (3): [C_k(v)]_i = 1 if |{j : v_j ≥ v_i}| ≤ k.
    rule: "strict" (eq. (3) as printed: a tie across the k-th place drops every tied value, ERRATA 002),
    "inclusive" (v_i ≥ the k-th largest: may keep more than k) or "exact" (exactly min(k, N) winners, ties
    lowest index first). C_2([3, 2, 2, 1]) is [1, 0, 0, 0], [1, 1, 1, 0], [1, 1, 0, 0] under the three.
    v: a float64 vector, or an N × M matrix whose columns are capped one by one. Returns 0/1 floats.
    """
def layer_metrics(W: typing.Any, *, spike_level: float = 0.01, censor: float = 0.05, mp_level: float = 0.05, ratio_level: float = 0.05, near_zero: float = 0.001, majority_fraction: float = 0.7, solver: str = 'automatic') -> dict:
    """
    Everything checkpoint_spectra computes for one layer W ∈ R^{N×M} (issue 16; paper 001 Theorem 1,
    Theorem 5 and §8.4), as a dict with the keys of a row of its JSON's data.layers: norms and stable
    rank, Marchenko–Pastur with the layer's own and a fitted σ² (KS p-values, spikes above the
    Tracy–Widom threshold, soft rank), the power-law tail α, κ = λ_max/λ_min⁺ against Theorem 5's
    interval for an initialised layer, §8.4's near-zero portion and majority ratio; plus "eigenvalues",
    the min(N, M) eigenvalues of the smaller Gram matrix, ascending. Numbers the JSON writes as null
    (NaN, ±∞) are floats here. W: float64, C or Fortran order, finite.
        Options (as checkpoint_spectra's flags): spike_level, the Tracy–Widom level of the spike
        threshold; censor, the fraction of the bulk censored at each end of the MP fit; mp_level, the bulk
        is Marchenko–Pastur when its KS p-value ≥ mp_level; ratio_level, the level of the Tracy–Widom
        interval of κ for an initialised layer (paper 001 Theorem 5); near_zero and majority_fraction,
        paper 001 §8.4's reading; solver, "automatic", "one_stage" (dsyevd) or "two_stage".
    """
def ratio_limit(c: numpy.typing.NDArray[numpy.float64]) -> typing.Any:
    """
    ((1 + √c)/(1 − √c))², the limit of λ_max/λ_min⁺ in paper 001 Theorem 5; vectorised over c.
    """
def slq(matvec: typing.Callable, n: int, *, probes: int = 16, steps: int = 30, probe: str = 'rademacher', seed: int = 0, stream: int = 0, batch: int = 8, block: bool = False) -> Slq:
    """
    Stochastic Lanczos quadrature (Lin, Saad & Yang 2016; PyHessian's spectral density, paper 001 §3.4's
    Hessian): `steps` Lanczos steps from each of `probes` unit probes. Returns an Slq; Slq.trace(f) and
    Slq.density(...) read it.
        matvec: a callable taking a float64 array x of shape (n,) and returning A x, shape (n,), float64
        (with block=True it takes and returns n × k arrays, k probes at once). A is assumed symmetric.
    """
def top_eigenvalues(matvec: typing.Callable, n: int, k: int = 1, *, by_magnitude: bool = False, tol: float = 1e-10, vectors: bool = False, ncv: int = 0, max_iterations: int = 5000, block: bool = False) -> TopEigen:
    """
    The k largest eigenvalues (by value, or by magnitude as PyHessian's power iteration) of a symmetric
    operator by Spectra's implicitly restarted Lanczos: a network's sharpest directions from
    Hessian-vector products alone (paper 001 §3.4). Returns a TopEigen.
        matvec: a callable taking a float64 array x of shape (n,) and returning A x, shape (n,), float64
        (with block=True it takes and returns n × k arrays, k probes at once). A is assumed symmetric.
    """
def zero_fraction_limit(n: int, d: int) -> float:
    """
    Theorem 5's zero fraction of K Kᵀ for K ∈ R^{n×d}: (n − d)/n when n > d, else 0 (paper 001).
    """
_default_majority_fraction: float = 0.7
_default_near_zero: float = 0.001
library_version: str = '0.1.0-5ecbdc0-dirty'
