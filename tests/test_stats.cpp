// core/stats against independent references: scipy 1.10.1 (values pasted with the call that made
// them, run once with /usr/bin/python3), numpy, and closed forms.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <vector>

#include <sparseact/core/stats.hpp>

using namespace sparseact::stats;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

// --- Quantiles and CDFs ----------------------------------------------------------------------------

TEST_CASE("stats: normal, Student-t and chi-squared quantiles match scipy", "[stats]") {
  // scipy.stats.norm.ppf(0.975), .ppf(1e-10), .cdf(1.0), .cdf(-3.5)
  CHECK_THAT(normal_quantile(0.975), WithinRel(1.959963984540054, 1e-14));
  CHECK_THAT(normal_quantile(1e-10), WithinRel(-6.361340902404056, 1e-13));
  CHECK_THAT(normal_cdf(1.0), WithinRel(0.8413447460685429, 1e-14));
  CHECK_THAT(normal_cdf(-3.5), WithinRel(0.00023262907903552502, 1e-12));
  // scipy.stats.t.ppf(0.975, 3) = 3.182446305284263, .ppf(0.05, 10) = -1.8124611228107341,
  // .ppf(0.995, 2.5) = 7.16372813402124: scipy 1.10's stdtrit is off by 2e-13 to 7e-10 there. The digits
  // below are from mpmath 1.3 at 40 digits (root of the CDF ½ I_{ν/(ν+t²)}(ν/2, ½)), which Boost
  // matches to a few ulps.
  CHECK_THAT(student_t_quantile(1 - 0.025, 3), WithinRel(3.182446305284263, 1e-12));
  CHECK_THAT(student_t_quantile(1 - 0.025, 3), WithinRel(3.1824463052837096, 2e-15));
  CHECK_THAT(student_t_quantile(0.05, 10), WithinRel(-1.8124611228116764, 2e-15));
  CHECK_THAT(student_t_quantile(0.995, 2.5), WithinRel(7.1637281389487855, 2e-15));
  // scipy.stats.t.cdf(2.0, 5), .cdf(-1.3, 1)
  CHECK_THAT(student_t_cdf(2.0, 5), WithinRel(0.9490302605850709, 1e-14));
  CHECK_THAT(student_t_cdf(-1.3, 1), WithinRel(0.20871440016015264, 1e-13));
  // Closed forms: ν = 1 is Cauchy, t_p = tan(π(p − ½)); ν = 2 has t_p = (2p − 1)/√(2p(1 − p)).
  CHECK_THAT(student_t_quantile(0.9, 1), WithinRel(std::tan(std::numbers::pi * 0.4), 1e-13));
  CHECK_THAT(student_t_quantile(0.8, 2), WithinRel(0.6 / std::sqrt(2 * 0.8 * 0.2), 1e-13));
  CHECK(student_t_cdf(kInf, 4) == 1.0);
  CHECK(student_t_cdf(-kInf, 4) == 0.0);
  // scipy.stats.chi2.ppf(0.95, 1), .ppf(0.5, 10), .ppf(0.01, 3.5); closed form χ²₂: −2 ln(1 − p).
  CHECK_THAT(chi_squared_quantile(0.95, 1), WithinRel(3.841458820694124, 1e-13));
  CHECK_THAT(chi_squared_quantile(0.5, 10), WithinRel(9.34181776559197, 1e-13));
  CHECK_THAT(chi_squared_quantile(0.01, 3.5), WithinRel(0.19565079254104076, 1e-12));
  CHECK_THAT(chi_squared_quantile(0.7, 2), WithinRel(-2 * std::log(0.3), 1e-13));
  // χ²₁ is Z²: its p-quantile is Φ⁻¹((1 + p)/2)².
  CHECK_THAT(chi_squared_quantile(0.9, 1), WithinRel(std::pow(normal_quantile(0.95), 2), 1e-13));
}

