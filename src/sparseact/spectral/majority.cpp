#include <sparseact/spectral/majority.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sparseact::spectral {

NearZeroSplit split_near_zero(const Eigen::VectorXd& eigenvalues, double threshold) {
  if (eigenvalues.size() == 0) throw std::invalid_argument("split_near_zero: no eigenvalues");
  NearZeroSplit s;
  for (Eigen::Index i = 0; i < eigenvalues.size(); ++i)
    if (eigenvalues(i) >= threshold) s.rest.push_back(eigenvalues(i));
  s.near_zero_portion = 1.0 - static_cast<double>(s.rest.size()) / static_cast<double>(eigenvalues.size());
  return s;
}

Majority majority(std::vector<double> lambda, double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) throw std::invalid_argument("majority: fraction must be in (0, 1]");
  Majority out;
  if (lambda.size() < 2) {
    out.lo = out.hi = out.ratio = NAN;
    return out;
  }
  for (double l : lambda)
    if (!(l > 0.0)) throw std::invalid_argument("majority: values must be > 0 (split off the near-zero ones first)");
  // The search runs in log₁₀ λ, where the paper draws its histograms and reads the width.
  for (double& l : lambda) l = std::log10(l);
  std::sort(lambda.begin(), lambda.end());
  const std::size_t m = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(lambda.size())));
  double best = INFINITY;
  std::size_t at = 0;
  for (std::size_t i = 0; i + m - 1 < lambda.size(); ++i)
    if (lambda[i + m - 1] - lambda[i] < best) {
      best = lambda[i + m - 1] - lambda[i];
      at = i;
    }
  out.count = m;
  out.lo = std::pow(10.0, lambda[at]);
  out.hi = std::pow(10.0, lambda[at + m - 1]);
  out.ratio = std::pow(10.0, best);
  return out;
}

double extreme_ratio(const std::vector<double>& lambda) {
  if (lambda.empty()) return NAN;
  return *std::max_element(lambda.begin(), lambda.end()) / *std::min_element(lambda.begin(), lambda.end());
}

Section84Reading read_spectrum(const Eigen::VectorXd& eigenvalues, double threshold, double fraction) {
  NearZeroSplit split = split_near_zero(eigenvalues, threshold);
  Section84Reading r;
  r.near_zero_portion = split.near_zero_portion;
  r.majority_ratio = majority(split.rest, fraction).ratio;
  r.extreme_ratio = extreme_ratio(split.rest);
  r.rest = std::move(split.rest);
  return r;
}

}  // namespace sparseact::spectral
