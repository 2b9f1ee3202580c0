// core/stats: power, TOST and the run size for 80 % against scipy (noncentral t, Welch's t-test
// on shifted samples) and against a textbook sample size.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <sparseact/core/stats.hpp>

#include "python_ref.hpp"

using namespace sparseact;

namespace {

const std::vector<double> x{5.1, 4.8, 6.0, 5.5, 5.9, 4.7, 5.2, 6.3};
const std::vector<double> y{4.9, 4.4, 5.1, 5.0, 4.6, 5.3, 4.2};

std::string list(const std::vector<double>& v) {
  std::string out;
  for (double a : v) out += (out.empty() ? "" : ", ") + fmt::format("{:.17g}", a);
  return "[" + out + "]";
}

}  // namespace

TEST_CASE("one-sided t-test power equals scipy's noncentral t (finite df) and the normal (df = ∞)", "[stats][power]") {
  struct Case { double effect, se, df, alpha; };
  const std::vector<Case> cases{{0.5, 0.2, 4, 0.05}, {1.0, 0.3, 12.5, 0.05}, {0.1, 0.2, 30, 0.05}, {0.3, 0.1, 2, 0.025},
                                {-0.2, 0.1, 9, 0.05}};
  std::string script = "import warnings\nwarnings.filterwarnings('ignore')\nfrom scipy import stats\n";
  for (const Case& c : cases)
    script += fmt::format("print(stats.nct.sf(stats.t.ppf(1 - {3}, {2}), {2}, {0} / {1}))\n", c.effect, c.se, c.df, c.alpha);
  script += "print(stats.norm.sf(stats.norm.ppf(0.95) - 0.5 / 0.2))\n";
  const std::vector<double> ref = run_python_numbers(script, "power");
  REQUIRE(ref.size() == cases.size() + 1);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    INFO("effect " << c.effect << " se " << c.se << " df " << c.df);
    CHECK(stats::one_sided_power(c.effect, c.se, c.df, c.alpha) == Approx(ref[i]).epsilon(1e-7).margin(1e-12));  // two Boost versions
  }
  CHECK(stats::one_sided_power(0.5, 0.2, std::numeric_limits<double>::infinity()) == Approx(ref.back()).epsilon(1e-10));
  // At effect 0 the test rejects with probability α; a perfectly precise estimate decides.
  CHECK(stats::one_sided_power(0.0, 0.3, 7) == Approx(0.05).epsilon(1e-9));
  CHECK(stats::one_sided_power(0.1, 0.0, 7) == 1.0);
  CHECK(stats::one_sided_power(-0.1, 0.0, 7) == 0.0);
  CHECK_THROWS_AS(stats::one_sided_power(0.1, -1.0, 7), std::invalid_argument);
}

TEST_CASE("TOST on Welch's estimate: p equals the larger of scipy's two shifted one-sided Welch tests", "[stats][power]") {
  const double margin = 0.9;
  const stats::TTest w = stats::welch_t_test(x, y);
  const stats::Tost t = stats::tost(w, margin);
  const std::string script = fmt::format(
      "import warnings\nwarnings.filterwarnings('ignore')\nfrom scipy import stats\nimport numpy as np\nx = np.array({0}); y = np.array({1}); D = {2}\n"
      "lo = stats.ttest_ind(x + D, y, equal_var=False, alternative='greater').pvalue\n"
      "hi = stats.ttest_ind(x - D, y, equal_var=False, alternative='less').pvalue\n"
      "print(max(lo, hi))\n"
      "vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)\n"
      "df = (vx + vy)**2 / (vx**2 / (len(x) - 1) + vy**2 / (len(y) - 1)); se = np.sqrt(vx + vy); d = x.mean() - y.mean()\n"
      "q = stats.t.ppf(0.95, df)\nprint(d - q * se, d + q * se)\n"
      "print(stats.nct.sf(q, df, D / se) + stats.nct.cdf(-q, df, -D / se) - 1)\n",
      list(x), list(y), margin);
  const std::vector<double> ref = run_python_numbers(script, "tost");
  REQUIRE(ref.size() == 4);
  CHECK(t.p_value == Approx(ref[0]).epsilon(1e-9));
  CHECK(t.interval.lo == Approx(ref[1]).epsilon(1e-10));
  CHECK(t.interval.hi == Approx(ref[2]).epsilon(1e-10));
  CHECK(stats::tost_power(margin, w.std_error, w.df) == Approx(std::max(0.0, ref[3])).epsilon(1e-8).margin(1e-12));
  // Equivalence at level α ⇔ the (1 − 2α) interval inside (−Δ, Δ).
  CHECK((t.p_value < 0.05) == (t.interval.lo > -margin && t.interval.hi < margin));
  CHECK_THROWS_AS(stats::tost(w, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(stats::tost(w, 1.0, 0.5), std::invalid_argument);
}

TEST_CASE("TOST power: near 1 for a precise estimate, 0 when the margin is below the noise, symmetric in θ", "[stats][power]") {
  CHECK(stats::tost_power(1.0, 0.05, 40) > 0.999);
  CHECK(stats::tost_power(0.1, 1.0, 5) == 0.0);
  CHECK(stats::tost_power(1.0, 0.3, 10, 0.2) == Approx(stats::tost_power(1.0, 0.3, 10, -0.2)).epsilon(1e-12));
  CHECK(stats::tost_power(1.0, 0.3, 10, 0.0) > stats::tost_power(1.0, 0.3, 10, 0.5));
}

TEST_CASE("the run size for 80 % power: the textbook paired t (d = 0.5, one-sided 5 %: 27 pairs) and scipy's search",
          "[stats][power]") {
  // A paired t-test with n pairs of standard deviation 1: se = 1/√n, df = n − 1.
  const auto power = [](double d) {
    return [d](std::size_t n) { return stats::one_sided_power(d, 1.0 / std::sqrt(double(n)), double(n) - 1); };
  };
  CHECK(stats::smallest_n_for_power(power(0.5), 2) == 27);  // Cohen (1988); G*Power's one-tailed one-sample t
  const std::vector<double> ref = run_python_numbers(
      "import warnings\nwarnings.filterwarnings('ignore')\nfrom scipy import stats\nimport math\n"
      "for d in (0.2, 0.8, 1.3):\n"
      "  n = 2\n"
      "  while stats.nct.sf(stats.t.ppf(0.95, n - 1), n - 1, d * math.sqrt(n)) < 0.8: n += 1\n"
      "  print(n)\n",
      "n80");
  REQUIRE(ref.size() == 3);
  CHECK(stats::smallest_n_for_power(power(0.2), 2) == std::size_t(ref[0]));
  CHECK(stats::smallest_n_for_power(power(0.8), 2) == std::size_t(ref[1]));
  CHECK(stats::smallest_n_for_power(power(1.3), 2) == std::size_t(ref[2]));
  // Already powered: n0 itself; never powered within n_max: 0.
  CHECK(stats::smallest_n_for_power(power(5.0), 10) == 10);
  CHECK(stats::smallest_n_for_power([](std::size_t) { return 0.5; }, 1, 0.8, 1000) == 0);
  CHECK(stats::smallest_n_for_power([](std::size_t n) { return 1.0 - 1.0 / double(n); }, 1) == 5);
}
