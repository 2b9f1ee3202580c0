#include <sparseact/spectral/mp_fit.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/roots.hpp>
#include <fmt/format.h>

#include <sparseact/core/stats.hpp>
#include <sparseact/spectral/tracy_widom.hpp>

namespace sparseact::spectral {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t min_values = 4;

void check_shape(Eigen::Index N, Eigen::Index M, const MpFitOptions& options) {
  if (N < 1 || M < 1) throw std::invalid_argument(fmt::format("Marchenko–Pastur fit: shape {}×{} is empty", N, M));
  if (!(options.spike_level > 0 && options.spike_level < 1))
    throw std::invalid_argument(fmt::format("Marchenko–Pastur fit: spike_level must be in (0, 1), got {}", options.spike_level));
  if (!(options.censor >= 0 && options.censor <= 0.45))
    throw std::invalid_argument(fmt::format("Marchenko–Pastur fit: censor must be in [0, 0.45], got {}", options.censor));
}

/// The median of MP(c, 1): TOMS 748 on the closed-form CDF (Boost.Math).
double marchenko_pastur_median(double c) {
  const double a = (1 - std::sqrt(c)) * (1 - std::sqrt(c)), b = (1 + std::sqrt(c)) * (1 + std::sqrt(c));
  auto f = [c](double x) { return marchenko_pastur_cdf(x, c) - 0.5; };
  boost::uintmax_t iterations = 200;
  const auto [lo, hi] = boost::math::tools::toms748_solve(f, a, b, f(a), f(b), boost::math::tools::eps_tolerance<double>(50), iterations);
  return 0.5 * (lo + hi);
}

/// Positive eigenvalues, ascending, divided by n = max(N, M): the ν of MP(c, σ²).
std::vector<double> normalised(const Eigen::VectorXd& eigenvalues, double n) {
  std::vector<double> nu;
  nu.reserve(static_cast<std::size_t>(eigenvalues.size()));
  for (double l : eigenvalues)
    if (l > 0 && std::isfinite(l)) nu.push_back(l / n);
  std::sort(nu.begin(), nu.end());
  return nu;
}

/// Edges, spike counts, KS distance and p-value of `nu` (ascending; the first `bulk` compared) against
/// MP(c, σ²); n = max(N, M) converts back to λ units.
void compare(MpComparison& r, const std::vector<double>& nu, std::size_t bulk, double n, double threshold_unit) {
  const double root_c = std::sqrt(r.c);
  r.lambda_minus = n * r.sigma2 * (1 - root_c) * (1 - root_c);
  r.lambda_plus = n * r.sigma2 * (1 + root_c) * (1 + root_c);
  r.tw_threshold = r.sigma2 * threshold_unit;
  const double tau_nu = r.tw_threshold / n, edge_nu = r.lambda_plus / n;
  r.spikes = static_cast<std::size_t>(nu.end() - std::upper_bound(nu.begin(), nu.end(), tau_nu));
  r.above_edge = static_cast<std::size_t>(nu.end() - std::upper_bound(nu.begin(), nu.end(), edge_nu));
  r.bulk = bulk;
  // KS distance of the ESD of nu[0..bulk) (ascending): F is continuous (no atom at c ≤ 1), so the supremum
  // sits at a value v, against F_n(v−) or F_n(v) (esd.hpp's rule, with the closed-form CDF).
  const double inv = 1.0 / static_cast<double>(bulk);
  double D = 0;
  for (std::size_t i = 0; i < bulk;) {
    std::size_t j = i + 1;
    while (j < bulk && nu[j] == nu[i]) ++j;
    const double F = marchenko_pastur_cdf(nu[i], r.c, r.sigma2);
    D = std::max({D, std::abs(static_cast<double>(i) * inv - F), std::abs(static_cast<double>(j) * inv - F)});
    i = j;
  }
  r.ks = D;
  r.ks_p_value = stats::kolmogorov_smirnov_p_value(std::clamp(D, 0.0, 1.0), bulk);
}

/// The Type II censored maximum-likelihood σ² of MP(c, σ²) on x[0..k) (ascending): r = s = ⌊q k⌋ values
/// at each end enter through their count. NaN when no σ² keeps the uncensored values inside the support
/// even after censoring more.
double censored_mle(const std::vector<double>& x, std::size_t k, double c, double q) {
  const double a1 = (1 - std::sqrt(c)) * (1 - std::sqrt(c)), b1 = (1 + std::sqrt(c)) * (1 + std::sqrt(c));
  for (std::size_t cut = static_cast<std::size_t>(std::floor(q * static_cast<double>(k))); 2 * cut + 2 <= k; ++cut) {
    const std::size_t r = cut, s = cut;
    const double lo_x = x[r], hi_x = x[k - s - 1];
    // Every uncensored value inside (σ² a₁, σ² b₁): σ² > hi_x/b₁ and σ² < lo_x/a₁.
    const double t_lo = std::log(hi_x / b1);
    double t_hi = a1 > 0 ? std::log(lo_x / a1) : t_lo + std::log(1e4);
    t_hi = std::min(t_hi, t_lo + std::log(1e4));
    if (!(t_hi > t_lo)) continue;  // a fluctuation beyond both edges: censor one more at each end
    const double huge = std::numeric_limits<double>::max() / 4;
    auto negative_log_likelihood = [&](double t) {
      const double sigma2 = std::exp(t);
      double ll = 0;
      for (std::size_t i = r; i < k - s; ++i) {
        const double y = x[i] / sigma2;
        const double g = (b1 - y) * (y - a1);
        if (!(g > 0)) return huge;
        ll += 0.5 * std::log(g) - std::log(y);  // ln f₁(y) + ln(2πc), the constant dropped
      }
      ll -= static_cast<double>(k - r - s) * t;  // f(x; σ²) = f₁(x/σ²)/σ²
      if (r > 0) {
        const double F = marchenko_pastur_cdf(lo_x / sigma2, c);
        if (!(F > 0)) return huge;
        ll += static_cast<double>(r) * std::log(F);
      }
      if (s > 0) {
        const double S = 1.0 - marchenko_pastur_cdf(hi_x / sigma2, c);
        if (!(S > 0)) return huge;
        ll += static_cast<double>(s) * std::log(S);
      }
      return -ll;
    };
    // A coarse grid finds the basin (the likelihood falls to 0 at both ends of the interval), Brent
    // polishes it between the grid neighbours of the best point.
    constexpr int grid = 24;
    const double h = (t_hi - t_lo) / grid;
    int best = 1;
    double best_value = huge;
    for (int i = 1; i < grid; ++i) {
      const double v = negative_log_likelihood(t_lo + i * h);
      if (v < best_value) best_value = v, best = i;
    }
    if (!(best_value < huge)) continue;
    boost::uintmax_t iterations = 200;
    const auto [t, value] = boost::math::tools::brent_find_minima(negative_log_likelihood, t_lo + (best - 1) * h,
                                                                   t_lo + (best + 1) * h, 52, iterations);
    (void)value;
    return std::exp(t);
  }
  return nan;
}

}  // namespace

