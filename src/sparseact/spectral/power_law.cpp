#include <sparseact/spectral/power_law.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sparseact::spectral {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

/// The positive values, ascending, with the start of each run of equal values.
struct SortedValues {
  std::vector<double> x;
  std::vector<long double> log_x;     ///< ln x_i in extended precision (see suffix below)
  std::vector<long double> suffix;    ///< Σ_{j ≥ i} ln x_j, suffix[m] = 0
  std::vector<std::size_t> starts;    ///< index of the first of each distinct value, then m
};

SortedValues sorted_positive(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !(v > 0) || !std::isfinite(v); }),
               values.end());
  std::sort(values.begin(), values.end());
  SortedValues s;
  const std::size_t m = values.size();
  s.x = std::move(values);
  s.log_x.resize(m);
  s.suffix.assign(m + 1, 0.0L);
  // Σ ln(x_i/x_min) = suffix[k] − n ln x_min loses the digits the two large sums share; in long double
  // (64-bit mantissa on x86) that loss stays below double rounding, so α̂ matches a direct double sum
  // of ln(x_i/x_min) (the `powerlaw` package's) to ~1e-15 relative.
  for (std::size_t i = 0; i < m; ++i) s.log_x[i] = std::log(static_cast<long double>(s.x[i]));
  for (std::size_t i = m; i-- > 0;) s.suffix[i] = s.suffix[i + 1] + s.log_x[i];
  for (std::size_t i = 0; i < m; ++i)
    if (i == 0 || s.x[i] != s.x[i - 1]) s.starts.push_back(i);
  s.starts.push_back(m);
  return s;
}

/// α̂, its SE and D for the tail x[k..m) above x_min (x[k] is the first value ≥ x_min; x_min itself need
/// not be one of the values). Not valid when every tail value equals x_min, or the tail is empty.
PowerLawTail tail_from(const SortedValues& s, std::size_t k, double x_min, KsSide ks) {
  const std::size_t m = s.x.size(), n = m - k;
  PowerLawTail t;
  t.alpha = t.alpha_se = t.D = nan;
  t.x_min = x_min;
  t.n_tail = n;
  const long double log_xmin = std::log(static_cast<long double>(x_min));
  const long double sum_log_ratio = s.suffix[k] - static_cast<long double>(n) * log_xmin;
  if (n == 0 || !(sum_log_ratio > 0)) return t;
  const double alpha = static_cast<double>(1.0L + static_cast<long double>(n) / sum_log_ratio);
  t.valid = true;
  t.alpha = alpha;
  t.alpha_se = (alpha - 1) / std::sqrt(static_cast<double>(n));
  // D over the distinct tail values u: P(u) = 1 − (u/x_min)^{1−α} = −expm1((1 − α) ln(u/x_min)) against
  // F_n(u−) = (values below u)/n, and for the two-sided distance also F_n(u).
  const double inv_n = 1.0 / static_cast<double>(n);
  double D = 0;
  for (std::size_t i = k; i < m;) {
    std::size_t end = i + 1;
    while (end < m && s.x[end] == s.x[i]) ++end;
    const double P = -std::expm1((1 - alpha) * static_cast<double>(s.log_x[i] - log_xmin));
    D = std::max(D, std::abs(P - static_cast<double>(i - k) * inv_n));
    if (ks == KsSide::two_sided) D = std::max(D, std::abs(P - static_cast<double>(end - k) * inv_n));
    i = end;
  }
  t.D = D;
  return t;
}

}  // namespace

PowerLawTail power_law_tail_at(std::vector<double> values, double x_min, KsSide ks) {
  const SortedValues s = sorted_positive(std::move(values));
  if (!(x_min > 0)) {
    PowerLawTail t;
    t.alpha = t.alpha_se = t.D = nan;
    t.x_min = x_min;
    return t;
  }
  const auto k = static_cast<std::size_t>(std::lower_bound(s.x.begin(), s.x.end(), x_min) - s.x.begin());
  return tail_from(s, k, x_min, ks);
}

PowerLawTail fit_power_law_tail(std::vector<double> values, const PowerLawOptions& options) {
  const SortedValues s = sorted_positive(std::move(values));
  const std::size_t m = s.x.size(), min_tail = std::max<std::size_t>(options.min_tail, 2);
  PowerLawTail best;
  best.alpha = best.alpha_se = best.x_min = best.D = nan;
  // Distinct values but the largest (starts holds them and then m): d < starts.size() − 2.
  for (std::size_t d = 0; d + 2 < s.starts.size(); ++d) {
    if (m - s.starts[d] < min_tail) break;  // tails only shrink from here
    const PowerLawTail t = tail_from(s, s.starts[d], s.x[s.starts[d]], options.ks);
    ++best.candidates;
    if (!best.valid || t.D < best.D) {
      const std::size_t tried = best.candidates;
      best = t;
      best.candidates = tried;
    }
  }
  return best;
}

}  // namespace sparseact::spectral