TEST_CASE("stats: quantiles reject p outside (0, 1) and non-positive degrees of freedom", "[stats]") {
  for (double p : {0.0, 1.0, -0.1, 1.5, kNaN}) {
    CHECK_THROWS_AS(normal_quantile(p), std::invalid_argument);
    CHECK_THROWS_AS(student_t_quantile(p, 3), std::invalid_argument);
    CHECK_THROWS_AS(chi_squared_quantile(p, 3), std::invalid_argument);
  }
  CHECK_THROWS_AS(student_t_quantile(0.5, 0), std::invalid_argument);
  CHECK_THROWS_AS(student_t_cdf(0.5, -1), std::invalid_argument);
  CHECK_THROWS_AS(chi_squared_quantile(0.5, kNaN), std::invalid_argument);
}

// --- RunningMean and StoppingRule -------------------------------------------------------------------

TEST_CASE("stats: RunningMean agrees with a two-pass mean and variance", "[stats]") {
  // A large offset with small spread: the naive (Σx² − n x̄²)/(n − 1) is off by 6e-3 here, Welford
  // by ~2e-10.
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) v.push_back(1e6 + std::sin(0.37 * i) + 0.001 * i);
  RunningMean m;
  for (double x : v) m.push(x);
  double mean = 0;
  for (double x : v) mean += x;
  mean /= v.size();
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  const double var = ss / (v.size() - 1);
  CHECK(m.count() == 1000);
  CHECK_THAT(m.mean(), WithinRel(mean, 1e-15));
  CHECK_THAT(m.variance(), WithinRel(var, 1e-9));
  CHECK_THAT(m.std_error(), WithinRel(std::sqrt(var / 1000), 1e-9));
  // Half-width t_{0.975, 999} · SE and the interval around the mean.
  CHECK_THAT(m.half_width(0.05), WithinRel(student_t_quantile(0.975, 999) * std::sqrt(var / 1000), 1e-9));
  const Interval ci = m.interval(0.05);
  CHECK_THAT(ci.lo + ci.half_width(), WithinRel(m.mean(), 1e-15));
  CHECK(ci.contains(m.mean()));
}

TEST_CASE("stats: RunningMean with fewer than two values", "[stats]") {
  RunningMean m;
  CHECK(m.count() == 0);
  CHECK(m.variance() == 0.0);
  CHECK(m.std_error() == 0.0);
  CHECK(std::isinf(m.half_width()));
  m.push(3.5);
  CHECK(m.mean() == 3.5);
  CHECK(m.variance() == 0.0);
  CHECK(std::isinf(m.half_width()));
  m.push(5.5);  // mean 4.5, variance 2, SE 1, half-width t_{0.975, 1} = 12.706…
  CHECK(m.variance() == 2.0);
  CHECK(m.std_error() == 1.0);
  // scipy.stats.t.ppf(0.975, 1) = 12.706204736174698 (= tan(0.475 π))
  CHECK_THAT(m.half_width(), WithinRel(12.706204736174698, 1e-13));
}

