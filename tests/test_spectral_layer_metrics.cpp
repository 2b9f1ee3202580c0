// Every per-layer quantity of issue 16 (spectral/layer_metrics.hpp) against numpy/scipy computed in the
// test on small generated matrices (eigenvalues by numpy.linalg.svd, norms by numpy.linalg.norm, the MP
// CDF by scipy.integrate.quad, the `powerlaw` algorithm in numpy, §8.4's majority by a sliding window);
// the Tracy–Widom spike count on pure noise (0 in ≥ 95 of 100 draws) and on planted spikes; degenerate
// layers reported by kind, never thrown.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "python_ref.hpp"
#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/spectral/layer_metrics.hpp>
#include <sparseact/spectral/spectrum.hpp>

using namespace sparseact;
using namespace sparseact::spectral;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

Eigen::MatrixXd gaussian(Eigen::Index N, Eigen::Index M, double sigma, std::uint64_t seed, std::uint64_t stream) {
  Eigen::MatrixXd W(N, M);
  fill_random(W.data(), static_cast<std::size_t>(W.size()), Distribution::normal, sigma, seed, stream);
  return W;
}

/// W = σG + Σ_k s_k σ √max(N, M) u_k v_kᵀ (unit u_k, v_k): spikes of normalised strength s_k (see test_spectral_mp_fit).
Eigen::MatrixXd spiked(Eigen::Index N, Eigen::Index M, double sigma, const std::vector<double>& s, std::uint64_t seed, std::uint64_t stream) {
  Eigen::MatrixXd W = gaussian(N, M, sigma, seed, stream);
  const double scale = sigma * std::sqrt(static_cast<double>(std::max(N, M)));
  for (std::size_t k = 0; k < s.size(); ++k) {
    const Eigen::VectorXd u = gaussian(N, 1, 1.0, seed, stream_id(stream, 2 * k + 1)).col(0).normalized();
    const Eigen::VectorXd v = gaussian(M, 1, 1.0, seed, stream_id(stream, 2 * k + 2)).col(0).normalized();
    W += s[k] * scale * u * v.transpose();
  }
  return W;
}

/// numpy/scipy's values of every quantity the test compares for each matrix (27 numbers a matrix, in the
/// order check_against_numpy reads them), in one Python run.
std::string reference_script(const std::vector<Eigen::MatrixXd>& Ws, const std::vector<LayerMetrics>& ours) {
  std::string script = R"(
import math
import numpy as np
from scipy import integrate
from scipy.stats import kstwobign

def reference(N, M, values, sigma2_fit, bulk_fit):
    W = np.array(values).reshape((N, M), order='F')
    m, n = min(N, M), max(N, M)
    c = m / n
    s = np.linalg.svd(W, compute_uv=False)
    lam = np.sort(s ** 2)
    nz = lam[lam > n * np.finfo(float).eps * lam[-1]]
    out = [lam[-1], nz[0], lam.sum(), lam.sum() / lam[-1], math.log10(np.linalg.norm(W, 2)),
           math.log10(np.linalg.norm(W, 'fro')), len(nz), lam[-1] / nz[0],
           ((1 + math.sqrt(c)) / (1 - math.sqrt(c))) ** 2 if c < 1 else -1.0]

    def mp_ks(nu, sigma2):
        a, b = sigma2 * (1 - math.sqrt(c)) ** 2, sigma2 * (1 + math.sqrt(c)) ** 2
        dens = lambda x: math.sqrt(max((b - x) * (x - a), 0.0)) / (2 * math.pi * c * sigma2 * x)
        cdf = lambda x: 0.0 if x <= a else 1.0 if x >= b else integrate.quad(dens, a, x, limit=200, epsabs=1e-13, epsrel=1e-13)[0]
        k = len(nu)
        D = max(max(abs(i / k - cdf(v)), abs((i + 1) / k - cdf(v))) for i, v in enumerate(nu))
        return D, kstwobign.sf((math.sqrt(k) + 0.12 + 0.11 / math.sqrt(k)) * D), b * n

    sigma2 = np.sum(W ** 2) / (N * M)
    D, p, lp = mp_ks(np.sort(nz / n), sigma2)
    out += [sigma2, lp, lp / lam[-1], D, p]
    D, p, lp = mp_ks(np.sort(nz / n)[:bulk_fit], sigma2_fit)
    out += [lp, D, p]

    # the powerlaw package's fit (see test_spectral_power_law.cpp)
    best = None
    for xmin in np.unique(nz)[:-1]:
        d = nz[nz >= xmin]
        k = len(d)
        alpha = 1 + k / np.sum(np.log(d / xmin))
        u, first = np.unique(d, return_index=True)
        D = np.max(np.abs(1 - (u / xmin) ** (1 - alpha) - np.searchsorted(d, d, side='left')[first] / k))
        if best is None or D < best[3]:
            best = (xmin, alpha, (alpha - 1) / np.sqrt(k), D, k)
    out += list(best) + [best[1] * math.log10(lam[-1])]

    # paper 001 §8.4 on the N eigenvalues of W Wᵀ: near-zero (< 1e-3) portion, the 70% majority
    allev = np.concatenate([np.zeros(N - len(nz)), nz])
    rest = np.sort(allev[allev >= 1e-3])
    k = math.ceil(0.7 * len(rest))
    width = min(math.log10(rest[i + k - 1]) - math.log10(rest[i]) for i in range(len(rest) - k + 1))
    out += [np.mean(allev < 1e-3), 10 ** width, rest[-1] / rest[0], len(rest)]
    print(' '.join(repr(float(v)) for v in out))
)";
  for (std::size_t k = 0; k < Ws.size(); ++k) {
    const Eigen::MatrixXd& W = Ws[k];
    std::string values;
    for (Eigen::Index j = 0; j < W.cols(); ++j)
      for (Eigen::Index i = 0; i < W.rows(); ++i) values += fmt::format("{:.17g},", W(i, j));
    script += fmt::format("reference({}, {}, [{}], {:.17g}, {})\n", W.rows(), W.cols(), values, ours[k].mp_fit.sigma2, ours[k].mp_fit.bulk);
  }
  return script;
}

