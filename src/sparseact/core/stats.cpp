#include <sparseact/core/stats.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <boost/math/special_functions/owens_t.hpp>
#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/non_central_t.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/statistics/univariate_statistics.hpp>
#include <fmt/format.h>

#include <sparseact/core/rng.hpp>

namespace sparseact::stats {
namespace {

void require_probability(double p, const char* what) {
  if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument(std::string(what) + ": p must lie in (0, 1)");
}

void require_alpha(double alpha, const char* what) {
  if (!(alpha > 0.0 && alpha < 1.0)) throw std::invalid_argument(fmt::format("{}: α = {} must lie in (0, 1)", what, alpha));
}

/// x and y of equal length ≥ n_min, every value finite.
void require_pairs(const std::vector<double>& x, const std::vector<double>& y, std::size_t n_min, const char* what) {
  if (x.size() != y.size())
    throw std::invalid_argument(fmt::format("{}: x and y differ in length ({} vs {})", what, x.size(), y.size()));
  if (x.size() < n_min) throw std::invalid_argument(fmt::format("{}: needs at least {} pairs, got {}", what, n_min, x.size()));
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]) || !std::isfinite(y[i]))
      throw std::invalid_argument(fmt::format("{}: pair {} is not finite (x = {}, y = {})", what, i, x[i], y[i]));
}

/// P-value of a statistic with Student-t law (ν dof) under H₀, for the alternative; t may be ±∞.
double t_p_value(double t, double nu, Alternative alternative) {
  const boost::math::students_t_distribution<double> T(nu);
  // Upper tail P(T ≥ s) through Boost's complement (no 1 − cdf cancellation).
  auto upper = [&](double s) {
    if (std::isinf(s)) return s > 0 ? 0.0 : 1.0;
    return boost::math::cdf(boost::math::complement(T, s));
  };
  switch (alternative) {
    case Alternative::less: return upper(-t);  // P(T ≤ t) = P(T ≥ −t), symmetric
    case Alternative::greater: return upper(t);
    case Alternative::two_sided: break;
  }
  return std::min(1.0, 2.0 * upper(std::abs(t)));
}

}  // namespace

double normal_quantile(double p) {
  require_probability(p, "normal_quantile");
  return boost::math::quantile(boost::math::normal_distribution<double>(), p);
}

double normal_cdf(double x) { return boost::math::cdf(boost::math::normal_distribution<double>(), x); }

double normal_pdf(double x) { return boost::math::pdf(boost::math::normal_distribution<double>(), x); }

double owens_t(double h, double a) { return boost::math::owens_t(h, a); }

double student_t_quantile(double p, double nu) {
  require_probability(p, "student_t_quantile");
  if (!(nu > 0)) throw std::invalid_argument("student_t_quantile: degrees of freedom must be positive");
  return boost::math::quantile(boost::math::students_t_distribution<double>(nu), p);
}

double student_t_cdf(double t, double nu) {
  if (!(nu > 0)) throw std::invalid_argument("student_t_cdf: degrees of freedom must be positive");
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  return boost::math::cdf(boost::math::students_t_distribution<double>(nu), t);
}

double kolmogorov_sf(double x) {
  if (std::isnan(x)) throw std::invalid_argument("kolmogorov_sf: x is NaN");
  if (x <= 0) return 1.0;
  if (x < 1.18) {
    // P(K ≤ x) = √(2π)/x Σ_{k≥1} e^{−(2k−1)²π²/(8x²)}: at x < 1.18 the ratio of successive terms is
    // below e^{−π²/x²} < 1e-3, so a handful of terms reach double precision.
    const double w = -M_PI * M_PI / (8 * x * x);
    double sum = 0;
    for (int k = 1; k < 100; ++k) {
      const double term = std::exp(w * (2 * k - 1) * (2 * k - 1));
      sum += term;
      if (term <= 1e-17 * sum) break;
    }
    return 1.0 - std::sqrt(2 * M_PI) / x * sum;
  }
  // x ≥ 1.18: successive terms fall by e^{−6x²} < 1e-3.
  double sum = 0, sign = 1;
  for (int k = 1; k < 100; ++k) {
    const double term = std::exp(-2.0 * k * k * x * x);
    sum += sign * term;
    if (term <= 1e-17 * sum) break;
    sign = -sign;
  }
  return std::clamp(2 * sum, 0.0, 1.0);
}

