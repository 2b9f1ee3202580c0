// lsh/lemma42 (paper 000 Lemma 4.2 over a grid): the constants against closed forms, a grid point's
// summary against the trials recomputed one by one, the always-true bounds, and the exponent fit
// against exact lines and the closed-form slope through the origin.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <sparseact/core/rng.hpp>
#include <sparseact/lsh/lemma42.hpp>

using namespace sparseact;
using namespace sparseact::lsh;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("Lemma 4.2's constants: c = 1 − 1/√C and the Davidson–Szarek 90% bound", "[lsh][lemma42]") {
  CHECK(diameter_constant(4) == 0.5);
  CHECK(diameter_constant(1) == 0.0);
  CHECK_THAT(diameter_constant(9), WithinRel(2.0 / 3.0, 1e-15));
  CHECK_THROWS_AS(diameter_constant(0), std::invalid_argument);
  // Python: math.sqrt(8) - math.sqrt(2) - math.sqrt(2*math.log(10)) = -0.731752463916252; and
  // t = √(2 ln 10) = 2.145966026289347 is where e^{−t²/2} = 1/10.
  CHECK_THAT(sigma_min_bound_90(8, 2), WithinAbs(-0.731752463916252, 1e-15));
  const double t = std::sqrt(100.0) - std::sqrt(1.0) - sigma_min_bound_90(100, 1);
  CHECK_THAT(std::exp(-t * t / 2), WithinRel(0.1, 1e-14));
}

TEST_CASE("bucket_grid_point summarises its trials as bucket_trial measures them one by one", "[lsh][lemma42]") {
  for (const BucketGridPoint at : {BucketGridPoint{8, 2, 4, 1.0}, BucketGridPoint{6, 4, 2, 2.0}}) {
    CAPTURE(at.k);
    const int trials = 5;
    const Eigen::Index samples = 300;
    const std::uint64_t seed = 3, stream = 77;
    int calls = 0;
    const BucketPointSummary s = bucket_grid_point(at, trials, samples, seed, stream, Device::cpu, [&] { ++calls; });
    CHECK(calls == trials);
    REQUIRE(s.trials.size() == std::size_t(trials));
    CHECK(s.eps_over_c == at.eps / diameter_constant(at.C));

    long small = 0, hits = 0;
    double max_diam = 0, log_sum = 0, sum = 0;
    std::vector<double> diams;
    for (int t = 0; t < trials; ++t) {
      const BucketTrial tr = bucket_trial(at.d, at.k, at.C * at.k, at.eps, samples, seed, stream_id(stream, t));
      CHECK(tr.sigma_min == s.trials[std::size_t(t)].sigma_min);
      const double diam = at.k <= 3 ? tr.diam_exact : tr.diam_sampled;
      small += diam <= s.eps_over_c;
      hits += tr.sigma_min >= sigma_min_bound_90(at.C * at.k, at.k);
      max_diam = std::max(max_diam, diam);
      diams.push_back(diam);
      log_sum += std::log(double(tr.buckets));
      sum += double(tr.buckets);
      // The always-true statements of the lemma's proof, trial by trial.
      CHECK(tr.diam_sampled <= tr.bound * (1 + 1e-9));
      if (at.k <= 3) CHECK(tr.diam_exact <= tr.bound * (1 + 1e-9));
      CHECK(std::log(double(tr.buckets)) <= tr.log_arrangement + 1e-12);
    }
    std::sort(diams.begin(), diams.end());
    CHECK(s.small == small);
    CHECK(s.eq3_hits == hits);
    CHECK(s.max_diameter == max_diam);
    CHECK(s.median_diameter == diams[2]);
    CHECK_THAT(s.log_buckets_mean, WithinRel(log_sum / trials, 1e-12));
    CHECK_THAT(s.buckets_mean, WithinRel(sum / trials, 1e-12));
    CHECK_THAT(s.beta_point, WithinRel(s.log_buckets_mean / (at.k * std::log(2 * std::sqrt(double(at.d)) / at.eps)), 1e-12));
    CHECK(s.worst_bound_ratio <= 1 + 1e-9);
    CHECK(s.worst_count_excess <= 1e-12);
    if (at.k <= 3) CHECK(s.worst_exact_minus_sampled >= -1e-9);
    else CHECK(std::isinf(s.worst_exact_minus_sampled));  // no exact geometry for k > 3
    CHECK(s.singleton_fraction >= 0);
    CHECK(s.singleton_fraction <= 1);
  }
}

TEST_CASE("bucket_count_exponent: exact lines, the slope through the origin in closed form, NaN where too few points", "[lsh][lemma42]") {
  const std::vector<double> x{1, 2, 3, 4.5};
  std::vector<double> y;
  for (double v : x) y.push_back(1.5 * v);
  BucketExponent e = bucket_count_exponent(x, y);
  CHECK_THAT(e.beta, WithinRel(1.5, 1e-14));
  CHECK_THAT(e.beta_se, WithinAbs(0.0, 1e-14));
  CHECK_THAT(e.slope, WithinRel(1.5, 1e-14));
  CHECK_THAT(e.intercept, WithinAbs(0.0, 1e-13));
  CHECK(e.points == 4);
  // y = 2 + 1.5x: with an intercept, the line itself; through the origin Σxy/Σx² = 2.113138686131387 (Python).
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2 + 1.5 * x[i];
  e = bucket_count_exponent(x, y);
  CHECK_THAT(e.slope, WithinRel(1.5, 1e-13));
  CHECK_THAT(e.intercept, WithinRel(2.0, 1e-13));
  CHECK_THAT(e.slope_se, WithinAbs(0.0, 1e-13));
  CHECK_THAT(e.beta, WithinRel(2.113138686131387, 1e-14));
  CHECK(e.beta_se > 0);

  e = bucket_count_exponent({}, {});
  CHECK(std::isnan(e.beta));
  CHECK(std::isnan(e.beta_se));
  CHECK(std::isnan(e.slope));
  e = bucket_count_exponent({2}, {3});  // one point: β, no standard error, no line
  CHECK(e.beta == 1.5);
  CHECK(std::isnan(e.beta_se));
  CHECK(std::isnan(e.slope));
  e = bucket_count_exponent({2, 2, 2}, {1, 2, 3});  // one distinct x: no line
  CHECK(std::isnan(e.slope));
  CHECK_THAT(e.beta, WithinRel(1.0, 1e-15));
  CHECK_THROWS_AS(bucket_count_exponent({1, 2}, {1}), std::invalid_argument);
}