void check_against_numpy(const Eigen::MatrixXd& W, const LayerMetrics& r, const double* ref, const std::string& tag) {
  CAPTURE(tag, W.rows(), W.cols());
  REQUIRE(r.kind == SpectrumKind::regular);
  REQUIRE(r.mp_fit.valid);
  const double tol = 1e-10;
  CHECK_THAT(r.lambda_max, WithinRel(ref[0], tol));
  CHECK_THAT(r.lambda_min_nonzero, WithinRel(ref[1], 1e-8));  // ε κ relative through the Gram matrix
  CHECK_THAT(r.sum_lambda, WithinRel(ref[2], tol));
  CHECK_THAT(r.stable_rank, WithinRel(ref[3], tol));
  CHECK_THAT(r.log10_spectral_norm, WithinRel(ref[4], tol));
  CHECK_THAT(r.log10_frobenius_norm, WithinRel(ref[5], tol));
  CHECK_THAT(r.log10_lambda_max, WithinRel(2 * ref[4], tol));
  CHECK_THAT(r.log10_sum_lambda, WithinRel(2 * ref[5], tol));
  CHECK(r.rank == static_cast<Eigen::Index>(ref[6]));
  CHECK_THAT(r.ratio, WithinRel(ref[7], 1e-8));
  if (ref[8] < 0) CHECK(std::isinf(r.ratio_limit));  // c = 1
  else CHECK_THAT(r.ratio_limit, WithinRel(ref[8], 1e-12));
  // MP with the layer's own σ²: σ², λ₊, soft rank, KS distance (MP CDF by scipy's quad) and p-value.
  CHECK_THAT(r.mp_own.sigma2, WithinRel(ref[9], tol));
  CHECK_THAT(r.mp_own.lambda_plus, WithinRel(ref[10], tol));
  CHECK_THAT(r.mp_soft_rank_own, WithinRel(ref[11], tol));
  // MP's CDF: ours in closed form, scipy's by QUADPACK.
  const double ks_tol = 1e-9;
  CHECK_THAT(r.mp_own.ks, WithinAbs(ref[12], ks_tol));
  CHECK_THAT(r.mp_own.ks_p_value, WithinAbs(ref[13], 1e-6));
  // MP with the fitted σ² (its value is the fit's; the edge, soft rank and the bulk's KS are checked).
  CHECK_THAT(r.mp_fit.lambda_plus, WithinRel(ref[14], tol));
  CHECK_THAT(r.mp_soft_rank, WithinRel(ref[14] / ref[0], tol));
  CHECK_THAT(r.mp_fit.ks, WithinAbs(ref[15], ks_tol));
  CHECK_THAT(r.mp_fit.ks_p_value, WithinAbs(ref[16], 1e-6));
  CHECK(r.bulk_is_mp == (r.mp_fit.ks_p_value >= 0.05));
  CHECK(r.spikes == r.mp_fit.spikes);
  // Power law (eigenvalues from svd vs syrk + syevd: x_min is the same eigenvalue to rounding).
  REQUIRE(r.power_law.valid);
  CHECK_THAT(r.power_law.x_min, WithinRel(ref[17], 1e-9));
  CHECK_THAT(r.power_law.alpha, WithinRel(ref[18], 1e-8));
  CHECK_THAT(r.power_law.alpha_se, WithinRel(ref[19], 1e-8));
  CHECK_THAT(r.power_law.D, WithinAbs(ref[20], 1e-8));
  CHECK(r.power_law.n_tail == static_cast<std::size_t>(ref[21]));
  CHECK_THAT(r.alpha_weighted, WithinRel(ref[22], 1e-8));
  // §8.4.
  CHECK_THAT(r.near_zero_portion, WithinAbs(ref[23], 1e-15));
  CHECK_THAT(r.majority_ratio, WithinRel(ref[24], 1e-9));
  CHECK_THAT(r.extreme_ratio, WithinRel(ref[25], 1e-8));
  CHECK(r.non_near_zero == static_cast<std::size_t>(ref[26]));
  CHECK(static_cast<double>(r.eigenvalues.size()) == std::min(W.rows(), W.cols()));
}

}  // namespace

