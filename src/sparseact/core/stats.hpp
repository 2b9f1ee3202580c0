#pragma once
// Statistics every topic uses, from Boost.Math (compiled into the library: this header is plain
// C++17 and includes no Boost, so notebooks and users need none). Nothing here is hand-written
// numerics: quantiles, CDFs, intervals and tests are Boost's distributions; the fits are ordinary
// least squares with their textbook standard errors.
//
//   quantiles      normal, Student-t, χ², and the CDFs they invert
//   RunningMean    Welford's mean/variance in push order (deterministic), with the Student-t
//                  confidence interval; StoppingRule stops a Monte-Carlo loop once
//                  t_{1−α/2, k−1}·SE ≤ max(abs_tol, rel_tol·|offset + mean|) and k ≥ min_samples
//   intervals      Wilson score and Clopper–Pearson (exact) for a binomial proportion
//   tests          paired t-test (one- or two-sided), Spearman's ρ with its t-approximation test,
//                  the Kolmogorov–Smirnov p-value (Kolmogorov's series: Boost 1.74 has no such distribution)
//   fits           y = a + b x and log y = a + b log x by least squares, with standard errors
//   resampling     sample quantiles (type 7) and the percentile bootstrap interval of a statistic
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace sparseact::stats {

// --- Quantiles and CDFs -------------------------------------------------------------------------

/// Φ⁻¹(p), p ∈ (0, 1); throws std::invalid_argument outside.
double normal_quantile(double p);
/// Φ(x).
double normal_cdf(double x);
/// Standard normal density φ(x).
double normal_pdf(double x);
/// Owen's T function T(h, a) = (1/2π) ∫₀ᵃ exp(−h²(1 + x²)/2)/(1 + x²) dx (Boost.Math): with it,
/// P(Z ≤ h, Z′ ≤ h) = Φ(h) − 2T(h, √((1 − ρ)/(1 + ρ))) for a standard bivariate normal pair.
double owens_t(double h, double a);
/// The p-quantile of Student's t with ν > 0 degrees of freedom.
double student_t_quantile(double p, double nu);
/// P(T ≤ t) for Student's t with ν degrees of freedom.
double student_t_cdf(double t, double nu);
/// The p-quantile of χ² with k > 0 degrees of freedom.
double chi_squared_quantile(double p, double k);
/// Kolmogorov's limiting distribution of √n·D_n: P(K > x) = 2 Σ_{k≥1} (−1)^{k−1} e^{−2k²x²}, summed in
/// the dual (Jacobi theta) form √(2π)/x Σ_{k≥1} e^{−(2k−1)²π²/(8x²)} for the CDF below x = 1.18, where
/// the alternating series converges slowly (scipy.stats.kstwobign.sf). Boost 1.74 has no Kolmogorov
/// distribution (it arrives in 1.75), so this series is the one hand-written distribution here.
double kolmogorov_sf(double x);
/// P-value of a one-sample Kolmogorov–Smirnov distance D from n i.i.d. values against a fully specified
/// continuous law, by Stephens' (1970) finite-n form P(K > (√n + 0.12 + 0.11/√n)·D): within 3% of the
/// exact distribution (scipy.stats.kstwo.sf) for n ≥ 20 and p ≥ 1e-6. n ≥ 1, D ∈ [0, 1].
double kolmogorov_smirnov_p_value(double D, std::size_t n);

// --- Running mean with a confidence interval ----------------------------------------------------

struct Interval {
  double lo = 0.0, hi = 0.0;
  bool contains(double x) const { return lo <= x && x <= hi; }
  double half_width() const { return 0.5 * (hi - lo); }
};

/// Welford's running mean and variance; values are pushed in a fixed order, so the numbers do not
/// depend on threads.
class RunningMean {
 public:
  void push(double x);
  std::int64_t count() const { return n_; }
  double mean() const { return mean_; }
  /// Sample variance (n − 1 in the denominator); 0 for fewer than two values.
  double variance() const;
  /// Standard error of the mean, √(variance / n).
  double std_error() const;
  /// Half-width of the two-sided (1 − α) Student-t interval of the mean; +∞ for fewer than two values.
  double half_width(double alpha = 0.05) const;
  Interval interval(double alpha = 0.05) const;

 private:
  std::int64_t n_ = 0;
  double mean_ = 0.0, m2_ = 0.0;
};

/// When to stop sampling: after at least min_samples (≥ 2), at most max_samples, once the
/// (1 − α) interval's half-width ≤ max(abs_tol, rel_tol·|offset + mean|). `offset` is a known
/// exact part added to the mean (Hutch++'s tr(QᵀAQ)); 0 otherwise.
struct StoppingRule {
  std::int64_t min_samples = 10;
  std::int64_t max_samples = 1000;
  double alpha = 0.05;
  double abs_tol = 0.0;
  double rel_tol = 1e-2;

  /// True when `m` is precise enough (and has at least min_samples values).
  bool satisfied(const RunningMean& m, double offset = 0.0) const;
  /// True when sampling must end: satisfied, or max_samples reached.
  bool done(const RunningMean& m, double offset = 0.0) const;
  /// Throws std::invalid_argument when α ∉ (0, 1), a tolerance is negative or NaN.
  void validate() const;
};

// --- Binomial intervals ---------------------------------------------------------------------------

/// Wilson score interval for k successes in n trials at two-sided level 1 − α (n ≥ 1, 0 ≤ k ≤ n).
Interval wilson_interval(std::int64_t k, std::int64_t n, double alpha = 0.05);
/// Clopper–Pearson ("exact") interval, from Boost's beta quantiles; lo = 0 at k = 0, hi = 1 at k = n.
Interval clopper_pearson_interval(std::int64_t k, std::int64_t n, double alpha = 0.05);

// --- Tests ----------------------------------------------------------------------------------------

enum class Alternative {
  two_sided,
  less,     ///< H₁: mean(x − y) < 0
  greater,  ///< H₁: mean(x − y) > 0
};

struct TTest {
  double mean_difference = 0.0;  ///< mean of x_i − y_i
  double std_error = 0.0;        ///< of that mean
  double t = 0.0;                ///< mean_difference / std_error
  double df = 0.0;               ///< n − 1
  double p_value = 1.0;          ///< under the chosen alternative
  std::size_t n = 0;
};

/// Paired t-test of x against y (same length ≥ 2). When every difference is equal the standard
/// error is 0: t is ±∞ (or 0 for a zero difference) and p is 0 or 1 accordingly.
TTest paired_t_test(const std::vector<double>& x, const std::vector<double>& y,
                    Alternative alternative = Alternative::two_sided);

/// Welch's two-sample t-test of mean(x) − mean(y) (unequal variances; Welch–Satterthwaite degrees of
/// freedom), scipy's ttest_ind(x, y, equal_var=False). Each sample needs ≥ 2 values; when both variances
/// are 0 the sign of the difference decides, as in paired_t_test. `n` is x's size plus y's.
TTest welch_t_test(const std::vector<double>& x, const std::vector<double>& y, Alternative alternative = Alternative::two_sided);

// --- Power and equivalence ------------------------------------------------------------------------
// What a statistical check needs beyond its p-value (app/checks.hpp: the verdicts `inconclusive`
// and `contradicted` depend on them). θ is an effect with an estimate θ̂ of standard error se and
// df degrees of freedom (df = ∞: a normal estimate).

/// Power of the one-sided level-α t-test of H₀: θ ≤ 0 when the true θ is `effect`:
/// P(T′ > t_{1−α, df}) with T′ noncentral t(df, effect/se) (Boost's non_central_t;
/// scipy.stats.nct.sf), Φ(effect/se − z_{1−α}) for df = ∞. se = 0: 1 when effect > 0, else 0.
double one_sided_power(double effect, double std_error, double df, double alpha = 0.05);

/// Schuirmann's two one-sided tests of −Δ < θ < Δ.
struct Tost {
  double mean_difference = 0.0, std_error = 0.0, df = 0.0, margin = 0.0;
  Interval interval;      ///< the (1 − 2α) two-sided interval of θ: equivalence ⇔ it lies inside (−Δ, Δ)
  double p_value = 1.0;   ///< the larger of the two one-sided p-values
};
/// TOST from a t-test's estimate (paired_t_test or welch_t_test, any alternative). Δ > 0.
Tost tost(const TTest& t, double margin, double alpha = 0.05);
/// Power of TOST at a true θ: max(0, P(T′₁ > t) + P(T′₂ < −t) − 1) with t = t_{1−α, df},
/// T′₁ ~ nct(df, (θ + Δ)/se), T′₂ ~ nct(df, (θ − Δ)/se) (the usual noncentral-t form; exact when
/// the two tests' rejection regions cannot both fail, a lower bound otherwise).
double tost_power(double margin, double std_error, double df, double true_difference = 0.0, double alpha = 0.05);

/// The smallest n ≥ n0 with power(n) ≥ target, for a power that does not decrease with n (doubling,
/// then bisection); 0 when even n_max falls short.
std::size_t smallest_n_for_power(const std::function<double(std::size_t)>& power, std::size_t n0, double target = 0.8,
                                 std::size_t n_max = 1000000);

struct Spearman {
  double rho = 0.0;      ///< Pearson correlation of the ranks (ties get average ranks)
  double t = 0.0;        ///< ρ √((n − 2)/(1 − ρ²))
  double p_value = 1.0;  ///< from Student's t with n − 2 degrees of freedom (scipy's spearmanr)
  std::size_t n = 0;
};

/// Spearman's rank correlation of x and y (same length ≥ 3) with its test against ρ = 0. Throws
/// std::invalid_argument when x or y is constant (ρ undefined) or holds a NaN.
Spearman spearman(const std::vector<double>& x, const std::vector<double>& y,
                  Alternative alternative = Alternative::two_sided);

struct ChiSquaredTest {
  double statistic = 0.0;  ///< Pearson's X² = Σ (O_i − n p_i)² / (n p_i)
  double df = 0.0;         ///< categories − 1
  double p_value = 1.0;    ///< P(χ²_df ≥ X²), Boost's complement CDF
  std::int64_t n = 0;      ///< Σ O_i
};

/// Pearson's χ² goodness-of-fit test of observed counts against category probabilities p_i > 0 (Σ p_i = 1 within
/// 1e-9), scipy.stats.chisquare(O, n·p). Needs ≥ 2 categories and n ≥ 1; throws std::invalid_argument otherwise.
ChiSquaredTest chi_squared_gof(const std::vector<std::int64_t>& observed, const std::vector<double>& probabilities);
/// The same against equal probabilities 1/k (scipy.stats.chisquare(O)).
ChiSquaredTest chi_squared_uniform(const std::vector<std::int64_t>& observed);

// --- Least squares ----------------------------------------------------------------------------------

/// y ≈ intercept + slope·x by least squares.
struct LinearFit {
  double slope = 0.0, intercept = 0.0;
  double slope_se = 0.0, intercept_se = 0.0;  ///< from the residual variance (dof below); 0 when dof = 0
  double r_squared = 0.0;                     ///< s_xy²/(s_xx s_yy); 0 when y is constant (scipy's linregress)
  std::size_t n = 0;
  /// Degrees of freedom of the residual variance: n − 2 (n − 1 through the origin); +∞ when the
  /// variances are known (weighted_linear_fit).
  double dof = 0.0;
  /// Two-sided (1 − α) interval of the slope, Student-t with `dof` degrees of freedom (normal for
  /// dof = ∞); the point itself for dof = 0.
  Interval slope_interval(double alpha = 0.05) const;
  double x_mean = 0.0, sxx = 0.0;  ///< x̄ and Σ(x − x̄)² (linear_fit)
  double residual_sd = 0.0;        ///< σ̂ = √(RSS/dof) (linear_fit, n > 2)
  /// linear_fit only: the two-sided (1 − α) prediction interval of a new observation at x0,
  ///   ŷ(x0) ± t_{dof, 1−α/2} σ̂ √(1 + 1/n + (x0 − x̄)²/s_xx)
  /// (R's predict(lm, interval = "prediction")). Needs n > 2.
  Interval prediction_interval(double x0, double alpha = 0.05) const;
};

/// Needs n ≥ 2 points and x not all equal; throws std::invalid_argument otherwise.
LinearFit linear_fit(const std::vector<double>& x, const std::vector<double>& y);
/// y ≈ slope·x through the origin (intercept 0): slope = Σxy/Σx², SE² = RSS/((n − 1) Σx²), and
/// r_squared the uncentred 1 − RSS/Σy² (R's lm(y ~ 0 + x)). Needs n ≥ 1 and some x ≠ 0.
LinearFit linear_fit_through_origin(const std::vector<double>& x, const std::vector<double>& y);
/// Weighted least squares for y_i with known standard deviations σ_i > 0 (weights 1/σ_i²): the
/// standard errors come from the σ_i, not from the residuals, SE(slope)² = 1/Σ w_i (x_i − x̄_w)²
/// (numpy.polyfit(x, y, 1, w=1/σ, cov='unscaled')), so dof = ∞; r_squared is the weighted R².
LinearFit weighted_linear_fit(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& sigma);
/// log y ≈ intercept + slope·log x (natural logs): the exponent of a power law y ∝ x^slope.
/// Needs every x and y > 0; throws std::invalid_argument otherwise.
LinearFit loglog_fit(const std::vector<double>& x, const std::vector<double>& y);
/// The local exponents of y ∝ x^s a log–log fit averages over: with the points sorted by x, each
/// consecutive pair's ln(y_{i}/y_{i−1}) / ln(x_{i}/x_{i−1}), skipping pairs of equal x. Every x, y > 0.
std::vector<double> loglog_local_slopes(const std::vector<double>& x, const std::vector<double>& y);

// --- Sample summaries (Boost.Math's univariate statistics) -------------------------------------

/// The sample median (the mean of the two middle values for an even count); needs n ≥ 1.
double median(std::vector<double> sample);
/// The standard error of ln(mean_a / mean_b) from two printed summaries, mean ± sd over n runs each
/// (independent samples), by the delta method: √(sd_a²/(n_a·mean_a²) + sd_b²/(n_b·mean_b²)). Used where
/// a paper's table prints mean ± sd and its ratio is the effect that counts. Means > 0, sd ≥ 0, n ≥ 1.
double log_ratio_std_error(double mean_a, double sd_a, double n_a, double mean_b, double sd_b, double n_b);
/// The interquartile range Q₃ − Q₁ (Boost's definition: medians of the lower and upper halves);
/// for one or two values, the whole range max − min.
double interquartile_range(std::vector<double> sample);


// --- Resampling -------------------------------------------------------------------------------------

/// The sample quantile at level q ∈ [0, 1], interpolating linearly between order statistics
/// (Hyndman & Fan's type 7, numpy.quantile's default). Throws std::invalid_argument for an empty
/// sample, a NaN in it, or q outside [0, 1].
double quantile(std::vector<double> sample, double q);

/// The percentile bootstrap (Efron) of a statistic of n paired observations: `resamples` times, draw
/// n indices from 0 … n−1 with replacement (Rng(seed, stream)), evaluate `statistic` on them, and
/// return the (α/2, 1 − α/2) sample quantiles of those values. The caller's statistic reads its own
/// data through the indices, so several samples measured on the same units resample together.
/// Statistics that come out NaN (a resample without the cases it needs) are dropped; throws
/// std::invalid_argument when n = 0, resamples < 2, or fewer than two values remain.
Interval bootstrap_interval(std::size_t n, const std::function<double(const std::vector<std::size_t>&)>& statistic,
                            int resamples, std::uint64_t seed, std::uint64_t stream = 0, double alpha = 0.05);

}  // namespace sparseact::stats