double kolmogorov_smirnov_p_value(double D, std::size_t n) {
  if (n == 0) throw std::invalid_argument("kolmogorov_smirnov_p_value: n must be ≥ 1");
  if (!(D >= 0 && D <= 1)) throw std::invalid_argument(fmt::format("kolmogorov_smirnov_p_value: D must be in [0, 1], got {}", D));
  const double rn = std::sqrt(static_cast<double>(n));
  return kolmogorov_sf((rn + 0.12 + 0.11 / rn) * D);
}

double chi_squared_quantile(double p, double k) {
  require_probability(p, "chi_squared_quantile");
  if (!(k > 0)) throw std::invalid_argument("chi_squared_quantile: degrees of freedom must be positive");
  return boost::math::quantile(boost::math::chi_squared_distribution<double>(k), p);
}

// --- RunningMean ------------------------------------------------------------------------------------

void RunningMean::push(double x) {
  ++n_;
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (x - mean_);
}

double RunningMean::variance() const { return n_ > 1 ? m2_ / static_cast<double>(n_ - 1) : 0.0; }

double RunningMean::std_error() const { return n_ > 0 ? std::sqrt(variance() / static_cast<double>(n_)) : 0.0; }

double RunningMean::half_width(double alpha) const {
  if (n_ < 2) return std::numeric_limits<double>::infinity();
  return student_t_quantile(1 - alpha / 2, static_cast<double>(n_ - 1)) * std_error();
}

Interval RunningMean::interval(double alpha) const {
  const double hw = half_width(alpha);
  return {mean_ - hw, mean_ + hw};
}

// --- StoppingRule -----------------------------------------------------------------------------------

void StoppingRule::validate() const {
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("stopping rule: alpha must lie in (0, 1)");
  if (!(abs_tol >= 0) || !(rel_tol >= 0)) throw std::invalid_argument("stopping rule: tolerances must be ≥ 0");
}

bool StoppingRule::satisfied(const RunningMean& m, double offset) const {
  if (m.count() < std::max<std::int64_t>(2, min_samples)) return false;
  return m.half_width(alpha) <= std::max(abs_tol, rel_tol * std::abs(offset + m.mean()));
}

bool StoppingRule::done(const RunningMean& m, double offset) const {
  return m.count() >= std::max({std::int64_t{2}, min_samples, max_samples}) || satisfied(m, offset);
}

// --- Sample summaries ----------------------------------------------------------------------------

double median(std::vector<double> sample) {
  if (sample.empty()) throw std::invalid_argument("median: empty sample");
  return boost::math::statistics::median(sample);
}

double log_ratio_std_error(double mean_a, double sd_a, double n_a, double mean_b, double sd_b, double n_b) {
  if (!(mean_a > 0) || !(mean_b > 0) || !(sd_a >= 0) || !(sd_b >= 0) || !(n_a >= 1) || !(n_b >= 1))
    throw std::invalid_argument("log_ratio_std_error: needs means > 0, sd ≥ 0 and n ≥ 1");
  const double ra = sd_a / mean_a, rb = sd_b / mean_b;
  return std::sqrt(ra * ra / n_a + rb * rb / n_b);
}

double interquartile_range(std::vector<double> sample) {
  if (sample.empty()) throw std::invalid_argument("interquartile_range: empty sample");
  // Boost needs three values; below that the whole range is the honest spread.
  if (sample.size() < 3) return std::abs(sample.back() - sample.front());
  return boost::math::statistics::interquartile_range(sample);
}

// --- Resampling ------------------------------------------------------------------------------------