TEST_CASE("layer metrics equal numpy/scipy's on small generated matrices", "[spectral][checkpoint]") {
  std::vector<Eigen::MatrixXd> Ws{gaussian(90, 40, 0.05, 18, 1),                 // W Wᵀ has 50 zeros
                                  gaussian(40, 90, 0.05, 18, 2),
                                  spiked(60, 60, 0.01, {3.0, 6.0}, 18, 3)};       // c = 1: no ratio limit
  // Heavy-tailed entries (Gaussian over U^0.5) and some eigenvalues below §8.4's 1e-3.
  Eigen::MatrixXd H(70, 50);
  Rng rng(18, 4);
  for (Eigen::Index j = 0; j < H.cols(); ++j)
    for (Eigen::Index i = 0; i < H.rows(); ++i) H(i, j) = 0.004 * rng.normal() / std::sqrt(1.0 - rng.uniform());
  Ws.push_back(H);
  std::vector<LayerMetrics> ours;
  for (const auto& W : Ws) ours.push_back(layer_metrics(W));
  const std::vector<double> ref = run_python_numbers(reference_script(Ws, ours), "layer_metrics");
  REQUIRE(ref.size() == 27 * Ws.size());
  const char* tags[] = {"tall", "wide", "square_spiked", "heavy"};
  for (std::size_t k = 0; k < Ws.size(); ++k) check_against_numpy(Ws[k], ours[k], ref.data() + 27 * k, tags[k]);
}

TEST_CASE("Tracy–Widom spike count: 0 on pure noise in ≥ 95 of 100 draws, planted spikes found", "[spectral][checkpoint]") {
  // Serial BLAS: 120 small spectra, where a BLAS pool only waits on a busy machine (the numbers are the
  // same, see the thread-count test below).
  const ScopedBlasThreads serial(1);
  int zero = 0;
  for (std::uint64_t t = 0; t < 100; ++t) zero += layer_metrics(gaussian(240, 80, 0.1, 19, t)).spikes == 0;
  CAPTURE(zero);
  CHECK(zero >= 95);
  for (std::uint64_t t = 0; t < 20; ++t) {
    CAPTURE(t);
    const LayerMetrics r = layer_metrics(spiked(240, 80, 0.1, {2.0, 3.0, 5.0}, 20, t));
    CHECK(r.spikes == 3);
    CHECK(r.mp_fit.bulk == 77);
    CHECK_THAT(std::sqrt(r.mp_fit.sigma2), WithinRel(0.1, 0.04));
  }
}

