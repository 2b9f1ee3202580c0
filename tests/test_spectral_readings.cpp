// How paper 001 reads spectra, against hand-computable ground truth: §8.4's near-zero split and
// 70% majority on spectra written down by hand and on K Kᵀ built from chosen singular values,
// Theorem 6's summary on hand-made terms and on K with orthogonal columns, and Theorem 5's
// finite-size sweep against a direct recomputation (n×n eigenvalues, textbook mean and standard
// error) and a numpy reference for its power-law fit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <Eigen/Dense>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/spectral/esd.hpp>
#include <sparseact/spectral/finite_size.hpp>
#include <sparseact/spectral/init.hpp>
#include <sparseact/spectral/majority.hpp>
#include <sparseact/spectral/marchenko_pastur.hpp>
#include <sparseact/spectral/projection_bound.hpp>
#include <sparseact/spectral/spectrum.hpp>
#include <sparseact/spectral/tracy_widom.hpp>

using namespace sparseact;
using namespace sparseact::spectral;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

/// Q ∈ R^{n×d} with orthonormal columns, from the QR factorisation of a Gaussian matrix.
Eigen::MatrixXd orthonormal_columns(Eigen::Index n, Eigen::Index d, std::uint64_t seed) {
  Eigen::MatrixXd G(n, d);
  fill_random(G.data(), static_cast<std::size_t>(G.size()), Distribution::normal, 1.0, seed, 0);
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(G);
  return qr.householderQ() * Eigen::MatrixXd::Identity(n, d);
}

}  // namespace

TEST_CASE("near-zero split: below the threshold is near-zero, the threshold itself is not", "[spectral][majority]") {
  Eigen::VectorXd lam(6);
  lam << 0.0, 1e-12, 5e-4, 1e-3, 2.0, 3.0;
  const NearZeroSplit s = split_near_zero(lam);
  CHECK(s.near_zero_portion == 0.5);
  CHECK(s.rest == std::vector<double>{1e-3, 2.0, 3.0});
  CHECK(split_near_zero(lam, 1e-1).near_zero_portion == Approx(4.0 / 6.0));  // Fig. 15's T5 threshold
  CHECK(split_near_zero(lam, 0.0).near_zero_portion == 0.0);
  CHECK_THROWS(split_near_zero(Eigen::VectorXd()));
}

TEST_CASE("majority: the shortest log-interval holding ⌈0.7 m⌉ values", "[spectral][majority]") {
  // 10 values, a tight cluster of 7 at 1 … 1.6 and three far above: the majority is the cluster.
  std::vector<double> clustered{1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 100.0, 1000.0, 1e4};
  std::shuffle(clustered.begin(), clustered.end(), std::mt19937(7));  // input order does not matter
  const Majority m = majority(clustered);
  CHECK(m.count == 7);
  CHECK_THAT(m.lo, WithinRel(1.0, 1e-14));
  CHECK_THAT(m.hi, WithinRel(1.6, 1e-14));
  CHECK_THAT(m.ratio, WithinRel(1.6, 1e-14));
  // Evenly spaced decades: every 7-window spans 6 decades; the first from below is kept.
  std::vector<double> decades;
  for (int k = 0; k < 10; ++k) decades.push_back(std::pow(10.0, k));
  const Majority e = majority(decades);
  CHECK(e.count == 7);
  CHECK_THAT(e.ratio, WithinRel(1e6, 1e-12));
  CHECK_THAT(e.lo, WithinRel(1.0, 1e-14));
  // ⌈0.7·m⌉ for small m: 2 of 2, 3 of 3 (⌈2.1⌉), 3 of 4 (⌈2.8⌉), 4 of 5 (⌈3.5⌉).
  CHECK(majority({2.0, 8.0}).count == 2);
  CHECK_THAT(majority({2.0, 8.0}).ratio, WithinRel(4.0, 1e-14));
  CHECK(majority({1.0, 2.0, 4.0}).count == 3);
  CHECK(majority({1.0, 2.0, 4.0, 100.0}).count == 3);
  CHECK_THAT(majority({1.0, 2.0, 4.0, 100.0}).ratio, WithinRel(4.0, 1e-14));
  CHECK(majority({1.0, 2.0, 3.0, 4.0, 5.0}).count == 4);
  CHECK_THAT(majority({1.0, 2.0, 3.0, 4.0, 5.0}).ratio, WithinRel(2.5, 1e-14));  // [2, 5] beats [1, 4]
  CHECK(majority({1.0, 10.0}, 0.5).count == 1);
  CHECK_THAT(majority({1.0, 10.0}, 0.5).ratio, WithinRel(1.0, 1e-15));
  // Nothing to span.
  CHECK(std::isnan(majority({3.0}).ratio));
  CHECK(std::isnan(majority({}).ratio));
  CHECK_THROWS(majority({0.0, 1.0}));
  CHECK_THROWS(majority({1.0, 2.0}, 0.0));
  CHECK(extreme_ratio({2.0, 8.0, 4.0}) == 4.0);
  CHECK(std::isnan(extreme_ratio({})));
}