double quantile(std::vector<double> sample, double q) {
  if (sample.empty()) throw std::invalid_argument("quantile: empty sample");
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("quantile: the level must lie in [0, 1]");
  for (double x : sample)
    if (std::isnan(x)) throw std::invalid_argument("quantile: NaN in the sample");
  // Type 7: h = (n − 1) q, x_⌊h⌋ + (h − ⌊h⌋)(x_⌊h⌋+1 − x_⌊h⌋) on the order statistics.
  const double h = (double(sample.size()) - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  std::nth_element(sample.begin(), sample.begin() + lo, sample.end());
  const double x_lo = sample[lo];
  if (lo + 1 >= sample.size()) return x_lo;
  const double x_hi = *std::min_element(sample.begin() + lo + 1, sample.end());
  return x_lo + (h - double(lo)) * (x_hi - x_lo);
}

Interval bootstrap_interval(std::size_t n, const std::function<double(const std::vector<std::size_t>&)>& statistic,
                            int resamples, std::uint64_t seed, std::uint64_t stream, double alpha) {
  if (n == 0) throw std::invalid_argument("bootstrap_interval: no observations");
  if (resamples < 2) throw std::invalid_argument("bootstrap_interval: need at least two resamples");
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("bootstrap_interval: α must lie in (0, 1)");
  Rng rng(seed, stream);
  std::vector<std::size_t> idx(n);
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(resamples));
  for (int b = 0; b < resamples; ++b) {
    for (auto& i : idx) i = static_cast<std::size_t>(rng.below(n));
    const double v = statistic(idx);
    if (!std::isnan(v)) values.push_back(v);
  }
  if (values.size() < 2) throw std::invalid_argument("bootstrap_interval: fewer than two resamples gave a value");
  return {quantile(values, alpha / 2), quantile(std::move(values), 1 - alpha / 2)};
}

// --- Binomial intervals -------------------------------------------------------------------------------

namespace {

void require_binomial(std::int64_t k, std::int64_t n, double alpha, const char* what) {
  if (n < 1) throw std::invalid_argument(fmt::format("{}: n = {} trials; need n ≥ 1", what, n));
  if (k < 0 || k > n) throw std::invalid_argument(fmt::format("{}: k = {} successes; need 0 ≤ k ≤ n = {}", what, k, n));
  require_alpha(alpha, what);
}

}  // namespace

Interval wilson_interval(std::int64_t k, std::int64_t n, double alpha) {
  require_binomial(k, n, alpha, "wilson_interval");
  // z = Φ⁻¹(1 − α/2) as the upper α/2 point (Boost's complement: exact for tiny α, where 1 − α/2
  // would round). Centre and half-width in the form of Wilson (1927) / statsmodels' proportion_confint:
  //   (p̂ + z²/2n) / (1 + z²/n) ± z/(1 + z²/n) · √(p̂(1 − p̂)/n + z²/4n²).
  const double z = boost::math::quantile(boost::math::complement(boost::math::normal_distribution<double>(), alpha / 2));
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(k) / nn, z2n = z * z / nn;
  const double centre = (p + z2n / 2) / (1 + z2n);
  const double half = z / (1 + z2n) * std::sqrt(p * (1 - p) / nn + z2n / (4.0 * nn));
  // The ends are 0 at k = 0 and 1 at k = n exactly; rounding must not move them past.
  return {k == 0 ? 0.0 : std::max(0.0, centre - half), k == n ? 1.0 : std::min(1.0, centre + half)};
}

Interval clopper_pearson_interval(std::int64_t k, std::int64_t n, double alpha) {
  require_binomial(k, n, alpha, "clopper_pearson_interval");
  // Clopper & Pearson (1934): lo = B⁻¹(α/2; k, n − k + 1), hi = B⁻¹(1 − α/2; k + 1, n − k), the
  // upper one as a complement quantile (as scipy's binomtest(...).proportion_ci(method='exact')).
  const double kk = static_cast<double>(k), nk = static_cast<double>(n - k);
  const double lo = k == 0 ? 0.0 : boost::math::quantile(boost::math::beta_distribution<double>(kk, nk + 1), alpha / 2);
  const double hi =
      k == n ? 1.0 : boost::math::quantile(boost::math::complement(boost::math::beta_distribution<double>(kk + 1, nk), alpha / 2));
  return {lo, hi};
}

// --- Tests --------------------------------------------------------------------------------------------

