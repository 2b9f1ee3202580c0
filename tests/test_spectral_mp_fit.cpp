// Marchenko–Pastur with σ fitted to the bulk (spectral/mp_fit.hpp, issue 16) against ground truth:
// pure Gaussian layers W = σG of several shapes (σ recovered within a few percent, no spikes), the same
// with planted rank-one spikes of known strength (σ still recovered, the spikes counted), the exact MP
// quantiles (the censored MLE returns σ² itself), and the Kolmogorov p-value against scipy.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <Eigen/Dense>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <fmt/format.h>

#include "python_ref.hpp"
#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/spectral/marchenko_pastur.hpp>
#include <sparseact/spectral/mp_fit.hpp>
#include <sparseact/spectral/spectrum.hpp>
#include <sparseact/spectral/tracy_widom.hpp>

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

Eigen::VectorXd unit_vector(Eigen::Index n, std::uint64_t seed, std::uint64_t stream) {
  Eigen::VectorXd u(n);
  fill_random(u.data(), static_cast<std::size_t>(n), Distribution::normal, 1.0, seed, stream);
  return u.normalized();
}

/// W = σG + Σ_k θ_k u_k v_kᵀ with θ_k = s_k σ √max(N, M): in the normalised units of MP (ν = λ/max(N, M))
/// the spike's singular value is s_k σ, detectable above σ c^{1/4} (Benaych-Georges & Nadakuditi) and
/// landing at the eigenvalue σ² (1 + s²)(c + s²)/s².
Eigen::MatrixXd spiked(Eigen::Index N, Eigen::Index M, double sigma, const std::vector<double>& s, std::uint64_t seed, std::uint64_t stream) {
  Eigen::MatrixXd W = gaussian(N, M, sigma, seed, stream);
  const double scale = sigma * std::sqrt(static_cast<double>(std::max(N, M)));
  for (std::size_t k = 0; k < s.size(); ++k)
    W += s[k] * scale * unit_vector(N, seed, stream_id(stream, 2 * k + 1)) * unit_vector(M, seed, stream_id(stream, 2 * k + 2)).transpose();
  return W;
}

}  // namespace

TEST_CASE("MP CDF in closed form equals the quadratures of the density", "[spectral][checkpoint]") {
  boost::math::quadrature::tanh_sinh<double> ts;  // handles the 1/√x endpoint of c = 1
  for (double c : {0.01, 0.1, 0.25, 0.5, 0.9, 0.999, 1.0}) {
    for (double sigma2 : {1.0, 0.3}) {
      const MarchenkoPastur law(c, sigma2);
      for (int i = 1; i < 40; ++i) {
        const double x = law.a() + (law.b() - law.a()) * i / 40.0;
        CAPTURE(c, sigma2, x);
        const double direct = ts.integrate([&](double t) { return law.density(t); }, law.a(), x);
        CHECK_THAT(marchenko_pastur_cdf(x, c, sigma2), WithinAbs(direct, 1e-11));
        if (c <= 0.9) CHECK_THAT(marchenko_pastur_cdf(x, c, sigma2), WithinAbs(law.cdf(x), 1e-12));
      }
      CHECK(marchenko_pastur_cdf(law.a() * 0.99, c, sigma2) == 0.0);
      CHECK(marchenko_pastur_cdf(law.b(), c, sigma2) == 1.0);
    }
  }
  CHECK_THROWS_AS(marchenko_pastur_cdf(1.0, 1.5), std::invalid_argument);
}

