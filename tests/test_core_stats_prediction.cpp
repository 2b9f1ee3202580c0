// LinearFit::prediction_interval against scipy/numpy's closed form (ŷ ± t σ̂ √(1 + 1/n + (x0 − x̄)²/s_xx)), computed
// once with /usr/bin/python3 for these six points, and its refusals.
#include <catch2/catch.hpp>

#include <sparseact/core/stats.hpp>

using namespace sparseact;

TEST_CASE("prediction interval of a new observation equals the textbook form (numpy/scipy values)", "[stats]") {
  const std::vector<double> x{1, 2, 3, 4, 5, 6}, y{1.1, 1.9, 3.2, 3.8, 5.3, 5.9};
  const stats::LinearFit f = stats::linear_fit(x, y);
  const stats::Interval p = f.prediction_interval(8.0);
  CHECK(p.lo == Approx(7.07850299471899).epsilon(1e-12));
  CHECK(p.hi == Approx(8.93673510051911).epsilon(1e-12));
  // wider than the fitted line's own uncertainty at the same x, narrowest at x̄
  CHECK(f.prediction_interval(3.5).hi - f.prediction_interval(3.5).lo < p.hi - p.lo);
  CHECK_THROWS(stats::linear_fit({1, 2}, {1, 2}).prediction_interval(1.0));
  CHECK_THROWS(f.prediction_interval(1.0, 1.5));
}