ChiSquaredTest chi_squared_gof(const std::vector<std::int64_t>& observed, const std::vector<double>& probabilities) {
  if (observed.size() < 2) throw std::invalid_argument("chi_squared_gof: needs at least 2 categories");
  if (observed.size() != probabilities.size())
    throw std::invalid_argument(fmt::format("chi_squared_gof: {} counts but {} probabilities", observed.size(), probabilities.size()));
  ChiSquaredTest t;
  double total_p = 0.0;
  for (std::size_t i = 0; i < observed.size(); ++i) {
    if (observed[i] < 0) throw std::invalid_argument("chi_squared_gof: a count is negative");
    if (!(probabilities[i] > 0.0) || !std::isfinite(probabilities[i])) throw std::invalid_argument("chi_squared_gof: a probability is not positive");
    t.n += observed[i];
    total_p += probabilities[i];
  }
  if (std::abs(total_p - 1.0) > 1e-9) throw std::invalid_argument(fmt::format("chi_squared_gof: probabilities sum to {}, not 1", total_p));
  if (t.n < 1) throw std::invalid_argument("chi_squared_gof: no observations");
  const double n = static_cast<double>(t.n);
  for (std::size_t i = 0; i < observed.size(); ++i) {
    const double e = n * probabilities[i], d = static_cast<double>(observed[i]) - e;
    t.statistic += d * d / e;  // Pearson (1900)
  }
  t.df = static_cast<double>(observed.size() - 1);
  t.p_value = boost::math::cdf(boost::math::complement(boost::math::chi_squared_distribution<double>(t.df), t.statistic));
  return t;
}

ChiSquaredTest chi_squared_uniform(const std::vector<std::int64_t>& observed) {
  return chi_squared_gof(observed, std::vector<double>(observed.size(), 1.0 / static_cast<double>(std::max<std::size_t>(observed.size(), 1))));
}

TTest paired_t_test(const std::vector<double>& x, const std::vector<double>& y, Alternative alternative) {
  require_pairs(x, y, 2, "paired_t_test");
  const std::size_t n = x.size();
  const double nn = static_cast<double>(n);
  // Two passes over d_i = x_i − y_i (mean, then the centred sum of squares), as scipy's ttest_rel.
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += x[i] - y[i];
  const double mean = sum / nn;
  double ss = 0;
  for (std::size_t i = 0; i < n; ++i) ss += (x[i] - y[i] - mean) * (x[i] - y[i] - mean);
  TTest r;
  r.n = n;
  r.df = nn - 1;
  r.mean_difference = mean;
  r.std_error = std::sqrt(ss / (nn - 1) / nn);
  if (r.std_error > 0) {
    r.t = mean / r.std_error;
  } else {
    // Every difference equal: no spread, so the sign of the mean decides (a zero mean is no evidence).
    r.t = mean > 0 ? std::numeric_limits<double>::infinity() : mean < 0 ? -std::numeric_limits<double>::infinity() : 0.0;
    if (mean == 0) {
      r.p_value = 1.0;
      return r;
    }
  }
  r.p_value = t_p_value(r.t, r.df, alternative);
  return r;
}

TTest welch_t_test(const std::vector<double>& x, const std::vector<double>& y, Alternative alternative) {
  if (x.size() < 2 || y.size() < 2) throw std::invalid_argument("welch_t_test: each sample needs at least two values");
  RunningMean mx, my;
  for (double v : x) mx.push(v);
  for (double v : y) my.push(v);
  const double vx = mx.variance() / double(x.size()), vy = my.variance() / double(y.size());
  TTest r;
  r.n = x.size() + y.size();
  r.mean_difference = mx.mean() - my.mean();
  r.std_error = std::sqrt(vx + vy);
  if (r.std_error == 0) {
    r.t = r.mean_difference > 0 ? std::numeric_limits<double>::infinity() : r.mean_difference < 0 ? -std::numeric_limits<double>::infinity() : 0.0;
    r.df = double(r.n) - 2;
    if (r.mean_difference == 0) return r;
    r.p_value = t_p_value(r.t, r.df, alternative);
    return r;
  }
  r.t = r.mean_difference / r.std_error;
  // Welch–Satterthwaite: (v_x + v_y)² / (v_x²/(n_x − 1) + v_y²/(n_y − 1)).
  r.df = (vx + vy) * (vx + vy) / (vx * vx / double(x.size() - 1) + vy * vy / double(y.size() - 1));
  r.p_value = t_p_value(r.t, r.df, alternative);
  return r;
}

