// lsh/theorem41 (paper 000 Theorem 4.1, eq. (1)): the learner on a linear target whose Lipschitz
// constant is known, against the theorem's sample size and width formulas and its error bound; the
// table's growth rate on exact power laws; eq. (1)'s cost formulas.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

#include <sparseact/lsh/targets.hpp>
#include <sparseact/lsh/theorem41.hpp>

using namespace sparseact;
using namespace sparseact::lsh;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
/// f(x) = 0.3 x₁ − 0.4 x₂ on R^4: ‖∇f‖ = 0.5 everywhere, so L = 0.5 exactly.
RandomPolynomial linear_target() {
  return RandomPolynomial({{{1, 0, 0, 0}, 0.3}, {{0, 1, 0, 0}, -0.4}}, 4);
}
}  // namespace

TEST_CASE("learn_on_subspace: N = ⌈factor·N*⌉, the width of Lemma 4.2, and error ≤ ε at N ≥ N*", "[lsh][theorem41]") {
  const RandomPolynomial f = linear_target();
  REQUIRE_THAT(f.lipschitz_bound(), WithinRel(0.5, 1e-15));
  const std::vector<double> epss{0.4, 0.2}, factors{0.5, 1, 4};
  const LearningSetup setup{.C = 4, .test_points = 2000, .max_samples = 1e9};
  int calls = 0;
  const SubspaceLearning s = learn_on_subspace(f, 1, epss, factors, setup, 3, 7, [&] { ++calls; });
  CHECK(calls == 2);
  CHECK(s.K == 4);
  CHECK(s.L == f.lipschitz_bound());
  REQUIRE(s.runs.size() == 6);
  CHECK(s.skipped == 0);
  for (const LearnerRun& u : s.runs) {
    CAPTURE(u.eps, u.factor);
    // N* = k (L√d/ε)^k log(L√d/ε) with k = 1, d = 4: r log r, r = 2L/ε.
    const double r = 2 * 0.5 / u.eps;
    CHECK(u.samples == static_cast<Eigen::Index>(std::ceil(u.factor * r * std::log(r))));
    CHECK_THAT(u.table_order, WithinRel(r, 1e-14));
    // Lemma 4.2's diameter bound times L is half of ε: L ε_LSH √K / σ_min(AU) = ε/2.
    CHECK_THAT(0.5 * u.eps_lsh * 2.0 / s.sigma_min, WithinRel(u.eps / 2, 1e-12));
    CHECK(u.mse <= u.sup_error * u.sup_error);
    CHECK(u.buckets >= 1);
    CHECK(u.buckets <= u.samples);
    for (double share : {u.probed_share, u.coarse_share, u.exhaustive_share}) {
      CHECK(share >= 0);
      CHECK(share <= 1);
    }
    CHECK(u.seconds_per_point > 0);
    if (u.factor >= 1) CHECK(u.sup_error <= u.eps);  // Theorem 4.1
  }
  // Counting sample: 4 N* of the last ε (r = 5), at least 1000 points.
  CHECK(s.count_points == static_cast<Eigen::Index>(std::max(4 * 5 * std::log(5.0), 1000.0)));
  REQUIRE(s.inv_eps.size() == 2);
  CHECK(s.inv_eps[1] == 5.0);

  // A cap below every N skips every configuration and counts it.
  const SubspaceLearning none = learn_on_subspace(f, 1, epss, {1000.0}, {.C = 4, .test_points = 100, .max_samples = 100}, 3, 7);
  CHECK(none.runs.empty());
  CHECK(none.skipped == 2);
  CHECK_THROWS_AS(learn_on_subspace(f, 5, epss, factors, setup, 3, 7), std::invalid_argument);
}

TEST_CASE("table_growth: the log–log slope of exact power laws, its bound and saturation", "[lsh][theorem41]") {
  SubspaceLearning s;
  s.k = 2;
  s.count_points = 1000;
  s.inv_eps = {2.5, 5, 10};
  for (double x : s.inv_eps) s.buckets.push_back(3 * x * x);  // 3 (1/ε)²
  TableGrowth g = table_growth(s);
  CHECK_THAT(g.slope, WithinRel(2.0, 1e-12));
  CHECK_THAT(g.se, WithinAbs(0.0, 1e-12));
  CHECK_THAT(g.bound, WithinRel(2.0, 1e-12));
  CHECK_FALSE(g.saturated);  // 300 of 1000 points
  s.buckets.back() = 600;    // more than half the counting points alone: saturated, and a slope with an SE
  g = table_growth(s);
  CHECK(g.saturated);
  CHECK(g.se > 0);
  CHECK_THAT(g.bound, WithinRel(2 + 3 * g.se, 1e-15));
  s.inv_eps.resize(1);
  s.buckets.resize(1);
  CHECK_THROWS_AS(table_growth(s), std::invalid_argument);
}

TEST_CASE("dense_at_equal_error: eq. (1)'s costs, a width doubling from 8 to at most 512", "[lsh][theorem41]") {
  const EqualErrorComparison c = dense_at_equal_error(8, 4, 0.3, 1000, 5, 0);
  CHECK(c.K == 4);
  CHECK(c.lsh_flops == 2.0 * 8 * 4 + 4);
  CHECK(c.dense_flops == 2.0 * 8 * c.dense_width + 3.0 * c.dense_width);
  CHECK(c.dense_width >= 8);
  CHECK(c.dense_width <= 512);
  CHECK((c.dense_width & (c.dense_width - 1)) == 0);  // a power of two
  CHECK(c.reached == (c.dense_mse <= c.lsh_mse));
  if (!c.reached) CHECK(c.dense_width == 512);
  CHECK(c.lsh_mse >= 0);
  CHECK(c.lsh_seconds_per_point > 0);
}
