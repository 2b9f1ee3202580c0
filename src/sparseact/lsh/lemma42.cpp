#include <sparseact/lsh/lemma42.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>

namespace sparseact::lsh {

double diameter_constant(int C) {
  if (C < 1) throw std::invalid_argument("diameter_constant: needs C ≥ 1");
  return 1.0 - 1.0 / std::sqrt(static_cast<double>(C));
}

double sigma_min_bound_90(Eigen::Index K, Eigen::Index k) {
  const double t90 = std::sqrt(2 * std::log(10.0));  // e^{−t²/2} = 1/10
  return std::sqrt(double(K)) - std::sqrt(double(k)) - t90;
}

BucketTrial bucket_grid_trial(const BucketGridPoint& at, int t, Eigen::Index samples, std::uint64_t seed, std::uint64_t stream,
                              Device device) {
  return bucket_trial(at.d, at.k, at.C * at.k, at.eps, samples, seed, stream_id(stream, static_cast<std::uint64_t>(t)), device);
}

BucketPointSummary summarize_grid_point(const BucketGridPoint& at, std::vector<BucketTrial> trials, Eigen::Index samples) {
  if (trials.empty() || samples < 1) throw std::invalid_argument("summarize_grid_point: needs at least one trial and one sample");
  const int K = at.C * at.k;
  const bool exact = at.k <= 3;  // bucket polytopes are implemented for k ≤ 3
  const double n = static_cast<double>(trials.size());
  BucketPointSummary s;
  s.c = diameter_constant(at.C);
  s.eps_over_c = at.eps / s.c;
  const double eq3 = sigma_min_bound_90(K, at.k);
  std::vector<double> diams, sigs;
  for (const BucketTrial& tr : trials) {
    const double diam = exact ? tr.diam_exact : tr.diam_sampled;
    s.small += diam <= s.eps_over_c;
    s.max_diameter = std::max(s.max_diameter, diam);
    diams.push_back(diam);
    sigs.push_back(tr.sigma_min);
    s.worst_bound_ratio = std::max(s.worst_bound_ratio, std::max(tr.diam_sampled, exact ? tr.diam_exact : 0.0) / tr.bound);
    if (exact) s.worst_exact_minus_sampled = std::min(s.worst_exact_minus_sampled, tr.exact_minus_sampled);
    s.worst_count_excess = std::max(s.worst_count_excess, std::log(double(tr.buckets)) - tr.log_arrangement);
    s.eq3_hits += tr.sigma_min >= eq3;
    s.fingerprint_collisions += tr.fingerprint_collisions;
    s.log_buckets_mean += std::log(double(tr.buckets)) / n;
    s.buckets_mean += double(tr.buckets) / n;
    s.singleton_fraction += double(tr.singletons) / double(samples) / n;
  }
  s.trials = std::move(trials);
  std::sort(diams.begin(), diams.end());
  std::sort(sigs.begin(), sigs.end());
  s.median_diameter = diams[diams.size() / 2];
  s.median_sigma_min = sigs[sigs.size() / 2];
  const double scale = 2 * std::sqrt(double(at.d)) / at.eps;
  s.beta_point = s.log_buckets_mean / (at.k * std::log(scale));
  return s;
}

BucketPointSummary bucket_grid_point(const BucketGridPoint& at, int trials, Eigen::Index samples, std::uint64_t seed,
                                     std::uint64_t stream, Device device, const std::function<void()>& trial_done) {
  if (trials < 1 || samples < 1) throw std::invalid_argument("bucket_grid_point: needs at least one trial and one sample");
  std::vector<BucketTrial> all;
  for (int t = 0; t < trials; ++t) {
    all.push_back(bucket_grid_trial(at, t, samples, seed, stream, device));
    if (trial_done) trial_done();
  }
  return summarize_grid_point(at, std::move(all), samples);
}

BucketExponent bucket_count_exponent(const std::vector<double>& x, const std::vector<double>& log_buckets) {
  if (x.size() != log_buckets.size()) throw std::invalid_argument("bucket_count_exponent: x and log #buckets differ in length");
  // Through the origin with at least one x ≠ 0; with an intercept with three points and two distinct x
  // (no standard error from two). NaN where the grid gives too little.
  const bool origin_ok = std::any_of(x.begin(), x.end(), [](double v) { return v != 0; });
  const bool line_ok = x.size() > 2 && std::any_of(x.begin(), x.end(), [&](double v) { return v != x[0]; });
  const stats::LinearFit origin = origin_ok ? stats::linear_fit_through_origin(x, log_buckets) : stats::LinearFit{};
  const stats::LinearFit line = line_ok ? stats::linear_fit(x, log_buckets) : stats::LinearFit{};
  BucketExponent e;
  e.points = x.size();
  e.beta = origin_ok ? origin.slope : NAN;
  e.beta_se = x.size() > 1 ? origin.slope_se : NAN;
  e.slope = line_ok ? line.slope : NAN;
  e.slope_se = line_ok ? line.slope_se : NAN;
  e.intercept = line_ok ? line.intercept : NAN;
  return e;
}

}  // namespace sparseact::lsh