namespace {

bool normal_df(double df) { return !(df < 1e7); }  // ∞ (or large enough that t is the normal)

/// P(T′ > x), T′ ~ noncentral t(df, ncp); the normal shifted by ncp for df = ∞.
double nct_sf(double x, double df, double ncp) {
  if (normal_df(df)) return normal_cdf(ncp - x);
  return boost::math::cdf(boost::math::complement(boost::math::non_central_t_distribution<double>(df, ncp), x));
}

double t_upper_quantile(double alpha, double df) {
  return normal_df(df) ? normal_quantile(1 - alpha) : student_t_quantile(1 - alpha, df);
}

}  // namespace

double one_sided_power(double effect, double std_error, double df, double alpha) {
  require_alpha(alpha, "one_sided_power");
  if (!(std_error >= 0) || !(df > 0) || std::isnan(effect)) throw std::invalid_argument("one_sided_power: needs se ≥ 0, df > 0");
  if (std_error == 0) return effect > 0 ? 1.0 : 0.0;
  return nct_sf(t_upper_quantile(alpha, df), df, effect / std_error);
}

Tost tost(const TTest& t, double margin, double alpha) {
  require_alpha(alpha, "tost");
  if (!(alpha < 0.5)) throw std::invalid_argument("tost: α must be < 0.5 (its interval is the 1 − 2α one)");
  if (!(margin > 0)) throw std::invalid_argument("tost: the equivalence margin must be > 0");
  Tost r;
  r.mean_difference = t.mean_difference;
  r.std_error = t.std_error;
  r.df = t.df;
  r.margin = margin;
  const double q = t_upper_quantile(alpha, t.df);
  r.interval = {t.mean_difference - q * t.std_error, t.mean_difference + q * t.std_error};
  if (t.std_error == 0) {
    r.p_value = std::abs(t.mean_difference) < margin ? 0.0 : 1.0;
    return r;
  }
  // H₀₁: θ ≤ −Δ against θ > −Δ, and H₀₂: θ ≥ Δ against θ < Δ.
  const double p_lower = t_p_value((t.mean_difference + margin) / t.std_error, t.df, Alternative::greater);
  const double p_upper = t_p_value((t.mean_difference - margin) / t.std_error, t.df, Alternative::less);
  r.p_value = std::max(p_lower, p_upper);
  return r;
}

double tost_power(double margin, double std_error, double df, double true_difference, double alpha) {
  require_alpha(alpha, "tost_power");
  if (!(margin > 0) || !(std_error >= 0) || !(df > 0)) throw std::invalid_argument("tost_power: needs Δ > 0, se ≥ 0, df > 0");
  if (std_error == 0) return std::abs(true_difference) < margin ? 1.0 : 0.0;
  const double q = t_upper_quantile(alpha, df);
  const double p1 = nct_sf(q, df, (true_difference + margin) / std_error);         // P(T′₁ > t)
  const double p2 = 1 - nct_sf(-q, df, (true_difference - margin) / std_error);    // P(T′₂ < −t)
  return std::max(0.0, p1 + p2 - 1);
}

std::size_t smallest_n_for_power(const std::function<double(std::size_t)>& power, std::size_t n0, double target,
                                 std::size_t n_max) {
  if (n0 == 0) n0 = 1;
  if (power(n0) >= target) return n0;
  std::size_t lo = n0, hi = n0;  // power(lo) < target
  while (true) {
    if (hi >= n_max) return 0;
    hi = std::min(n_max, 2 * hi);
    if (power(hi) >= target) break;
    lo = hi;
  }
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (power(mid) >= target ? hi : lo) = mid;
  }
  return hi;
}

namespace {

/// Ranks 1..n with ties given the average of the ranks they span (scipy's rankdata 'average').
std::vector<double> average_ranks(const std::vector<double>& v) {
  const std::size_t n = v.size();
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(n);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && v[order[j]] == v[order[i]]) ++j;
    const double r = 0.5 * static_cast<double>(i + 1 + j);  // mean of ranks i+1 … j
    for (std::size_t q = i; q < j; ++q) rank[order[q]] = r;
    i = j;
  }
  return rank;
}

}  // namespace

