// core/stats: Pearson's χ² goodness-of-fit test against scipy.stats.chisquare (scipy 1.x, Debian's python3-scipy).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include <sparseact/core/stats.hpp>

using namespace sparseact::stats;

TEST_CASE("chi_squared_uniform matches scipy.stats.chisquare", "[stats][chi_squared]") {
  // chisquare([16, 18, 16, 14, 12, 12]) = (2.0, 0.8491450360846096)
  ChiSquaredTest t = chi_squared_uniform({16, 18, 16, 14, 12, 12});
  CHECK(t.statistic == Approx(2.0).epsilon(1e-14));
  CHECK(t.df == 5);
  CHECK(t.n == 88);
  CHECK(t.p_value == Approx(0.8491450360846096).epsilon(1e-12));
  // chisquare([250, 230, 270, 250]) = (3.2, 0.36180502749753174)
  t = chi_squared_uniform({250, 230, 270, 250});
  CHECK(t.statistic == Approx(3.2).epsilon(1e-14));
  CHECK(t.p_value == Approx(0.36180502749753174).epsilon(1e-12));
  // chisquare([5, 0]) = (5.0, 0.025347318677468325); a perfect fit has X² = 0, p = 1
  CHECK(chi_squared_uniform({5, 0}).p_value == Approx(0.025347318677468325).epsilon(1e-12));
  t = chi_squared_uniform({10, 10, 10, 10});
  CHECK(t.statistic == 0.0);
  CHECK(t.p_value == Approx(1.0));
}

TEST_CASE("chi_squared_gof with unequal probabilities matches scipy", "[stats][chi_squared]") {
  // chisquare([16, 18, 16, 14, 12, 12], 88·[0.16, 0.16, 0.16, 0.16, 0.16, 0.20]) = (3.704545454545455, 0.5926876757827024)
  const ChiSquaredTest t = chi_squared_gof({16, 18, 16, 14, 12, 12}, {0.16, 0.16, 0.16, 0.16, 0.16, 0.20});
  CHECK(t.statistic == Approx(3.704545454545455).epsilon(1e-13));
  CHECK(t.p_value == Approx(0.5926876757827024).epsilon(1e-12));
  // The statistic's 95% quantile decides the same as p < 0.05.
  CHECK((t.statistic > chi_squared_quantile(0.95, t.df)) == (t.p_value < 0.05));
}

TEST_CASE("chi_squared_gof refuses bad input", "[stats][chi_squared]") {
  CHECK_THROWS(chi_squared_uniform({3}));
  CHECK_THROWS(chi_squared_uniform({0, 0}));
  CHECK_THROWS(chi_squared_gof({1, 2}, {0.5}));
  CHECK_THROWS(chi_squared_gof({1, 2}, {0.5, 0.6}));
  CHECK_THROWS(chi_squared_gof({1, 2}, {1.0, 0.0}));
  CHECK_THROWS(chi_squared_gof({-1, 2}, {0.5, 0.5}));
}
