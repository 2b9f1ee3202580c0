#include <sparseact/core/stats.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/statistics/univariate_statistics.hpp>

namespace sparseact::stats {
namespace {

void require_probability(double p, const char* what) {
  if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument(std::string(what) + ": p must lie in (0, 1)");
}

}  // namespace

double normal_quantile(double p) {
  require_probability(p, "normal_quantile");
  return boost::math::quantile(boost::math::normal_distribution<double>(), p);
}

double normal_cdf(double x) { return boost::math::cdf(boost::math::normal_distribution<double>(), x); }

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

double interquartile_range(std::vector<double> sample) {
  if (sample.empty()) throw std::invalid_argument("interquartile_range: empty sample");
  // Boost needs three values; below that the whole range is the honest spread.
  if (sample.size() < 3) return std::abs(sample.back() - sample.front());
  return boost::math::statistics::interquartile_range(sample);
}

}  // namespace sparseact::stats