double marchenko_pastur_cdf(double x, double c, double sigma2) {
  if (!(c > 0 && c <= 1)) throw std::invalid_argument(fmt::format("marchenko_pastur_cdf: c must be in (0, 1], got {}", c));
  const double y = x / sigma2, rc = std::sqrt(c);
  const double a = (1 - rc) * (1 - rc), b = (1 + rc) * (1 + rc);
  if (!(y > a)) return 0.0;
  if (y >= b) return 1.0;
  const double R = std::sqrt((b - y) * (y - a));
  const double s1 = std::clamp((y - 1 - c) / (2 * rc), -1.0, 1.0);
  const double s2 = std::clamp(((1 + c) * y - (1 - c) * (1 - c)) / (2 * rc * y), -1.0, 1.0);
  const double F = (R + (1 + c) * std::asin(s1) - (1 - c) * std::asin(s2) + c * M_PI) / (2 * M_PI * c);
  return std::clamp(F, 0.0, 1.0);
}

double tw_spike_threshold_unit(Eigen::Index N, Eigen::Index M, double level) {
  const double big = static_cast<double>(std::max(N, M)), small = static_cast<double>(std::min(N, M));
  const WishartEdges e = wishart_edges(big, small);
  return e.mu_max + e.sigma_max * tracy_widom1_quantile(1.0 - level);
}

MpComparison marchenko_pastur_own(const Eigen::VectorXd& eigenvalues, Eigen::Index N, Eigen::Index M,
                                  const MpFitOptions& options) {
  check_shape(N, M, options);
  const double n = static_cast<double>(std::max(N, M));
  MpComparison r;
  r.c = static_cast<double>(std::min(N, M)) / n;
  const std::vector<double> nu = normalised(eigenvalues, n);
  r.sigma2 = nu.empty() ? 0.0 : eigenvalues.sum() / (static_cast<double>(N) * static_cast<double>(M));
  if (nu.size() < min_values || !(r.sigma2 > 0)) {
    r.lambda_minus = r.lambda_plus = r.tw_threshold = r.ks = r.ks_p_value = nan;
    return r;
  }
  r.valid = true;
  compare(r, nu, nu.size(), n, tw_spike_threshold_unit(N, M, options.spike_level));
  return r;
}

MpComparison marchenko_pastur_fit(const Eigen::VectorXd& eigenvalues, Eigen::Index N, Eigen::Index M,
                                  const MpFitOptions& options) {
  check_shape(N, M, options);
  const double n = static_cast<double>(std::max(N, M));
  MpComparison r;
  r.c = static_cast<double>(std::min(N, M)) / n;
  const std::vector<double> nu = normalised(eigenvalues, n);
  r.sigma2 = r.lambda_minus = r.lambda_plus = r.tw_threshold = r.ks = r.ks_p_value = nan;
  if (nu.size() < min_values) return r;
  const double threshold_unit = tw_spike_threshold_unit(N, M, options.spike_level);

  // Step 1: the median, which spikes above it do not move.
  const std::size_t m = nu.size();
  const double median = m % 2 ? nu[m / 2] : 0.5 * (nu[m / 2 - 1] + nu[m / 2]);
  double sigma2 = median / marchenko_pastur_median(r.c);
  std::size_t bulk = 0, previous = m + 1;
  r.converged = false;
  for (r.iterations = 0; r.iterations < options.max_iterations; ++r.iterations) {
    // Step 2: the bulk below the Tracy–Widom threshold τ(σ²), in ν units τ/n.
    const double tau_nu = sigma2 * threshold_unit / n;
    bulk = static_cast<std::size_t>(std::upper_bound(nu.begin(), nu.end(), tau_nu) - nu.begin());
    if (bulk == previous) {
      r.converged = true;
      break;
    }
    if (bulk < min_values) return r;
    // Step 3: the censored MLE on it.
    const double next = censored_mle(nu, bulk, r.c, options.censor);
    if (!std::isfinite(next)) return r;
    sigma2 = next;
    previous = bulk;
  }
  if (!r.converged)  // the last refit moved σ²: the bulk is the one below its threshold
    bulk = static_cast<std::size_t>(std::upper_bound(nu.begin(), nu.end(), sigma2 * threshold_unit / n) - nu.begin());
  if (bulk < min_values) return r;
  r.valid = true;
  r.sigma2 = sigma2;
  compare(r, nu, bulk, n, threshold_unit);
  return r;
}

}  // namespace sparseact::spectral