Spearman spearman(const std::vector<double>& x, const std::vector<double>& y, Alternative alternative) {
  require_pairs(x, y, 3, "spearman");
  const std::vector<double> a = average_ranks(x), b = average_ranks(y);
  const std::size_t n = x.size();
  const double nn = static_cast<double>(n);
  // Both rank vectors have mean (n + 1)/2 exactly.
  const double m = 0.5 * (nn + 1);
  double saa = 0, sbb = 0, sab = 0;
  for (std::size_t i = 0; i < n; ++i) saa += (a[i] - m) * (a[i] - m), sbb += (b[i] - m) * (b[i] - m), sab += (a[i] - m) * (b[i] - m);
  if (saa == 0 || sbb == 0) throw std::invalid_argument("spearman: x or y is constant, so ρ is undefined");
  Spearman r;
  r.n = n;
  r.rho = std::clamp(sab / std::sqrt(saa * sbb), -1.0, 1.0);
  // t = ρ √((n − 2)/(1 − ρ²)), written as scipy's spearmanr writes it ((1 + ρ)(1 − ρ) keeps digits near |ρ| = 1).
  const double df = nn - 2, q = (1 + r.rho) * (1 - r.rho);
  r.t = q > 0 ? r.rho * std::sqrt(df / q) : std::copysign(std::numeric_limits<double>::infinity(), r.rho);
  r.p_value = t_p_value(r.t, df, alternative);
  return r;
}

// --- Least squares -------------------------------------------------------------------------------------

Interval LinearFit::slope_interval(double alpha) const {
  require_alpha(alpha, "LinearFit::slope_interval");
  if (!(dof >= 0)) throw std::invalid_argument("LinearFit::slope_interval: negative degrees of freedom");
  if (dof == 0) return {slope, slope};
  // Upper α/2 points through Boost's complements.
  const double q = std::isinf(dof)
                       ? boost::math::quantile(boost::math::complement(boost::math::normal_distribution<double>(), alpha / 2))
                       : boost::math::quantile(boost::math::complement(boost::math::students_t_distribution<double>(dof), alpha / 2));
  const double hw = q * slope_se;
  return {slope - hw, slope + hw};
}

Interval LinearFit::prediction_interval(double x0, double alpha) const {
  require_alpha(alpha, "LinearFit::prediction_interval");
  if (!(n > 2 && sxx > 0 && std::isfinite(dof)))
    throw std::invalid_argument("LinearFit::prediction_interval: needs a linear_fit of more than 2 points");
  const double q = boost::math::quantile(boost::math::complement(boost::math::students_t_distribution<double>(dof), alpha / 2));
  const double y0 = intercept + slope * x0;
  const double hw = q * residual_sd * std::sqrt(1 + 1 / double(n) + (x0 - x_mean) * (x0 - x_mean) / sxx);
  return {y0 - hw, y0 + hw};
}

namespace {

LinearFit least_squares(const std::vector<double>& x, const std::vector<double>& y, const char* what) {
  require_pairs(x, y, 2, what);
  const std::size_t n = x.size();
  const double nn = static_cast<double>(n);
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= nn, my /= nn;
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = x[i] - mx, dy = y[i] - my;
    sxx += dx * dx, sxy += dx * dy, syy += dy * dy;
  }
  if (!(sxx > 0)) throw std::invalid_argument(fmt::format("{}: every x is equal ({}), so the slope is undefined", what, x[0]));
  LinearFit f;
  f.n = n;
  f.dof = nn - 2;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.x_mean = mx, f.sxx = sxx;
  // R² = s_xy²/(s_xx s_yy); 0 when y is constant, as scipy's linregress.
  f.r_squared = syy > 0 ? std::min(1.0, sxy / sxx * (sxy / syy)) : 0.0;
  if (n > 2) {
    // Residual variance σ̂² = RSS/(n − 2); SE(b) = σ̂/√s_xx, SE(a) = σ̂ √(1/n + x̄²/s_xx).
    double rss = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double r = (y[i] - my) - f.slope * (x[i] - mx);
      rss += r * r;
    }
    const double s2 = rss / (nn - 2);
    f.residual_sd = std::sqrt(s2);
    f.slope_se = std::sqrt(s2 / sxx);
    f.intercept_se = std::sqrt(s2 * (1 / nn + mx * mx / sxx));
  }
  return f;
}

}  // namespace

LinearFit linear_fit(const std::vector<double>& x, const std::vector<double>& y) { return least_squares(x, y, "linear_fit"); }

