// The Clauset–Shalizi–Newman power-law tail (spectral/power_law.hpp, issue 16) against ground truth:
// exact Pareto samples by inverse CDF (the fixed-x_min MLE covers the true α at its nominal rate, and its
// mean is the closed form 1 + (α − 1) n/(n − 1)), and the `powerlaw` package's x_min search
// re-implemented in a few lines of numpy on the same eigenvalues (same x_min, α to 1e-10).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <fmt/format.h>

#include "python_ref.hpp"
#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/spectral/power_law.hpp>
#include <sparseact/spectral/spectrum.hpp>

using namespace sparseact;
using namespace sparseact::spectral;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

/// n exact Pareto(α, x_min) values by inverse CDF: x = x_min (1 − U)^{−1/(α−1)}, 1 − U ∈ (0, 1].
std::vector<double> pareto(std::size_t n, double alpha, double x_min, std::uint64_t seed, std::uint64_t stream) {
  Rng rng(seed, stream);
  std::vector<double> x(n);
  for (auto& v : x) v = x_min * std::pow(1.0 - rng.uniform(), -1.0 / (alpha - 1.0));
  return x;
}

/// The `powerlaw` package's continuous fit (Fit.find_xmin with its defaults, Power_Law.fit,
/// Distribution.compute_distance_metrics and cumulative_distribution_function), in numpy: candidates are
/// the distinct values but the largest, D compares the fit with searchsorted(left)/n at the distinct
/// tail values; `two_sided` also compares with searchsorted(right)/n. Prints x_min, α, σ, n, D for
/// (two_sided, min_tail) = (no, 2), (no, 10), (yes, 2), (yes, 10).
std::string powerlaw_reference(const std::vector<double>& values) {
  std::string list;
  for (double v : values) list += fmt::format("{:.17g},", v);
  return fmt::format(R"(
import numpy as np
x = np.sort(np.array([{}], dtype=float))
x = x[x > 0]
def fit(two_sided, min_tail):
    best = None
    for xmin in np.unique(x)[:-1]:
        d = x[x >= xmin]
        n = len(d)
        if n < min_tail:
            continue
        alpha = 1 + n / np.sum(np.log(d / xmin))
        u, first = np.unique(d, return_index=True)
        emp = np.searchsorted(d, d, side='left')[first] / n
        th = 1 - (u / xmin) ** (1 - alpha)
        D = np.max(np.abs(th - emp))
        if two_sided:
            D = max(D, np.max(np.abs(th - np.searchsorted(d, u, side='right') / n)))
        if best is None or D < best[4]:
            best = (xmin, alpha, (alpha - 1) / np.sqrt(n), n, D)
    return best
for two_sided in (False, True):
    for min_tail in (2, 10):
        print(' '.join(repr(float(v)) for v in fit(two_sided, min_tail)))
)",
                     list);
}

void check_against_reference(const std::vector<double>& values, const std::string& tag) {
  const std::vector<double> ref = run_python_numbers(powerlaw_reference(values), "power_law_" + tag);
  REQUIRE(ref.size() == 20);
  std::size_t k = 0;
  for (const bool two_sided : {false, true})
    for (const std::size_t min_tail : {2, 10}) {
      CAPTURE(tag, two_sided, min_tail);
      const PowerLawTail fit = fit_power_law_tail(values, {min_tail, two_sided ? KsSide::two_sided : KsSide::left});
      REQUIRE(fit.valid);
      CHECK(fit.x_min == ref[k]);  // the same candidate, bit for bit
      CHECK_THAT(fit.alpha, WithinRel(ref[k + 1], 1e-10));
      CHECK_THAT(fit.alpha_se, WithinRel(ref[k + 2], 1e-10));
      CHECK(fit.n_tail == static_cast<std::size_t>(ref[k + 3]));
      CHECK_THAT(fit.D, WithinAbs(ref[k + 4], 1e-12));
      k += 5;
    }
}

}  // namespace

TEST_CASE("power law at a known x_min: exact Pareto samples, coverage and the closed-form mean", "[spectral][checkpoint]") {
  constexpr double alpha = 2.5, x_min = 1.7;
  constexpr std::size_t n = 500;
  constexpr int draws = 200;
  const double z = stats::normal_quantile(0.975);
  int within_1se = 0, within_z = 0;
  stats::RunningMean mean;
  for (int t = 0; t < draws; ++t) {
    const std::vector<double> x = pareto(n, alpha, x_min, 16, static_cast<std::uint64_t>(t));
    const PowerLawTail fit = power_law_tail_at(x, x_min);
    REQUIRE(fit.valid);
    REQUIRE(fit.n_tail == n);
    // The estimator is the closed form α̂ = 1 + n / Σ ln(x_i/x_min).
    double sum = 0;
    for (double v : x) sum += std::log(v / x_min);
    CHECK_THAT(fit.alpha, WithinRel(1 + n / sum, 1e-12));
    CHECK_THAT(fit.alpha_se, WithinRel((fit.alpha - 1) / std::sqrt(double(n)), 1e-15));
    CHECK(fit.D < 0.1);  // the right law: D ~ 1/√n
    within_1se += std::abs(fit.alpha - alpha) <= fit.alpha_se;
    within_z += std::abs(fit.alpha - alpha) <= z * fit.alpha_se;
    mean.push(fit.alpha);
  }
  // α̂ ± SE is a 68.3% interval and α̂ ± 1.96 SE a 95% one: the observed coverage's 99% Wilson interval
  // must hold the nominal rate (at 200 draws, "≥ 95%" read literally would fail half the time).
  CAPTURE(within_1se, within_z);
  CHECK(stats::wilson_interval(within_1se, draws, 0.01).contains(2 * stats::normal_cdf(1.0) - 1));
  CHECK(stats::wilson_interval(within_z, draws, 0.01).contains(0.95));
  CHECK(within_z >= 180);
  // Exactly n(α − 1)/(α̂ − 1) ~ Gamma(n, 1): E α̂ = 1 + (α − 1) n/(n − 1), sd (α − 1) n/((n − 1)√(n − 2)).
  const double expected = 1 + (alpha - 1) * n / (n - 1.0);
  const double sd = (alpha - 1) * n / ((n - 1.0) * std::sqrt(n - 2.0));
  CHECK(std::abs(mean.mean() - expected) <= 3 * sd / std::sqrt(double(draws)));
}