TEST_CASE("MP fit recovers σ of pure Gaussian layers of several shapes, with no spikes", "[spectral][checkpoint]") {
  const ScopedBlasThreads serial(1);  // small spectra: a BLAS pool only waits on a busy machine
  const double sigma = 0.05;
  for (auto [N, M] : std::vector<std::pair<Eigen::Index, Eigen::Index>>{{400, 100}, {100, 400}, {300, 150}, {200, 200}, {256, 512}}) {
    for (std::uint64_t t = 0; t < 3; ++t) {
      CAPTURE(N, M, t);
      const Eigen::VectorXd lam = kkt_spectrum(gaussian(N, M, sigma, 16, t)).nonzero();
      const MpComparison fit = marchenko_pastur_fit(lam, N, M);
      const MpComparison own = marchenko_pastur_own(lam, N, M);
      REQUIRE(fit.valid);
      REQUIRE(own.valid);
      CHECK(fit.converged);
      CHECK_THAT(std::sqrt(fit.sigma2), WithinRel(sigma, 0.03));
      CHECK_THAT(std::sqrt(own.sigma2), WithinRel(sigma, 0.03));
      CHECK(fit.c == double(std::min(N, M)) / double(std::max(N, M)));
      CHECK(fit.spikes == 0);
      CHECK(fit.bulk == static_cast<std::size_t>(lam.size()));
      // The own σ² is the trace over N M, exactly.
      CHECK_THAT(own.sigma2, WithinRel(lam.sum() / double(N * M), 1e-14));
      const double n = double(std::max(N, M)), rc = std::sqrt(fit.c);
      CHECK_THAT(fit.lambda_plus, WithinRel(n * fit.sigma2 * (1 + rc) * (1 + rc), 1e-14));
      CHECK_THAT(fit.lambda_minus, WithinAbs(n * fit.sigma2 * (1 - rc) * (1 - rc), 1e-14 * fit.lambda_plus));
      // A Gaussian bulk is MP at any usual level (the test is conservative, see mp_fit.hpp).
      CHECK(fit.ks < 0.1);
      CHECK(fit.ks_p_value > 0.05);
      CHECK(own.ks_p_value > 0.05);
      // The spike threshold: σ² (μ₊ + σ₊ F₁⁻¹(0.99)) from wishart_edges.
      const WishartEdges e = wishart_edges(n, double(std::min(N, M)));
      CHECK_THAT(fit.tw_threshold, WithinRel(fit.sigma2 * (e.mu_max + e.sigma_max * tracy_widom1_quantile(0.99)), 1e-12));
    }
  }
}

TEST_CASE("MP fit recovers σ under planted spikes and counts them; the own σ² is inflated", "[spectral][checkpoint]") {
  const ScopedBlasThreads serial(1);
  const double sigma = 0.02;
  const std::vector<double> strengths{2.0, 3.0, 5.0};  // all well above c^{1/4}
  for (auto [N, M] : std::vector<std::pair<Eigen::Index, Eigen::Index>>{{400, 100}, {120, 360}, {250, 250}}) {
    for (std::uint64_t t = 0; t < 3; ++t) {
      CAPTURE(N, M, t);
      const Eigen::VectorXd lam = kkt_spectrum(spiked(N, M, sigma, strengths, 17, t)).nonzero();
      const MpComparison fit = marchenko_pastur_fit(lam, N, M);
      const MpComparison own = marchenko_pastur_own(lam, N, M);
      REQUIRE(fit.valid);
      CHECK_THAT(std::sqrt(fit.sigma2), WithinRel(sigma, 0.03));
      CHECK(fit.spikes == strengths.size());
      CHECK(fit.bulk == static_cast<std::size_t>(lam.size()) - strengths.size());
      CHECK(fit.above_edge >= strengths.size());
      CHECK(own.sigma2 > fit.sigma2 * 1.01);  // the spikes' Σ s² σ² n is in the trace
      CHECK(fit.ks_p_value > 0.05);
      // Each spike where the BBP formula puts it (in λ units n σ² (1 + s²)(c + s²)/s²), within 10%.
      const double n = double(std::max(N, M)), c = fit.c;
      for (std::size_t k = 0; k < strengths.size(); ++k) {
        const double s2 = strengths[k] * strengths[k];
        CHECK_THAT(lam(lam.size() - static_cast<Eigen::Index>(strengths.size()) + static_cast<Eigen::Index>(k)),
                   WithinRel(n * sigma * sigma * (1 + s2) * (c + s2) / s2, 0.1));
      }
    }
  }
}