LinearFit linear_fit_through_origin(const std::vector<double>& x, const std::vector<double>& y) {
  require_pairs(x, y, 1, "linear_fit_through_origin");
  const std::size_t n = x.size();
  const double nn = static_cast<double>(n);
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) sxx += x[i] * x[i], sxy += x[i] * y[i], syy += y[i] * y[i];
  if (!(sxx > 0)) throw std::invalid_argument("linear_fit_through_origin: every x is 0, so the slope is undefined");
  LinearFit f;
  f.n = n;
  f.dof = nn - 1;
  f.slope = sxy / sxx;
  double rss = 0;
  for (std::size_t i = 0; i < n; ++i) rss += (y[i] - f.slope * x[i]) * (y[i] - f.slope * x[i]);
  f.r_squared = syy > 0 ? std::max(0.0, 1 - rss / syy) : 0.0;
  if (n > 1) f.slope_se = std::sqrt(rss / (nn - 1) / sxx);
  return f;
}

LinearFit weighted_linear_fit(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& sigma) {
  require_pairs(x, y, 2, "weighted_linear_fit");
  if (sigma.size() != x.size())
    throw std::invalid_argument(fmt::format("weighted_linear_fit: {} standard deviations for {} points", sigma.size(), x.size()));
  const std::size_t n = x.size();
  std::vector<double> w(n);
  double sw = 0, mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(sigma[i] > 0 && std::isfinite(sigma[i])))
      throw std::invalid_argument(fmt::format("weighted_linear_fit: σ_{} = {}; every σ must be finite and > 0", i, sigma[i]));
    w[i] = 1 / (sigma[i] * sigma[i]);
    sw += w[i], mx += w[i] * x[i], my += w[i] * y[i];
  }
  mx /= sw, my /= sw;  // weighted means x̄_w, ȳ_w
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = x[i] - mx, dy = y[i] - my;
    sxx += w[i] * dx * dx, sxy += w[i] * dx * dy, syy += w[i] * dy * dy;
  }
  if (!(sxx > 0))
    throw std::invalid_argument(fmt::format("weighted_linear_fit: every x is equal ({}), so the slope is undefined", x[0]));
  LinearFit f;
  f.n = n;
  f.dof = std::numeric_limits<double>::infinity();
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.r_squared = syy > 0 ? std::min(1.0, sxy / sxx * (sxy / syy)) : 0.0;
  // Known variances: Cov(a, b) = (Xᵀ W X)⁻¹, whose diagonal is 1/s_xx and 1/Σw + x̄_w²/s_xx.
  f.slope_se = std::sqrt(1 / sxx);
  f.intercept_se = std::sqrt(1 / sw + mx * mx / sxx);
  return f;
}

std::vector<double> loglog_local_slopes(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size())
    throw std::invalid_argument(fmt::format("loglog_local_slopes: x and y differ in length ({} vs {})", x.size(), y.size()));
  std::vector<std::pair<double, double>> pts;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0 && y[i] > 0))
      throw std::invalid_argument(fmt::format("loglog_local_slopes: point {} is (x = {}, y = {}); needs x > 0 and y > 0", i, x[i], y[i]));
    pts.push_back({x[i], y[i]});
  }
  std::sort(pts.begin(), pts.end());
  std::vector<double> local;
  for (std::size_t i = 1; i < pts.size(); ++i)
    if (pts[i].first > pts[i - 1].first) local.push_back(std::log(pts[i].second / pts[i - 1].second) / std::log(pts[i].first / pts[i - 1].first));
  return local;
}

LinearFit loglog_fit(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size())
    throw std::invalid_argument(fmt::format("loglog_fit: x and y differ in length ({} vs {})", x.size(), y.size()));
  std::vector<double> lx(x.size()), ly(y.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0 && y[i] > 0 && std::isfinite(x[i]) && std::isfinite(y[i])))
      throw std::invalid_argument(
          fmt::format("loglog_fit: point {} is (x = {}, y = {}); a power-law fit needs finite x > 0 and y > 0", i, x[i], y[i]));
    lx[i] = std::log(x[i]), ly[i] = std::log(y[i]);
  }
  return least_squares(lx, ly, "loglog_fit");
}

}  // namespace sparseact::stats
