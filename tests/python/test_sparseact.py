"""Tests of the Python module sparseact (issue 31) against independent ground truth: numpy's and scipy's
eigenvalues, quadrature and binomial quantiles, the checkpoint_spectra executable's JSON for the same
matrix, and hand-worked routing cases. Run by ctest (python_module) as
    PYTHONPATH=build/python python3 -m pytest tests/python -q
with SPARSEACT_BIN naming the build's bin/ (for the analyses these tests compare with), and after
`pip install .` as `python -m pytest tests/python`, where sparseact.run() finds the analyses in the
installed package (tests/python/pip_install_test.sh)."""
import json
import math
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest
import scipy.integrate
import scipy.stats

import sparseact

ROOT = pathlib.Path(__file__).resolve().parents[2]


def have_analysis(name):
    """Whether sparseact.run() finds the analysis executable (SPARSEACT_BIN, the package's own, PATH)."""
    try:
        sparseact._run._executable(name)
        return True
    except ValueError:
        return False


def spd(n, seed, lo=1.0, hi=10.0):
    """A symmetric positive definite n × n matrix with eigenvalues spread over [lo, hi] and a full,
    uneven diagonal (so Hutchinson's variance 2(‖A‖²_F − Σ A_ii²) is not small)."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (Q * np.linspace(lo, hi, n)) @ Q.T


# --- spectra ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,d", [(60, 40), (40, 60), (50, 50), (200, 20)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_kkt_spectrum_equals_eigvalsh(n, d, order):
    rng = np.random.default_rng(n * 1000 + d)
    K = np.asarray(rng.standard_normal((n, d)) / math.sqrt(max(n, d)), order=order)
    s = sparseact.kkt_spectrum(K)
    ref = np.linalg.eigvalsh(K @ K.T)
    ours = s.all_eigenvalues()
    assert ours.shape == (n,)
    assert np.max(np.abs(ours - ref)) <= 1e-10
    assert np.max(np.abs(s.gram - np.linalg.eigvalsh(K.T @ K if n >= d else K @ K.T))) <= 1e-10
    assert s.rank == min(n, d)
    assert s.zero_fraction == pytest.approx(sparseact.zero_fraction_limit(n, d), abs=0)
    assert s.ratio == pytest.approx(ref[-1] / ref[n - min(n, d)], rel=1e-10)


def test_kkt_spectrum_of_rank_deficient_matrix():
    rng = np.random.default_rng(7)
    K = rng.standard_normal((30, 3)) @ rng.standard_normal((3, 20))  # rank 3
    s = sparseact.kkt_spectrum(K)
    assert s.rank == 3 and s.zeros == 27
    assert np.max(np.abs(s.all_eigenvalues() - np.linalg.eigvalsh(K @ K.T))) <= 1e-10 * s.lambda_max


@pytest.mark.parametrize("c,sigma2", [(0.25, 1.0), (0.5, 2.0), (4.0, 1.0)])
def test_marchenko_pastur_against_quadrature(c, sigma2):
    mp = sparseact.marchenko_pastur(c, sigma2)
    a, b = mp.edges
    assert a == pytest.approx(sigma2 * (1 - math.sqrt(c)) ** 2, rel=1e-14)
    assert b == pytest.approx(sigma2 * (1 + math.sqrt(c)) ** 2, rel=1e-14)
    assert mp.atom == pytest.approx(max(0.0, 1 - 1 / c), abs=1e-15)
    # The density (scipy's adaptive quadrature, independent of the library's) integrates to the
    # continuous mass, its mean is σ² and its CDF is the integral.
    mass, _ = scipy.integrate.quad(lambda x: mp.density(x), a, b, limit=200)
    assert mass == pytest.approx(1 - mp.atom, abs=1e-8)
    mean, _ = scipy.integrate.quad(lambda x: x * mp.density(x), a, b, limit=200)
    assert mean == pytest.approx(sigma2, rel=1e-8)
    x = a + 0.37 * (b - a)
    part, _ = scipy.integrate.quad(lambda t: mp.density(t), a, x, limit=200)
    assert float(mp.cdf(x)) == pytest.approx(mp.atom + part, abs=1e-8)
    np.testing.assert_allclose(mp.cdf(np.array([a - 1, b + 1])), [mp.atom if a - 1 >= 0 else 0.0, 1.0], atol=1e-12)
    assert float(mp.cdf(mp.quantile(0.8))) == pytest.approx(0.8, abs=1e-9)


def test_ratio_limit_closed_form():
    c = np.array([0.1, 0.25, 0.5, 2.0, 4.0])
    np.testing.assert_allclose(sparseact.ratio_limit(c), ((1 + np.sqrt(c)) / (1 - np.sqrt(c))) ** 2, rtol=1e-14)


def test_layer_metrics_equals_the_analysis_json(tmp_path):
    rng = np.random.default_rng(11)
    W = rng.standard_normal((192, 64)) * 0.05
    W[:, :3] *= 20  # a few spikes, so the fits have something to find
    np.save(tmp_path / "W.npy", W)
    if not have_analysis("checkpoint_spectra"):
        pytest.skip("the checkpoint_spectra executable is not built")
    ours = sparseact.layer_metrics(W)
    # The analysis as its executable, through sparseact.run(); its JSON is the C++ path's table.
    r = sparseact.run("checkpoint_spectra", tmp_path / "W.npy", out=tmp_path / "out", esd_figures=0)
    assert r.out == (tmp_path / "out").resolve()
    row = r.result["data"]["layers"][0]
    assert row["rows"] == 192 and row["cols"] == 64 and row["kind"] == ours["kind"]
    numeric = [k for k in row if k not in ("name", "block", "rows", "cols", "kind")]
    assert len(numeric) >= 30
    for k in numeric:
        if row[k] is None:  # the JSON writes NaN and ±∞ as null
            assert not math.isfinite(ours[k]), k
        else:
            assert ours[k] == pytest.approx(row[k], rel=1e-12, abs=0), k
    # The same table in-process, from the file.
    table = sparseact.checkpoint_spectra(tmp_path / "W.npy", dataframe=False)
    assert len(table) == 1 and table.skipped == []
    for k in numeric:
        a, b = table[0][k], ours[k]
        assert (a == b) or (math.isnan(a) and math.isnan(b)), k
    np.testing.assert_allclose(ours["eigenvalues"], np.linalg.eigvalsh(W.T @ W), atol=1e-10 * ours["lambda_max"])


def test_checkpoint_spectra_lists_skipped_tensors(tmp_path):
    rng = np.random.default_rng(3)
    np.savez(tmp_path / "m.npz", **{"a.weight": rng.standard_normal((64, 40)), "a.bias": rng.standard_normal(64),
                                      "b.weight": rng.standard_normal((8, 40))})
    table = sparseact.checkpoint_spectra(tmp_path / "m.npz", dataframe=False)
    assert [row["name"] for row in table] == ["a.weight"]
    reasons = {s["name"]: s["reason"] for s in table.skipped}
    assert set(reasons) == {"a.bias", "b.weight"}
    assert table.tensors == 3


# --- estimators on a Python operator ---------------------------------------------------------------------

def test_hutchinson_coverage_over_200_seeds():
    """The (1 − α) interval of a fixed-budget Hutchinson estimate contains tr(A) in a fraction of 200
    seeds that a binomial(200, 1 − α) count reaches (two-sided, 0.999: a failure is not chance)."""
    A = spd(40, seed=5)
    tr = np.trace(A)
    calls = [0]

    def matvec(x):
        calls[0] += 1
        assert x.dtype == np.float64 and x.shape == (40,)
        return A @ x

    alpha, seeds, probes = 0.05, 200, 40
    hits = 0
    for seed in range(seeds):
        t = sparseact.hutchinson_trace(matvec, 40, seed=seed, min_samples=probes, max_samples=probes, alpha=alpha)
        assert t.probes == probes and t.matvecs == probes
        lo, hi = t.interval
        hits += lo <= tr <= hi
    assert calls[0] == seeds * probes
    lo, hi = scipy.stats.binom.interval(0.999, seeds, 1 - alpha)
    assert lo <= hits <= hi, f"{hits} of {seeds} intervals contain tr(A); binomial 99.9% range [{lo}, {hi}]"


def test_hutchinson_probes_are_the_libraries_and_blocks_agree():
    A = spd(30, seed=2)
    # Rademacher probes: zᵀAz of probe j; with block=True the callable sees n × k arrays.
    seen = []

    def mv(x):
        seen.append(x.copy())
        return A @ x

    t1 = sparseact.hutchinson_trace(mv, 30, seed=9, min_samples=16, max_samples=16)
    assert all(set(np.unique(z)) <= {-1.0, 1.0} for z in seen)
    q = np.array([z @ A @ z for z in seen])
    assert t1.estimate == pytest.approx(q.mean(), rel=1e-13)
    assert t1.std_error == pytest.approx(q.std(ddof=1) / math.sqrt(16), rel=1e-10)
    t2 = sparseact.hutchinson_trace(lambda X: A @ X, 30, seed=9, min_samples=16, max_samples=16, block=True)
    assert t2.estimate == pytest.approx(t1.estimate, rel=1e-13)
    t3 = sparseact.hutchinson_trace(mv, 30, seed=10, min_samples=16, max_samples=16)
    assert t3.estimate != t1.estimate
    # Per-segment traces from the same probes sum to the whole.
    t4 = sparseact.hutchinson_trace(lambda x: A @ x, 30, seed=9, min_samples=16, max_samples=16,
                                    segments=[("first", 0, 10), ("rest", 10, 20)])
    assert sum(s.estimate for s in t4.segments) == pytest.approx(t4.estimate, rel=1e-12)


def test_hutchpp_slq_and_top_eigenvalues():
    A = spd(50, seed=4)
    ev = np.linalg.eigvalsh(A)
    exact = sparseact.hutchpp(lambda x: A @ x, 50, 150)  # sketch 50 = n: exact
    assert exact.estimate == pytest.approx(np.trace(A), rel=1e-10)
    top = sparseact.top_eigenvalues(lambda x: A @ x, 50, 3)
    np.testing.assert_allclose(top.values, ev[::-1][:3], rtol=1e-9)
    s = sparseact.slq(lambda x: A @ x, 50, steps=50, probes=4)
    t = s.trace(lambda x: x * x)  # tr(A²): exact for a polynomial of degree ≤ 2m − 1, per probe unbiased
    assert t.estimate == pytest.approx(np.sum(ev ** 2), rel=0.5)
    d = s.density(points=50, sigma=0.2)
    assert d["density"].shape == (50,)


def test_matvec_errors_propagate():
    def boom(x):
        raise ZeroDivisionError("from the callable")

    with pytest.raises(ZeroDivisionError, match="from the callable"):
        sparseact.hutchinson_trace(boom, 10)
    with pytest.raises(ValueError, match="matvec: returned shape"):
        sparseact.hutchinson_trace(lambda x: np.zeros(9), 10)
    with pytest.raises(ValueError, match="matvec: must return float64"):
        sparseact.hutchinson_trace(lambda x: x.astype(np.float32), 10)
    with pytest.raises(ValueError, match="matvec: returned NaN"):
        sparseact.hutchinson_trace(lambda x: x * np.nan, 10)
    with pytest.raises(ValueError, match="matvec: must return float64, got object"):
        sparseact.top_eigenvalues(lambda x: None, 10, 2)


def test_long_calls_release_the_gil():
    K = np.random.default_rng(0).standard_normal((1500, 1500))
    ticks, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1

    th = threading.Thread(target=count)
    th.start()
    try:
        before = ticks[0]
        sparseact.kkt_spectrum(K)
        during = ticks[0] - before
    finally:
        stop.set()
        th.join()
    assert during > 1000, "another Python thread made no progress during kkt_spectrum"


# --- routing and LSH -------------------------------------------------------------------------------------

def test_kwta_tie_case():
    v = np.array([3.0, 2.0, 2.0, 1.0])
    np.testing.assert_array_equal(sparseact.kwta(v, 2), [1, 0, 0, 0])  # eq. (3) as printed drops the tie
    np.testing.assert_array_equal(sparseact.kwta(v, 2, "inclusive"), [1, 1, 1, 0])
    np.testing.assert_array_equal(sparseact.kwta(v, 2, "exact"), [1, 1, 0, 0])
    np.testing.assert_array_equal(sparseact.kwta(v, 1), [1, 0, 0, 0])
    np.testing.assert_array_equal(sparseact.kwta(v, 3), [1, 1, 1, 0])
    V = np.column_stack([v, v[::-1]])
    np.testing.assert_array_equal(sparseact.kwta(V, 2, "exact"), [[1, 0], [1, 1], [0, 0], [0, 1]])  # ties: lowest index first
    with pytest.raises(ValueError, match="rule"):
        sparseact.kwta(v, 2, "nearest")


def test_comet_masks_and_overlap_law():
    X = np.random.default_rng(1).standard_normal((20, 9))
    masks = sparseact.comet_masks(X, [20, 300, 200, 10], 0.25, seed=3)
    assert [m.shape for m in masks] == [(300, 9), (200, 9)]
    for m, n in zip(masks, (300, 200)):
        assert set(np.unique(m)) <= {0.0, 1.0}
        assert np.all(m.sum(axis=0) <= sparseact.active_units(0.25, n))
    again = sparseact.comet_masks(np.asfortranarray(X), [20, 300, 200, 10], 0.25, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(masks, again))
    # O(0) = p_k, O(1) = 1, and O(ρ) = 1 − arccos(ρ)/π at p_k = 1/2 (closed forms the header states).
    assert sparseact.expected_overlap(0.0, 0.3) == pytest.approx(0.3, abs=1e-12)
    assert sparseact.expected_overlap(1.0, 0.3) == pytest.approx(1.0, abs=1e-12)
    rho = np.array([-0.5, 0.2, 0.7])
    np.testing.assert_allclose(sparseact.expected_overlap(rho, 0.5), 1 - np.arccos(rho) / np.pi, atol=1e-10)
    law = sparseact.comet_network_law(0.5, 0.25, [20, 100, 100, 10])
    assert len(law["layers"]) == 2 and law["k"] == [25, 25]


def test_hash_codes():
    X = np.random.default_rng(2).standard_normal((16, 40))
    sign = sparseact.hash(X, tables=3, bits=10, seed=4)
    assert sign.shape == (3, 40) and sign.dtype == np.uint64 and sign.max() < 2 ** 10
    np.testing.assert_array_equal(sign, sparseact.hash(np.asfortranarray(X), tables=3, bits=10, seed=4))
    # Sign family: codes are invariant under positive scaling of the points; opposite points flip every bit.
    np.testing.assert_array_equal(sign, sparseact.hash(3.5 * X, tables=3, bits=10, seed=4))
    np.testing.assert_array_equal(sparseact.hash(-X, tables=3, bits=10, seed=4), (2 ** 10 - 1) ^ sign)
    off = sparseact.hash(X, family="offset", tables=3, bits=10, offset_range=2.0, seed=4)
    assert off.shape == (3, 40) and not np.array_equal(off, sign)
    eu = sparseact.hash(X, family="euclidean", tables=5, eps=0.5, seed=4)
    assert eu.shape == (5, 40) and eu.dtype == np.int32


# --- bad input: ValueError naming the argument, never a crash ----------------------------------------------

GOOD = np.random.default_rng(0).standard_normal((20, 8))
BAD_MATRICES = {
    "float32": GOOD.astype(np.float32),
    "int": np.ones((20, 8), dtype=np.int64),
    "big-endian": GOOD.astype(">f8"),
    "1-D": GOOD[:, 0].copy(),
    "3-D": GOOD.reshape(20, 4, 2),
    "empty": np.zeros((0, 8)),
    "non-contiguous": np.random.default_rng(0).standard_normal((20, 16))[:, ::2],
    "transposed slice": np.random.default_rng(0).standard_normal((16, 40))[::2, ::2].T,
    "NaN": np.where(np.arange(160).reshape(20, 8) == 77, np.nan, GOOD),
    "inf": np.where(np.arange(160).reshape(20, 8) == 5, np.inf, GOOD),
    "list": GOOD.tolist(),
}


@pytest.mark.parametrize("case", sorted(BAD_MATRICES))
@pytest.mark.parametrize("call,name", [
    (lambda a: sparseact.kkt_spectrum(a), "K"),
    (lambda a: sparseact.layer_metrics(a), "W"),
    (lambda a: sparseact.hash(a), "X"),
    (lambda a: sparseact.comet_masks(a, [20, 30, 10], 0.5), "X0"),
])
def test_bad_matrix_raises_value_error(case, call, name):
    with pytest.raises(ValueError, match=f"^{name}: "):
        call(BAD_MATRICES[case])


@pytest.mark.parametrize("bad", [np.array([1.0, np.nan, 2.0]), np.array([1, 2, 3]), np.arange(6.0)[::2],
                                 np.array([1.0, 2.0], dtype=np.float32), np.zeros(0)])
def test_bad_vector_raises_value_error(bad):
    with pytest.raises(ValueError, match="^v: "):
        sparseact.kwta(bad, 1)


def test_bad_scalars_and_library_input_errors(tmp_path):
    with pytest.raises(ValueError, match="^c: "):
        sparseact.marchenko_pastur(-1.0)
    with pytest.raises(ValueError, match="^n: "):
        sparseact.hutchinson_trace(lambda x: x, 0)
    with pytest.raises(ValueError, match="^k: "):
        sparseact.kwta(np.ones(3), 0)
    with pytest.raises(ValueError, match="^spike_level: "):
        sparseact.layer_metrics(GOOD, spike_level=0.9)
    with pytest.raises(ValueError):  # the library's InputError, same message
        sparseact.checkpoint_spectra("/nonexistent/model.safetensors", dataframe=False)
    np.save(tmp_path / "W.npy", GOOD)
    with pytest.raises(ValueError, match="regular expression|regex"):  # an InputError of the library
        sparseact.checkpoint_spectra(tmp_path / "W.npy", match="(", dataframe=False)
    if have_analysis("mp_spectrum"):
        with pytest.raises(ValueError, match="--n"):  # the analysis's exit 2, its one-line message
            sparseact.run("mp_spectrum", n=-3, out="/tmp/never-written")


# --- the examples ---------------------------------------------------------------------------------------------

def test_torch_hessian_example():
    try:
        import torch  # noqa: F401
    except ImportError:
        pytest.skip(f"torch is not importable by {sys.executable} (Debian's python3-torch)")
    p = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / "hessian_trace_torch.py")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "contains the exact trace" in p.stdout, p.stdout


def test_minilm_example():
    ckpt = ROOT / "models" / "minilm" / "model.safetensors"
    if not ckpt.exists():
        pytest.skip(f"{ckpt} is absent (examples/fetch_minilm.sh downloads it)")
    p = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / "minilm_layers.py"), str(ckpt), "--match", r"layer\.0\."],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("6 layers,"), p.stdout
    assert "encoder.layer.0.intermediate.dense" in p.stdout