TEST_CASE("stats: StoppingRule edge cases", "[stats]") {
  StoppingRule rule;
  rule.min_samples = 5;
  rule.max_samples = 8;
  rule.rel_tol = 0;
  rule.abs_tol = 0.1;
  RunningMean constant;
  for (int i = 0; i < 4; ++i) constant.push(2.0);
  // Zero spread, but fewer than min_samples: not yet.
  CHECK_FALSE(rule.satisfied(constant));
  CHECK_FALSE(rule.done(constant));
  constant.push(2.0);
  CHECK(rule.satisfied(constant));  // half-width 0 ≤ abs_tol
  CHECK(rule.done(constant));

  // Wide spread: never satisfied, done exactly at max_samples.
  RunningMean wide;
  for (int i = 0; i < 7; ++i) wide.push(i % 2 ? 10.0 : -10.0);
  CHECK_FALSE(rule.satisfied(wide));
  CHECK_FALSE(rule.done(wide));
  wide.push(10.0);
  CHECK(wide.count() == 8);
  CHECK_FALSE(rule.satisfied(wide));
  CHECK(rule.done(wide));

  // min_samples below 2 acts as 2: one value has no interval.
  StoppingRule loose;
  loose.min_samples = 0;
  loose.abs_tol = 1e9;
  RunningMean one;
  one.push(1.0);
  CHECK_FALSE(loose.satisfied(one));
  one.push(1.5);
  CHECK(loose.satisfied(one));

  // The relative tolerance counts the known offset: |offset + mean|.
  StoppingRule rel;
  rel.min_samples = 2;
  rel.abs_tol = 0;
  rel.rel_tol = 0.01;
  RunningMean m;
  m.push(0.9), m.push(1.1);  // mean 1, SE 0.1, half-width 12.706 · 0.1 ≈ 1.27
  CHECK_FALSE(rel.satisfied(m));
  CHECK_FALSE(rel.satisfied(m, 100.0));  // 0.01 · 101 = 1.01 < 1.27
  CHECK(rel.satisfied(m, 200.0));        // 0.01 · 201 = 2.01 ≥ 1.27
  CHECK(rel.satisfied(m, -202.0));       // |−202 + 1| = 201

  // validate(): α ∈ (0, 1), tolerances ≥ 0 and not NaN.
  CHECK_NOTHROW(StoppingRule{}.validate());
  for (double alpha : {0.0, 1.0, -0.5, kNaN}) {
    StoppingRule bad;
    bad.alpha = alpha;
    CHECK_THROWS_AS(bad.validate(), std::invalid_argument);
  }
  for (double tol : {-1e-3, kNaN}) {
    StoppingRule bad_abs, bad_rel;
    bad_abs.abs_tol = tol;
    bad_rel.rel_tol = tol;
    CHECK_THROWS_AS(bad_abs.validate(), std::invalid_argument);
    CHECK_THROWS_AS(bad_rel.validate(), std::invalid_argument);
  }
}

// --- Binomial intervals -------------------------------------------------------------------------------

TEST_CASE("stats: Wilson and Clopper-Pearson intervals match scipy's binomtest", "[stats]") {
  struct Case {
    long k, n;
    double alpha, wilson_lo, wilson_hi, exact_lo, exact_hi;
  };
  // b = scipy.stats.binomtest(k, n); b.proportion_ci(1 - alpha, method='wilson') and method='exact',
  // except the exact upper end at (37, 40, 1e-4): scipy's 0.9982552212193337 is 2e-13 off; the
  // root of I_x(38, 3) = 1 − 5e-5 by mpmath 1.3 at 40 digits is 0.99825522121912380.
  const Case cases[] = {
      {7, 20, 0.05, 0.1811918241010821, 0.5671457233147637, 0.1539092047845412, 0.5921885345328283},
      {0, 10, 0.05, 0.0, 0.27753279986288926, 0.0, 0.30849710781876294},
      {10, 10, 0.05, 0.7224672001371109, 1.0, 0.6915028921812371, 1.0},
      {1, 1, 0.05, 0.20654931437723745, 1.0, 0.025000000000000022, 1.0},
      {37, 40, 1e-4, 0.6276073409191505, 0.9890417653387, 0.6466909993020455, 0.9982552212191238},
      {500, 1000, 0.01, 0.45940700521208483, 0.5405929947879151, 0.4588525533070123, 0.5411474466929878},
  };
  for (const Case& c : cases) {
    INFO("k = " << c.k << ", n = " << c.n << ", alpha = " << c.alpha);
    const Interval w = wilson_interval(c.k, c.n, c.alpha);
    CHECK_THAT(w.lo, WithinAbs(c.wilson_lo, 1e-14));
    CHECK_THAT(w.hi, WithinAbs(c.wilson_hi, 1e-14));
    const Interval e = clopper_pearson_interval(c.k, c.n, c.alpha);
    CHECK_THAT(e.lo, WithinAbs(c.exact_lo, 1e-13));
    CHECK_THAT(e.hi, WithinAbs(c.exact_hi, 1e-13));
  }
  // Closed forms at the ends: k = 0 gives the exact upper end 1 − (α/2)^{1/n} and k = n the lower
  // end (α/2)^{1/n}; the ends 0 and 1 themselves are exact.
  const Interval zero = clopper_pearson_interval(0, 25, 0.1), all = clopper_pearson_interval(25, 25, 0.1);
  CHECK(zero.lo == 0.0);
  CHECK(all.hi == 1.0);
  CHECK_THAT(zero.hi, WithinRel(1 - std::pow(0.05, 1.0 / 25), 1e-13));
  CHECK_THAT(all.lo, WithinRel(std::pow(0.05, 1.0 / 25), 1e-13));
  CHECK(wilson_interval(0, 25, 0.1).lo == 0.0);
  CHECK(wilson_interval(25, 25, 0.1).hi == 1.0);
  // Wilson at tiny α: z from the upper tail, not from 1 − α/2 (which would round).
  const double z = -normal_quantile(1e-12 / 2), p = 0.3, n = 50, z2n = z * z / n;
  const Interval tiny = wilson_interval(15, 50, 1e-12);
  CHECK_THAT(tiny.lo + tiny.half_width(), WithinRel((p + z2n / 2) / (1 + z2n), 1e-14));
}

