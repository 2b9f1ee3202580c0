// parrots/capacity_position (paper 004 §4.2): the MoEs' position λ between a dense fit's readings by active and by
// total parameters. Ground truth: MoEs placed on the fit's line at their total parameters read λ = 1 exactly and at
// their active parameters λ = 0; the delta-method standard error against the spread of λ̂ over 4000 simulated studies.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/parrots/capacity_position.hpp>

using namespace sparseact;
using namespace sparseact::parrots;

namespace {

const std::vector<double> kDenseX{10.0, 10.5, 11.0, 11.5, 12.0, 12.5};  // ln parameters of six dense models
constexpr double kAlpha = 0.8, kBeta = -4.0;

}  // namespace

TEST_CASE("capacity_position: λ = 1 on the fit at total parameters, 0 at active; one finding", "[parrots][capacity]") {
  // A dense fit with residual spread (a fixed ±0.05 pattern), then MoEs on its fitted line.
  std::vector<double> y;
  const double wiggle[] = {0.05, -0.05, 0.02, -0.02, 0.05, -0.05};
  for (std::size_t i = 0; i < kDenseX.size(); ++i) y.push_back(kBeta + kAlpha * kDenseX[i] + wiggle[i]);
  const stats::LinearFit fit = stats::linear_fit(kDenseX, y);
  std::vector<MoePoint> at_total, at_active;
  for (double a : {10.2, 10.8, 11.4}) {
    const double t = a + std::log(2.5);
    at_total.push_back({fit.intercept + fit.slope * t, a, t});
    at_active.push_back({fit.intercept + fit.slope * a, a, t});
  }
  // On the line at total parameters, each MoE's gap at active parameters is the one total parameters imply.
  CHECK(gap_at_active(fit, at_total[1]) == Approx(gap_if_total_predicts(fit, at_total[1])).epsilon(1e-12));
  CHECK(gap_at_active(fit, at_active[1]) == Approx(0.0).margin(1e-12));
  const CapacityPosition p1 = capacity_position(fit, at_total);
  REQUIRE(p1.testable);
  CHECK(p1.lambda == Approx(1.0).epsilon(1e-12));
  CHECK(p1.mean_gap_total == Approx(0.0).margin(1e-12));
  CHECK(p1.mean_log_ratio == Approx(std::log(2.5)).epsilon(1e-12));
  // The gaps at active and at total parameters differ by α̂·ln(total/active) exactly.
  CHECK(p1.mean_gap - p1.mean_gap_total == Approx(p1.mean_paper_gap).epsilon(1e-12));
  CHECK(p1.df == 4);
  const CapacityPosition p0 = capacity_position(fit, at_active);
  CHECK(p0.lambda == Approx(0.0).margin(1e-12));
  // At λ = 0 the lever is ā − x̄, so the two standard errors agree.
  CHECK(p0.std_error == Approx(p0.std_error_alpha_fixed).epsilon(1e-12));

  // No residual spread, or no MoE, or too small a fit: no test.
  CHECK_FALSE(capacity_position(stats::linear_fit({1, 2, 3, 4, 5, 6}, {3, 5, 7, 9, 11, 13}), at_total).testable);
  CHECK_THROWS_AS(capacity_position(fit, {}), std::invalid_argument);
  CHECK_THROWS_AS(capacity_position(stats::linear_fit({1.0, 2.0}, {1.0, 3.0}), at_total), std::invalid_argument);
}

TEST_CASE("capacity_position: the delta-method standard error matches λ̂'s spread over simulated studies", "[parrots][capacity]") {
  // Six dense models and three MoEs (total = 2.5 × active) at true λ = 0.5, every log capacity with noise σ = 0.05.
  // The MoEs' active parameters lie below the dense range, where α̂'s uncertainty weighs: held fixed, the standard error
  // would be off by about 17 % here, so the comparison can tell the two apart.
  constexpr double kSigma = 0.05, kLambda = 0.5;
  const std::vector<double> active{9.0, 9.3, 9.6};
  const double D = std::log(2.5);
  Rng rng(11, 3);
  stats::RunningMean lambdas, variances, variances_alpha_fixed;  // λ̂, and se² (σ̂² is unbiased for σ², σ̂ is not: E σ̂ ≈ 0.94 σ at 4 df)
  constexpr int kStudies = 4000;
  for (int s = 0; s < kStudies; ++s) {
    std::vector<double> y;
    for (double x : kDenseX) y.push_back(kBeta + kAlpha * x + kSigma * rng.normal());
    std::vector<MoePoint> moes;
    for (double a : active) moes.push_back({kBeta + kAlpha * (a + kLambda * D) + kSigma * rng.normal(), a, a + D});
    const CapacityPosition p = capacity_position(stats::linear_fit(kDenseX, y), moes);
    REQUIRE(p.testable);
    lambdas.push(p.lambda);
    variances.push(p.std_error * p.std_error);
    variances_alpha_fixed.push(p.std_error_alpha_fixed * p.std_error_alpha_fixed);
  }
  const double spread = std::sqrt(lambdas.variance());
  const double rms_se = std::sqrt(variances.mean());
  INFO("sd of λ̂ " << spread << ", rms delta-method SE " << rms_se << ", mean λ̂ " << lambdas.mean());
  CHECK(std::abs(rms_se / spread - 1) < 0.05);  // the sd's own sampling error is about 1 %
  CHECK(std::abs(std::sqrt(variances_alpha_fixed.mean()) / spread - 1) > 0.1);
  CHECK(std::abs(lambdas.mean() - kLambda) < 4 * spread / std::sqrt(double(kStudies)) + 0.01);
}