TEST_CASE("layer metrics: degenerate layers are reported by kind, never thrown", "[spectral][checkpoint]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // All zero.
  const LayerMetrics zero = layer_metrics(Eigen::MatrixXd::Zero(30, 20));
  CHECK(zero.kind == SpectrumKind::all_zero);
  CHECK(std::string(to_string(zero.kind)) == "all_zero");
  CHECK(zero.rank == 0);
  CHECK(zero.lambda_max == 0);
  CHECK(zero.log10_spectral_norm == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(zero.stable_rank));
  CHECK(std::isnan(zero.power_law.alpha));
  CHECK_FALSE(zero.mp_fit.valid);
  CHECK(zero.near_zero_portion == 1.0);
  CHECK(layer_metrics_from_eigenvalues(30, 20, Eigen::VectorXd::Zero(20)).kind == SpectrumKind::all_zero);
  // Rank one: u vᵀ with ‖u‖ = 3, ‖v‖ = 2: λ_max = 36, stable rank 1, κ = 1, no fits.
  Eigen::VectorXd u = Eigen::VectorXd::LinSpaced(30, 1, 2), v = Eigen::VectorXd::LinSpaced(20, -1, 1);
  u *= 3 / u.norm();
  v *= 2 / v.norm();
  const LayerMetrics one = layer_metrics(u * v.transpose());
  CHECK(one.kind == SpectrumKind::rank_one);
  CHECK(one.rank == 1);
  CHECK_THAT(one.lambda_max, WithinRel(36.0, 1e-13));
  CHECK_THAT(one.stable_rank, WithinRel(1.0, 1e-13));
  CHECK(one.ratio == 1.0);
  CHECK_FALSE(one.mp_fit.valid);
  CHECK_FALSE(one.power_law.valid);
  CHECK(std::isnan(one.alpha_weighted));
  CHECK(one.spikes == 0);
  // A row vector: m = 1, rank one.
  CHECK(layer_metrics(Eigen::MatrixXd::Constant(1, 50, 0.5)).kind == SpectrumKind::rank_one);
  // Rank two: regular, but too few eigenvalues for MP (valid = false), a power law on two values.
  Eigen::MatrixXd two = u * v.transpose();
  two += Eigen::VectorXd::LinSpaced(30, 2, -1) * Eigen::VectorXd::LinSpaced(20, 0, 1).transpose();
  const LayerMetrics r2 = layer_metrics(two);
  CHECK(r2.kind == SpectrumKind::regular);
  CHECK(r2.rank == 2);
  CHECK_FALSE(r2.mp_fit.valid);
  CHECK(std::isnan(r2.mp_fit.sigma2));
  CHECK(r2.power_law.valid);
  // Non-finite entries.
  Eigen::MatrixXd bad = gaussian(10, 8, 1.0, 21, 0);
  bad(3, 4) = nan;
  const LayerMetrics nf = layer_metrics(bad);
  CHECK(nf.kind == SpectrumKind::non_finite);
  CHECK(std::isnan(nf.lambda_max));
  bad(3, 4) = std::numeric_limits<double>::infinity();
  CHECK(layer_metrics(bad).kind == SpectrumKind::non_finite);
  // Not a layer at all, or an inconsistent input: those are errors.
  CHECK_THROWS_AS(layer_metrics(Eigen::MatrixXd(0, 5)), std::invalid_argument);
  CHECK_THROWS_AS(layer_metrics_from_eigenvalues(30, 20, Eigen::VectorXd::Ones(19)), std::invalid_argument);
}

TEST_CASE("layer metrics: from a spectrum computed elsewhere equal those from W; W and Wᵀ agree", "[spectral][checkpoint]") {
  const Eigen::MatrixXd W = spiked(150, 60, 0.05, {4.0}, 22, 0);
  const LayerMetrics a = layer_metrics(W);
  Eigen::VectorXd gram;
  {
    const ScopedBlasThreads serial(1);  // as layer_metrics computes it
    gram = kkt_spectrum(W).gram;
  }
  const LayerMetrics b = layer_metrics_from_eigenvalues(150, 60, gram);
  CHECK(a.lambda_max == b.lambda_max);
  CHECK(a.mp_fit.sigma2 == b.mp_fit.sigma2);
  CHECK(a.power_law.alpha == b.power_law.alpha);
  CHECK(a.majority_ratio == b.majority_ratio);
  CHECK(a.spikes == 1);
  const LayerMetrics t = layer_metrics(W.transpose());
  CHECK_THAT(t.lambda_max, WithinRel(a.lambda_max, 1e-12));
  CHECK_THAT(t.stable_rank, WithinRel(a.stable_rank, 1e-12));
  CHECK_THAT(t.mp_fit.sigma2, WithinRel(a.mp_fit.sigma2, 1e-9));
  CHECK_THAT(t.power_law.alpha, WithinRel(a.power_law.alpha, 1e-9));
  CHECK(t.spikes == a.spikes);
  // §8.4 reads W Wᵀ as stored: the tall W has 150 − 60 zeros, its transpose none.
  CHECK_THAT(a.near_zero_portion, WithinAbs(90.0 / 150.0, 1e-15));
  CHECK(t.near_zero_portion == 0.0);
}

TEST_CASE("layer metrics: the same numbers for any BLAS thread count", "[spectral][checkpoint]") {
  const Eigen::MatrixXd W = spiked(300, 700, 0.03, {3.0}, 23, 0);
  LayerMetrics one, two;
  {
    const ScopedBlasThreads serial(1);
    one = layer_metrics(W);
  }
  {
    const ScopedBlasThreads pool(2);
    two = layer_metrics(W);
  }
  CHECK(one.eigenvalues == two.eigenvalues);
  CHECK(one.mp_fit.sigma2 == two.mp_fit.sigma2);
  CHECK(one.mp_fit.ks == two.mp_fit.ks);
  CHECK(one.power_law.alpha == two.power_law.alpha);
  CHECK(one.power_law.D == two.power_law.D);
  CHECK(one.spikes == two.spikes);
}