TEST_CASE("stats: binomial intervals reject impossible counts and levels", "[stats]") {
  CHECK_THROWS_AS(wilson_interval(0, 0), std::invalid_argument);
  CHECK_THROWS_AS(wilson_interval(-1, 5), std::invalid_argument);
  CHECK_THROWS_AS(wilson_interval(6, 5), std::invalid_argument);
  CHECK_THROWS_AS(wilson_interval(2, 5, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(clopper_pearson_interval(6, 5), std::invalid_argument);
  CHECK_THROWS_AS(clopper_pearson_interval(2, 5, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(clopper_pearson_interval(2, 5, kNaN), std::invalid_argument);
}

// --- Tests ----------------------------------------------------------------------------------------

TEST_CASE("stats: paired t-test matches scipy's ttest_rel for each alternative", "[stats]") {
  const std::vector<double> x{2.31, 1.87, 3.02, 2.55, 1.96, 2.78, 3.40, 2.12};
  const std::vector<double> y{2.05, 1.91, 2.60, 2.20, 2.01, 2.33, 2.95, 1.98};
  // scipy.stats.ttest_rel(x, y, alternative=...): statistic 3.352837688236226 and
  // p = 0.012203283016184936 (two-sided), 0.9938983584919076 (less), 0.006101641508092468 (greater);
  // d = x − y: d.mean() = 0.24749999999999997, d.std(ddof=1)/√8 = 0.07381806786185298.
  const TTest two = paired_t_test(x, y), less = paired_t_test(x, y, Alternative::less),
              greater = paired_t_test(x, y, Alternative::greater);
  CHECK(two.n == 8);
  CHECK(two.df == 7);
  CHECK_THAT(two.mean_difference, WithinRel(0.24749999999999997, 1e-14));
  CHECK_THAT(two.std_error, WithinRel(0.07381806786185298, 1e-13));
  for (const TTest* t : {&two, &less, &greater}) CHECK_THAT(t->t, WithinRel(3.352837688236226, 1e-13));
  CHECK_THAT(two.p_value, WithinRel(0.012203283016184936, 1e-12));
  CHECK_THAT(less.p_value, WithinRel(0.9938983584919076, 1e-13));
  CHECK_THAT(greater.p_value, WithinRel(0.006101641508092468, 1e-12));

  // A negative mean difference: scipy.stats.ttest_rel(x2, y2, alternative=...) gives t =
  // −2.091650066335189, p = 0.09070960218611412 / 0.04535480109305706 (less) / 0.9546451989069429.
  const std::vector<double> x2{0.52, 0.61, 0.47, 0.58, 0.50, 0.55}, y2{0.55, 0.60, 0.52, 0.61, 0.49, 0.60};
  CHECK_THAT(paired_t_test(x2, y2).t, WithinRel(-2.091650066335189, 1e-12));
  CHECK_THAT(paired_t_test(x2, y2).p_value, WithinRel(0.09070960218611412, 1e-12));
  CHECK_THAT(paired_t_test(x2, y2, Alternative::less).p_value, WithinRel(0.04535480109305706, 1e-12));
  CHECK_THAT(paired_t_test(x2, y2, Alternative::greater).p_value, WithinRel(0.9546451989069429, 1e-13));
  // Swapping x and y flips t and exchanges the one-sided p-values.
  CHECK_THAT(paired_t_test(y2, x2, Alternative::greater).p_value, WithinRel(0.04535480109305706, 1e-12));
}

TEST_CASE("stats: paired t-test with equal differences and bad input", "[stats]") {
  const std::vector<double> x{1, 2, 3, 4}, up{2, 3, 4, 5};
  const TTest t = paired_t_test(up, x, Alternative::greater);  // every difference is 1
  CHECK(t.std_error == 0.0);
  CHECK(std::isinf(t.t));
  CHECK(t.t > 0);
  CHECK(t.p_value == 0.0);
  CHECK(paired_t_test(up, x, Alternative::less).p_value == 1.0);
  CHECK(paired_t_test(up, x).p_value == 0.0);
  const TTest same = paired_t_test(x, x, Alternative::greater);
  CHECK(same.t == 0.0);
  CHECK(same.p_value == 1.0);

  CHECK_THROWS_AS(paired_t_test({1.0}, {2.0}), std::invalid_argument);
  CHECK_THROWS_AS(paired_t_test({1.0, 2.0, 3.0}, {2.0, 3.0}), std::invalid_argument);
  CHECK_THROWS_AS(paired_t_test({1.0, kNaN, 3.0}, {2.0, 3.0, 4.0}), std::invalid_argument);
}

TEST_CASE("stats: Spearman's rho with ties matches scipy's spearmanr", "[stats]") {
  const std::vector<double> x{1, 2, 2, 3, 4, 5, 5, 5, 6, 7, 8, 9};
  const std::vector<double> y{2.0, 1.0, 3.5, 3.5, 5.0, 4.0, 7.0, 6.0, 6.0, 9.0, 8.0, 10.0};
  // scipy.stats.spearmanr(x, y, alternative=...): correlation 0.9362963845670855,
  // p = 7.419818799306974e-06 (two-sided), 0.9999962900906003 (less), 3.709909399653487e-06 (greater).
  const Spearman s = spearman(x, y);
  CHECK(s.n == 12);
  CHECK_THAT(s.rho, WithinRel(0.9362963845670855, 1e-14));
  CHECK_THAT(s.t, WithinRel(s.rho * std::sqrt(10 / (1 - s.rho * s.rho)), 1e-13));
  CHECK_THAT(s.p_value, WithinRel(7.419818799306974e-06, 1e-10));
  CHECK_THAT(spearman(x, y, Alternative::less).p_value, WithinRel(0.9999962900906003, 1e-13));
  CHECK_THAT(spearman(x, y, Alternative::greater).p_value, WithinRel(3.709909399653487e-06, 1e-10));

  // Decreasing with ties in both: scipy.stats.spearmanr(x, y2, ...) gives −0.9734650501170076,
  // p = 9.909178174635061e-08 / 4.9545890873175306e-08 (less) / 0.9999999504541092 (greater).
  const std::vector<double> y2{10, 9, 9, 7, 8, 5, 6, 4, 4, 2, 3, 1};
  CHECK_THAT(spearman(x, y2).rho, WithinRel(-0.9734650501170076, 1e-14));
  CHECK_THAT(spearman(x, y2).p_value, WithinRel(9.909178174635061e-08, 1e-9));
  CHECK_THAT(spearman(x, y2, Alternative::less).p_value, WithinRel(4.9545890873175306e-08, 1e-9));
  CHECK_THAT(spearman(x, y2, Alternative::greater).p_value, WithinRel(0.9999999504541092, 1e-13));

  // Monotone data: ρ = 1 exactly, whatever the values; t = ∞, p = 0.
  const std::vector<double> a{0.1, 0.5, 2.0, 30.0}, b{-5.0, -1.0, 7.0, 7.5};
  CHECK(spearman(a, b).rho == 1.0);
  CHECK(spearman(a, b).p_value == 0.0);

  CHECK_THROWS_AS(spearman({1.0, 2.0}, {1.0, 2.0}), std::invalid_argument);
  CHECK_THROWS_AS(spearman({1.0, 1.0, 1.0}, {1.0, 2.0, 3.0}), std::invalid_argument);
  CHECK_THROWS_AS(spearman({1.0, 2.0, kNaN}, {1.0, 2.0, 3.0}), std::invalid_argument);
  CHECK_THROWS_AS(spearman({1.0, 2.0, 3.0}, {1.0, 2.0}), std::invalid_argument);
}

// --- Least squares --------------------------------------------------------------------------------

TEST_CASE("stats: linear_fit matches scipy's linregress", "[stats]") {
  const std::vector<double> x{0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0};
  const std::vector<double> y{1.12, 1.98, 2.41, 3.37, 3.72, 4.61, 4.85, 5.92, 6.13, 7.08};
  // L = scipy.stats.linregress(x, y): slope, intercept, stderr, intercept_stderr, rvalue**2
  const LinearFit f = linear_fit(x, y);
  CHECK(f.n == 10);
  CHECK_THAT(f.slope, WithinRel(1.279636363636364, 1e-14));
  CHECK_THAT(f.intercept, WithinRel(0.6000000000000001, 1e-13));
  CHECK_THAT(f.slope_se, WithinRel(0.04030845258580614, 1e-12));
  CHECK_THAT(f.intercept_se, WithinRel(0.1250536854411876, 1e-12));
  CHECK_THAT(f.r_squared, WithinRel(0.9921245515987608, 1e-14));
  // t_{0.975, 8} · L.stderr and t_{0.95, 8} · L.stderr, the quantiles 2.306004135204166683 and
  // 1.859548037530898390 by mpmath 1.3 at 40 digits (scipy 1.10's t.ppf is 7e-11 off here).
  CHECK_THAT(f.slope_interval().half_width(), WithinRel(0.09295145834655004, 1e-12));
  CHECK_THAT(f.slope_interval(0.1).half_width(), WithinRel(0.07495550390184307, 1e-12));
  CHECK(f.slope_interval().contains(f.slope));
  CHECK(f.dof == 8);

  // Two points: the line through them, no standard errors, the interval is the point.
  const LinearFit two = linear_fit({1.0, 3.0}, {2.0, 8.0});
  CHECK(two.slope == 3.0);
  CHECK(two.intercept == -1.0);
  CHECK(two.slope_se == 0.0);
  CHECK(two.dof == 0);
  CHECK(two.r_squared == 1.0);
  CHECK(two.slope_interval().lo == 3.0);
  CHECK(two.slope_interval().hi == 3.0);
  // An exact line: zero residuals, R² = 1; a constant y: slope 0 and R² 0 (scipy's convention).
  const LinearFit exact = linear_fit({0.0, 1.0, 2.0, 3.0}, {1.0, 3.0, 5.0, 7.0});
  CHECK_THAT(exact.slope, WithinRel(2.0, 1e-15));
  CHECK_THAT(exact.slope_se, WithinAbs(0.0, 1e-15));
  CHECK_THAT(exact.r_squared, WithinRel(1.0, 1e-15));
  const LinearFit flat = linear_fit({0.0, 1.0, 2.0}, {4.0, 4.0, 4.0});
  CHECK(flat.slope == 0.0);
  CHECK(flat.r_squared == 0.0);

  CHECK_THROWS_AS(linear_fit({1.0}, {1.0}), std::invalid_argument);
  CHECK_THROWS_AS(linear_fit({1.0, 2.0}, {1.0}), std::invalid_argument);
  CHECK_THROWS_AS(linear_fit({2.0, 2.0, 2.0}, {1.0, 2.0, 3.0}), std::invalid_argument);
  CHECK_THROWS_AS(linear_fit({1.0, 2.0, 3.0}, {1.0, kNaN, 3.0}), std::invalid_argument);
  CHECK_THROWS_AS(f.slope_interval(0.0), std::invalid_argument);
}

TEST_CASE("stats: loglog_fit recovers a power law exactly", "[stats]") {
  // y = 3 x^2.5: log y = log 3 + 2.5 log x, no residual.
  std::vector<double> x, y;
  for (double v : {0.1, 0.7, 1.0, 2.0, 5.0, 40.0, 1000.0}) x.push_back(v), y.push_back(3 * std::pow(v, 2.5));
  const LinearFit f = loglog_fit(x, y);
  CHECK_THAT(f.slope, WithinRel(2.5, 1e-14));
  CHECK_THAT(f.intercept, WithinRel(std::log(3.0), 1e-13));
  CHECK_THAT(f.slope_se, WithinAbs(0.0, 1e-14));
  CHECK_THAT(f.r_squared, WithinRel(1.0, 1e-15));
  // The same numbers as linear_fit on the logs.
  std::vector<double> lx, ly;
  for (std::size_t i = 0; i < x.size(); ++i) lx.push_back(std::log(x[i])), ly.push_back(std::log(y[i]));
  CHECK(linear_fit(lx, ly).slope == f.slope);

  CHECK_THROWS_AS(loglog_fit({1.0, 0.0, 2.0}, {1.0, 2.0, 3.0}), std::invalid_argument);
  CHECK_THROWS_AS(loglog_fit({1.0, 2.0, 3.0}, {1.0, -2.0, 3.0}), std::invalid_argument);
  CHECK_THROWS_AS(loglog_fit({1.0, 2.0, kNaN}, {1.0, 2.0, 3.0}), std::invalid_argument);
  CHECK_THROWS_AS(loglog_fit({1.0, 2.0, kInf}, {1.0, 2.0, 3.0}), std::invalid_argument);
  CHECK_THROWS_AS(loglog_fit({1.0, 2.0}, {1.0, 2.0, 3.0}), std::invalid_argument);
  CHECK_THROWS_AS(loglog_fit({1.0}, {1.0}), std::invalid_argument);
}

TEST_CASE("stats: linear_fit_through_origin matches numpy's lstsq without a constant column", "[stats]") {
  const std::vector<double> x{1.0, 2.0, 3.5, 5.0, 7.0}, y{2.1, 3.9, 7.2, 9.8, 14.3};
  // b, res, _, _ = numpy.linalg.lstsq(x[:, None], y): slope b[0], SE √(res/(n − 1)/Σx²), R² 1 − res/Σy²
  const LinearFit f = linear_fit_through_origin(x, y);
  CHECK(f.n == 5);
  CHECK(f.dof == 4);
  CHECK(f.intercept == 0.0);
  CHECK_THAT(f.slope, WithinRel(2.018630136986302, 1e-14));
  CHECK_THAT(f.slope_se, WithinRel(0.02082732446027077, 1e-12));
  CHECK_THAT(f.r_squared, WithinRel(0.9995743735930447, 1e-14));
  CHECK_THAT(f.slope_interval().half_width(), WithinRel(student_t_quantile(0.975, 4) * f.slope_se, 1e-14));
  // One point: the slope through it, no spread.
  const LinearFit one = linear_fit_through_origin({2.0}, {5.0});
  CHECK(one.slope == 2.5);
  CHECK(one.slope_se == 0.0);
  CHECK(one.slope_interval().lo == 2.5);
  CHECK_THROWS_AS(linear_fit_through_origin({0.0, 0.0}, {1.0, 2.0}), std::invalid_argument);
  CHECK_THROWS_AS(linear_fit_through_origin({}, {}), std::invalid_argument);
}

TEST_CASE("stats: weighted_linear_fit matches numpy's polyfit with known variances", "[stats]") {
  const std::vector<double> x{1, 2, 3, 4, 5, 6}, y{2.2, 3.9, 6.3, 7.8, 10.4, 11.7}, sigma{0.1, 0.2, 0.15, 0.3, 0.25, 0.4};
  // p, C = numpy.polyfit(x, y, 1, w=1/sigma, cov='unscaled'): p = (slope, intercept), √diag(C)
  const LinearFit f = weighted_linear_fit(x, y, sigma);
  CHECK_THAT(f.slope, WithinRel(1.9861402761420306, 1e-13));
  CHECK_THAT(f.intercept, WithinRel(0.1938188430959145, 1e-12));
  CHECK_THAT(f.slope_se, WithinRel(0.048499679472789686, 1e-12));
  CHECK_THAT(f.intercept_se, WithinRel(0.12755379468540004, 1e-12));
  // Weighted R² = 1 − Σw r²/Σw (y − ȳ_w)², by numpy from the same fit.
  CHECK_THAT(f.r_squared, WithinRel(0.9962448716570154, 1e-13));
  // Known variances: the interval uses the normal quantile (scipy.stats.norm.ppf(0.975) = 1.959963984540054).
  CHECK(std::isinf(f.dof));
  CHECK_THAT(f.slope_interval().half_width(), WithinRel(1.959963984540054 * 0.048499679472789686, 1e-12));
  // Equal σ: the ordinary fit's slope and intercept, with SE(slope) = σ/√s_xx.
  const std::vector<double> ones(6, 0.5);
  const LinearFit g = weighted_linear_fit(x, y, ones), ols = linear_fit(x, y);
  CHECK_THAT(g.slope, WithinRel(ols.slope, 1e-14));
  CHECK_THAT(g.intercept, WithinRel(ols.intercept, 1e-13));
  CHECK_THAT(g.slope_se, WithinRel(0.5 / std::sqrt(17.5), 1e-14));  // s_xx of 1..6 is 17.5

  CHECK_THROWS_AS(weighted_linear_fit(x, y, {0.1, 0.2}), std::invalid_argument);
  CHECK_THROWS_AS(weighted_linear_fit(x, y, {0.1, 0.2, 0.0, 0.3, 0.2, 0.1}), std::invalid_argument);
  CHECK_THROWS_AS(weighted_linear_fit(x, y, {0.1, 0.2, kNaN, 0.3, 0.2, 0.1}), std::invalid_argument);
}

TEST_CASE("stats: loglog_local_slopes sorts by x, skips equal x, and reads a broken power law piecewise", "[stats]") {
  // y = x² up to x = 4, then y = 16·(x/4)³: local slopes 2, 2, 3 whatever the input order; the repeated x = 2 adds none.
  const std::vector<double> x{8, 1, 2, 4, 2}, y{128, 1, 4, 16, 4};
  const std::vector<double> s = loglog_local_slopes(x, y);
  REQUIRE(s.size() == 3);
  CHECK_THAT(s[0], WithinRel(2.0, 1e-14));
  CHECK_THAT(s[1], WithinRel(2.0, 1e-14));
  CHECK_THAT(s[2], WithinRel(3.0, 1e-14));
  CHECK(loglog_local_slopes({1.0}, {1.0}).empty());
  CHECK_THROWS_AS(loglog_local_slopes({1.0, 2.0}, {1.0}), std::invalid_argument);
  CHECK_THROWS_AS(loglog_local_slopes({1.0, 0.0}, {1.0, 1.0}), std::invalid_argument);
}