TEST_CASE("§8.4's reading of K Kᵀ with chosen singular values", "[spectral][majority]") {
  // K = Q diag(s), Q ∈ R^{8×4} orthonormal: K Kᵀ has eigenvalues s² = 1, 2, 4, 8 and four zeros.
  const Eigen::Index n = 8, d = 4;
  Eigen::Vector4d s2(1.0, 2.0, 4.0, 8.0);
  const Eigen::MatrixXd K = orthonormal_columns(n, d, 3) * s2.cwiseSqrt().asDiagonal();
  const Section84Reading r = read_spectrum(kkt_eigenvalues_direct(K));
  CHECK(r.near_zero_portion == 0.5);
  CHECK(r.near_zero_portion == zero_fraction_limit(n, d));
  REQUIRE(r.rest.size() == 4);
  // 3 of 4: [1, 4] and [2, 8] both span a ratio of 4
  CHECK_THAT(r.majority_ratio, WithinRel(4.0, 1e-10));
  CHECK_THAT(r.extreme_ratio, WithinRel(8.0, 1e-10));
  // The wide case (d > n): no zero eigenvalue.
  const Eigen::MatrixXd W = K.transpose();
  CHECK(read_spectrum(kkt_eigenvalues_direct(W)).near_zero_portion == 0.0);
  CHECK(zero_fraction_limit(d, n) == 0.0);
  CHECK(zero_fraction_limit(3072, 768) == 0.75);  // paper 001 §4.5
}

TEST_CASE("Theorem 6 summary: hand-made terms and K with orthogonal columns", "[spectral][thm6]") {
  ProjectionTerms t;
  t.quadratic = Eigen::Vector3d(2.0, 6.0, 0.0);
  t.projected = Eigen::Vector3d(1.0, 2.0, 0.0);  // the third η has Pη = 0: left out
  t.norm2 = Eigen::Vector3d(2.0, 4.0, 1.0);
  const Theorem6Summary s = theorem6_summary(t, 1.0, 4.0);
  CHECK(s.used == 2);
  CHECK(s.bound_ratio(0) == 2.0);
  CHECK(s.bound_ratio(1) == 3.0);
  CHECK(std::isnan(s.bound_ratio(2)));
  CHECK(s.min_bound_ratio == 2.0);
  CHECK(s.mean_r == 0.5);
  CHECK(s.mean_rayleigh == 0.625);  // (2/1/4 + 6/2/4)/2

  // K = Q diag(σ): η = q_j gives ηᵀKKᵀη = σ_j², ‖Pη‖² = 1, so the bound ratio is σ_j²/σ_min².
  const Eigen::Index n = 30, d = 5;
  const Eigen::MatrixXd Q = orthonormal_columns(n, d, 5);
  Eigen::VectorXd sigma2(d);
  sigma2 << 0.5, 1.0, 2.0, 3.0, 7.0;
  const Eigen::MatrixXd K = Q * sigma2.cwiseSqrt().asDiagonal();
  const Spectrum sp = kkt_spectrum(K);
  const Theorem6Summary q = theorem6_summary(projection_terms(K, Q), sp.lambda_min_nonzero(), sp.lambda_max());
  for (Eigen::Index j = 0; j < d; ++j) {
    CHECK_THAT(q.bound_ratio(j), WithinRel(sigma2(j) / 0.5, 1e-10));
    CHECK_THAT(q.r(j), WithinRel(1.0, 1e-12));
  }
  CHECK_THAT(q.min_bound_ratio, WithinRel(1.0, 1e-10));  // the bound is attained at the bottom singular vector
  CHECK_THAT(q.mean_rayleigh, WithinRel(sigma2.mean() / 7.0, 1e-10));
  // The allowance covers the rounding of an ill-conditioned K: the attained bound stays ≥ 1 − tol.
  sigma2 << 1e-6, 1.0, 2.0, 3.0, 7.0;
  const Eigen::MatrixXd Kb = Q * sigma2.cwiseSqrt().asDiagonal();
  const Spectrum sb = kkt_spectrum(Kb);
  const double tol = theorem6_rounding_tolerance(sb.lambda_min_nonzero(), sb.lambda_max(), n, d);
  CHECK(tol < 1e-5);  // κ = 7·10⁶ makes the allowance about 3·10⁻⁶
  CHECK(theorem6_summary(projection_terms(Kb, Q), sb.lambda_min_nonzero(), sb.lambda_max()).min_bound_ratio >= 1.0 - tol);
}