TEST_CASE("MP fit: the exact MP quantiles give back σ², a non-MP spectrum is rejected", "[spectral][checkpoint]") {
  // λ_i = n × the (i − ½)/m quantile of MP(c, σ²): the censored MLE's answer is σ² itself.
  const Eigen::Index N = 800, M = 200;
  const double sigma2 = 3.0, c = 0.25;
  const MarchenkoPastur law(c, sigma2);
  Eigen::VectorXd lam(M);
  for (Eigen::Index i = 0; i < M; ++i) lam(i) = double(N) * law.quantile((double(i) + 0.5) / double(M));
  const MpComparison fit = marchenko_pastur_fit(lam, N, M);
  REQUIRE(fit.valid);
  CHECK_THAT(fit.sigma2, WithinRel(sigma2, 2e-3));
  CHECK(fit.ks < 1.0 / double(M));
  CHECK(fit.spikes == 0);
  // Same shape, a flat bulk (ν uniform on [1, 2]): inside MP's support for σ² ∈ (0.89, 4), but not its shape.
  Eigen::VectorXd flat(M);
  for (Eigen::Index i = 0; i < M; ++i) flat(i) = double(N) * (1.0 + double(i) / double(M - 1));
  const MpComparison bad = marchenko_pastur_fit(flat, N, M);
  REQUIRE(bad.valid);
  CHECK(bad.ks_p_value < 1e-3);
  CHECK(marchenko_pastur_own(flat, N, M).ks_p_value < 1e-3);
  // Eigenvalues log-uniform over two decades: the own law is rejected, and the fit calls a quarter or more
  // of them spikes (a bulk that needs so many outliers is no MP layer either).
  Eigen::VectorXd spread(M);
  for (Eigen::Index i = 0; i < M; ++i) spread(i) = std::pow(10.0, 2.0 * double(i) / double(M - 1));
  CHECK(marchenko_pastur_own(spread, N, M).ks_p_value < 1e-3);
  CHECK(marchenko_pastur_fit(spread, N, M).spikes >= std::size_t(M / 4));
  // Too few eigenvalues: not valid, never an exception.
  CHECK_FALSE(marchenko_pastur_fit(Eigen::Vector3d(1, 2, 3), 3, 10).valid);
  CHECK_FALSE(marchenko_pastur_own(Eigen::VectorXd(), 3, 10).valid);
  CHECK_THROWS_AS(marchenko_pastur_fit(lam, 0, 10), std::invalid_argument);
  CHECK_THROWS_AS(marchenko_pastur_fit(lam, N, M, {0.0, 0.05, 50}), std::invalid_argument);
}

TEST_CASE("Kolmogorov p-value: the limiting law as scipy's kstwobign, Stephens' form near the exact kstwo", "[spectral][checkpoint]") {
  const std::vector<double> xs{0.2, 0.5, 0.8, 1.0, 1.17, 1.19, 1.5, 2.0, 3.0};
  std::string script = "from scipy.stats import kstwobign, kstwo\nimport math\n";
  script += "for x in [0.2, 0.5, 0.8, 1.0, 1.17, 1.19, 1.5, 2.0, 3.0]: print(repr(float(kstwobign.sf(x))))\n";
  script += "for n in [20, 100, 400, 2000]:\n  for D in [0.02, 0.05, 0.1, 0.2, 0.3]: print(repr(float(kstwo.sf(D, n))))\n";
  const std::vector<double> ref = run_python_numbers(script, "kolmogorov");
  REQUIRE(ref.size() == xs.size() + 20);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    CAPTURE(xs[i]);
    CHECK_THAT(stats::kolmogorov_sf(xs[i]), WithinRel(ref[i], 1e-12));
  }
  std::size_t k = xs.size();
  for (std::size_t n : {20, 100, 400, 2000})
    for (double D : {0.02, 0.05, 0.1, 0.2, 0.3}) {
      const double exact = ref[k++];
      CAPTURE(n, D, exact);
      if (exact >= 1e-6) CHECK_THAT(stats::kolmogorov_smirnov_p_value(D, n), WithinRel(exact, 0.03));
    }
  CHECK(stats::kolmogorov_sf(0.0) == 1.0);
  CHECK(stats::kolmogorov_smirnov_p_value(0.0, 10) == 1.0);
  CHECK_THROWS_AS(stats::kolmogorov_smirnov_p_value(0.5, 0), std::invalid_argument);
  CHECK_THROWS_AS(stats::kolmogorov_smirnov_p_value(1.5, 10), std::invalid_argument);
}