TEST_CASE("CSN x_min search recovers a planted Pareto tail above a different body", "[spectral][checkpoint]") {
  // 700 Pareto(3, 10) values above 300 uniform ones on [1, 5): the search finds x_min at (or just above)
  // the smallest Pareto value, and α within its standard error's reach.
  std::vector<double> x = pareto(700, 3.0, 10.0, 16, 1000);
  const double smallest = *std::min_element(x.begin(), x.end());
  Rng rng(16, 1001);
  for (int i = 0; i < 300; ++i) x.push_back(rng.uniform(1.0, 5.0));
  const PowerLawTail fit = fit_power_law_tail(x);
  REQUIRE(fit.valid);
  CAPTURE(fit.x_min, fit.n_tail, fit.alpha, fit.alpha_se);
  CHECK(fit.x_min >= smallest);
  CHECK(fit.x_min <= 20.0);
  CHECK(fit.n_tail >= 150);
  CHECK(std::abs(fit.alpha - 3.0) <= 3 * fit.alpha_se);
  CHECK(fit.candidates == 999);  // every distinct value but the largest
}

TEST_CASE("CSN fit equals the powerlaw package's algorithm in numpy on the same eigenvalues", "[spectral][checkpoint]") {
  // Eigenvalues of a heavy-tailed matrix: Gaussian entries over U^0.6, the kind of spectrum issue 16 fits.
  Eigen::MatrixXd W(150, 70);
  Rng rng(16, 7);
  for (Eigen::Index j = 0; j < W.cols(); ++j)
    for (Eigen::Index i = 0; i < W.rows(); ++i) W(i, j) = rng.normal() / std::pow(1.0 - rng.uniform(), 0.6);
  const Eigen::VectorXd lam = kkt_spectrum(W).nonzero();
  check_against_reference(std::vector<double>(lam.data(), lam.data() + lam.size()), "eig");
  // Ties: Pareto values rounded to 2 decimals (repeated values, as an eigenvalue list rarely has).
  std::vector<double> tied = pareto(200, 2.2, 1.0, 16, 8);
  for (double& v : tied) v = std::round(v * 100) / 100;
  check_against_reference(tied, "ties");
}

TEST_CASE("CSN fit: too few values, all equal, non-positive values and the tail-size rule", "[spectral][checkpoint]") {
  CHECK_FALSE(fit_power_law_tail({}).valid);
  CHECK_FALSE(fit_power_law_tail({3.0}).valid);
  CHECK_FALSE(fit_power_law_tail({2.0, 2.0, 2.0}).valid);
  CHECK(std::isnan(fit_power_law_tail({2.0, 2.0}).alpha));
  CHECK_FALSE(power_law_tail_at({1.0, 2.0}, 5.0).valid);
  CHECK_FALSE(power_law_tail_at({1.0, 2.0}, 0.0).valid);
  // Two values: one candidate, the smaller; n = 2, α = 1 + 2/ln(b/a).
  const PowerLawTail two = fit_power_law_tail({1.0, std::exp(1.0)});
  REQUIRE(two.valid);
  CHECK(two.x_min == 1.0);
  CHECK(two.n_tail == 2);
  CHECK_THAT(two.alpha, WithinRel(3.0, 1e-15));
  // Zeros and negatives are dropped, as `powerlaw` drops them.
  const PowerLawTail with_zeros = fit_power_law_tail({0.0, -1.0, 1.0, std::exp(1.0)});
  CHECK(with_zeros.x_min == 1.0);
  CHECK(with_zeros.n_tail == 2);
  // min_tail: no candidate leaves fewer values than asked.
  const std::vector<double> x = pareto(100, 2.5, 1.0, 16, 9);
  for (std::size_t min_tail : {2, 20, 60}) {
    const PowerLawTail fit = fit_power_law_tail(x, {min_tail, KsSide::left});
    CHECK(fit.n_tail >= min_tail);
    CHECK(fit.candidates == 100 - min_tail + 1);  // distinct values but the largest, tails ≥ min_tail
  }
  CHECK_FALSE(fit_power_law_tail(x, {101, KsSide::left}).valid);
}