TEST_CASE("Theorem 6's sequential η: the batches are sample_eta's, and the stopped interval covers E r = d/n", "[spectral][thm6]") {
  const Eigen::Index n = 120, d = 30;
  const Eigen::MatrixXd K = init_weights(n, d, Init::xavier, Distribution::normal, 4, 7);
  const ColumnSpace P = column_space(K);
  REQUIRE(P.full_rank);
  const auto no_readout = []() -> const Eigen::MatrixXd& { throw std::logic_error("the Gaussian source needs no readout"); };
  // rel_tol 0 never stops early: the cap, 4 batches of 25, each batch b drawn from stream_id(stream, 16 + b).
  const stats::StoppingRule fixed{.min_samples = 25, .max_samples = 100, .alpha = 0.05, .abs_tol = 0.0, .rel_tol = 0.0};
  const SequentialTerms all = projection_terms_until(K, P, EtaSource::gaussian, fixed, 25, 11, 3, no_readout);
  CHECK(all.drawn == 100);
  CHECK_FALSE(all.converged);
  for (std::uint64_t b = 0; b < 4; ++b) {
    const ProjectionTerms t = projection_terms(K, P, sample_eta(K, EtaSource::gaussian, 25, 11, stream_id(3, 16 + b)));
    CHECK(all.terms.quadratic.segment(Eigen::Index(25 * b), 25) == t.quadratic);
    CHECK(all.terms.projected.segment(Eigen::Index(25 * b), 25) == t.projected);
    CHECK(all.terms.norm2.segment(Eigen::Index(25 * b), 25) == t.norm2);
  }
  // For η ~ N(0, I_n), r = ‖Pη‖²/‖η‖² ~ Beta(d/2, (n − d)/2): E r = d/n exactly. The rule stops once the 95%
  // interval is within 3% of mean r; over 60 seeds it must cover d/n about 57 times (fewer than 50: P < 0.1%).
  const stats::StoppingRule rule{.min_samples = 25, .max_samples = 2000, .alpha = 0.05, .abs_tol = 0.0, .rel_tol = 0.03};
  int covered = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const SequentialTerms q = projection_terms_until(K, P, EtaSource::gaussian, rule, 25, seed, 3, no_readout);
    REQUIRE(q.converged);
    CHECK(q.drawn < 2000);
    CHECK(q.r_interval.half_width() <= 0.03 * q.mean_r);
    covered += q.r_interval.contains(double(d) / double(n));
  }
  CHECK(covered >= 50);
}

