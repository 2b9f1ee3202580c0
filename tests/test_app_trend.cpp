// A claim's trend toward the paper's setup (app/trend): against closed forms of least squares on hand points.
#include <catch2/catch.hpp>

#include <cmath>

#include <sparseact/app/trend.hpp>

using namespace sparseact::app;
using Catch::Matchers::Contains;

namespace {
// θ̂ = 0.1·log₂ w + e with residuals (+, −, −, +)·0.01, orthogonal to the centred log₂ w (−1.5, −0.5, 0.5, 1.5):
// the least-squares slope is 0.1 and the intercept 0 exactly; RSS = 4·10⁻⁴ on 2 degrees of freedom, s_xx = 5.
const std::vector<TrendPoint> kRising{{16, 0.41}, {32, 0.49}, {64, 0.59}, {128, 0.71}};
constexpr double kT975Dof2 = 4.302652729749464;  // Student-t, 2 dof, 0.975 (scipy.stats.t.ppf(0.975, 2))
}  // namespace

TEST_CASE("fit_trend: the slope per doubling, its Student-t interval and the prediction at the paper's setting", "[app][report]") {
  const auto t = fit_trend(kRising, "w", 1.2, true, 1024);
  REQUIRE(t);
  const double se = std::sqrt(4e-4 / 2 / 5);
  CHECK(t->slope == Approx(0.1).margin(1e-12));
  CHECK(t->slope_lo == Approx(0.1 - kT975Dof2 * se).epsilon(1e-9));
  CHECK(t->slope_hi == Approx(0.1 + kT975Dof2 * se).epsilon(1e-9));
  // At log₂ 1024 = 10: ŷ = 1.0, half-width t·σ̂·√(1 + 1/n + (10 − 5.5)²/s_xx).
  const double hw = kT975Dof2 * std::sqrt(2e-4) * std::sqrt(1 + 0.25 + 4.5 * 4.5 / 5);
  CHECK(t->at_paper == Approx(1.0).margin(1e-12));
  CHECK(t->at_paper_lo == Approx(1.0 - hw).epsilon(1e-9));
  CHECK(t->at_paper_hi == Approx(1.0 + hw).epsilon(1e-9));
  CHECK(t->reading == TrendReading::toward);
  CHECK(t->points.front().x == 16);
  CHECK_THAT(trend_text(*t), Contains("trend in w: θ̂ 0.41 (16), 0.49 (32), 0.59 (64), 0.71 (128); per doubling of w 0.1 ["));
  CHECK_THAT(trend_text(*t), Contains(": toward the paper's effect; the paper's θ = 1.2; one run at the paper's w = 1024 would read about 1 ["));
}

TEST_CASE("fit_trend: toward and away are read from where the line stands at the largest setting", "[app][report]") {
  // The line reads 0.7 at w = 128: a paper's 0.5 lies below it, so a rising line moves away.
  CHECK(fit_trend(kRising, "w", 0.5, true)->reading == TrendReading::away);
  // A falling line toward a target below it.
  std::vector<TrendPoint> falling;
  for (const TrendPoint& p : kRising) falling.push_back({p.x, -p.estimate});
  CHECK(fit_trend(falling, "w", -2, true)->reading == TrendReading::toward);
  CHECK(fit_trend(falling, "w", 0, false)->reading == TrendReading::away);
  CHECK(reading_text(*fit_trend(falling, "w", 0, false)) == "away from the claim");
  // Scatter as large as the rise: the interval holds 0, so no trend is resolved whatever the target.
  const auto flat = fit_trend({{16, 0.1}, {32, 0.3}, {64, 0.1}, {128, 0.3}}, "w", 0.8, true);
  REQUIRE(flat);
  CHECK(flat->slope == Approx(0.04).margin(1e-12));
  CHECK(flat->slope_lo < 0);
  CHECK(flat->reading == TrendReading::flat);
  CHECK(reading_text(*flat) == "no trend resolved");
  CHECK_THAT(trend_text(*flat), !Contains("would read"));  // no paper setting given: no extrapolation
}

TEST_CASE("fit_trend: fewer than 3 settings give no trend; repeated settings count as points; bad points throw", "[app][report]") {
  CHECK_FALSE(fit_trend({{32, 0.1}, {32, 0.2}, {64, 0.3}, {64, 0.4}}, "w", 1, true));
  CHECK_FALSE(fit_trend({}, "epochs", 0, false));
  const auto repeated = fit_trend({{16, 0.41}, {32, 0.49}, {32, 0.49}, {64, 0.59}, {128, 0.71}}, "w", 1, true);
  REQUIRE(repeated);
  CHECK(repeated->points.size() == 5);
  CHECK_THROWS_AS(fit_trend({{0, 0.1}, {32, 0.2}, {64, 0.3}}, "w", 1, true), std::invalid_argument);
  CHECK_THROWS_AS(fit_trend({{16, NAN}, {32, 0.2}, {64, 0.3}}, "w", 1, true), std::invalid_argument);
}