TEST_CASE("finite-size cell equals a direct recomputation from the same draws", "[spectral][sweep]") {
  for (const double c : {2.0, 0.25}) {
    CAPTURE(c);
    const int n = 16, trials = 5;
    const std::uint64_t seed = 9, stream = stream_id(1, 2);
    const FiniteSizeCell cell = finite_size_cell(n, c, Init::xavier, Distribution::normal, trials, seed, stream, Device::cpu);
    const int d = static_cast<int>(std::lround(n / c));
    CHECK(cell.d == d);
    CHECK(cell.n == n);
    // Second method: all n eigenvalues of the n×n K Kᵀ, the zeros counted from the shape.
    const MarchenkoPastur law(static_cast<double>(n) / d, init_variance(Init::xavier, n, d) * d);
    std::vector<double> ratios, ks;
    for (int t = 0; t < trials; ++t) {
      const Eigen::MatrixXd K = init_weights(n, d, Init::xavier, Distribution::normal, seed, stream_id(stream, t));
      Eigen::VectorXd lam = kkt_eigenvalues_direct(K);
      const Eigen::Index zeros = std::max(n - d, 0);
      ratios.push_back(lam(n - 1) / lam(zeros));
      lam.head(zeros).setZero();
      ks.push_back(ks_distance(lam, law));
    }
    auto mean = [](const std::vector<double>& v) { double s = 0; for (double x : v) s += x; return s / v.size(); };
    auto se = [&](const std::vector<double>& v) {
      const double m = mean(v);
      double ss = 0;
      for (double x : v) ss += (x - m) * (x - m);
      return std::sqrt(ss / (v.size() - 1) / v.size());
    };
    CHECK_THAT(cell.ratio_mean, WithinRel(mean(ratios), 1e-9));
    CHECK_THAT(cell.ratio_se, WithinRel(se(ratios), 1e-6));
    CHECK_THAT(cell.ks_mean, WithinAbs(mean(ks), 1e-12));
    CHECK_THAT(cell.ks_se, WithinAbs(se(ks), 1e-10));
    CHECK(cell.limit == ratio_limit(static_cast<double>(n) / d));
    CHECK(cell.tw_mean == wishart_ratio_interval(n, d, 0.5).at_mean);
    CHECK(cell.excess() == cell.ratio_mean - cell.limit);
  }
  CHECK(finite_size_cell(5, 4.0, Init::xavier, Distribution::normal, 2, 1, 0, Device::cpu).d == 2);  // d is at least 2
}

TEST_CASE("power-law fit and finite-size rates: exact power laws and a numpy reference", "[spectral][sweep]") {
  // Exact y = 3 n^{-2/3}: the slope is −2/3 whatever the standard errors.
  const std::vector<double> n{64, 128, 256, 512};
  std::vector<double> y, se{0.1, 0.2, 0.05, 0.3};
  for (double x : n) y.push_back(3.0 * std::pow(x, -2.0 / 3.0));
  const stats::LinearFit exact = power_law_fit(n, y, se);
  CHECK_THAT(exact.slope, WithinAbs(-2.0 / 3.0, 1e-12));
  CHECK_THAT(exact.intercept, WithinAbs(std::log(3.0), 1e-11));
  // numpy 1.26: np.polyfit(np.log(x), np.log(y), 1, w=y/se, cov='unscaled') for these values gives
  // slope −0.6816178376145653 (SE 0.05729523154651343), intercept 2.1418315525742706 (SE 0.3004369616495133).
  const stats::LinearFit ref = power_law_fit(n, {0.5, 0.31, 0.2, 0.12}, {0.05, 0.02, 0.02, 0.01});
  CHECK_THAT(ref.slope, WithinAbs(-0.6816178376145653, 1e-12));
  CHECK_THAT(ref.slope_se, WithinAbs(0.05729523154651343, 1e-12));
  CHECK_THAT(ref.intercept, WithinAbs(2.1418315525742706, 1e-11));
  CHECK_THAT(ref.intercept_se, WithinAbs(0.3004369616495133, 1e-11));
  // Rates over cells: |excess| = 2 n^{-2/3} below the limit, KS = n^{-1}.
  std::vector<FiniteSizeCell> cells;
  for (double x : n) {
    FiniteSizeCell c;
    c.n = static_cast<int>(x);
    c.limit = 9.0;
    c.ratio_mean = 9.0 - 2.0 * std::pow(x, -2.0 / 3.0);
    c.ratio_se = 0.01;
    c.ks_mean = 1.0 / x;
    c.ks_se = 0.001;
    cells.push_back(c);
  }
  const FiniteSizeRates rates = finite_size_rates(cells);
  CHECK_THAT(rates.excess.slope, WithinAbs(-2.0 / 3.0, 1e-9));
  CHECK_THAT(rates.ks.slope, WithinAbs(-1.0, 1e-12));
}
