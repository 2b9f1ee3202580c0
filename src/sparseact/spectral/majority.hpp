#pragma once
// Paper 001 §8.4 (Figures 14–15): how the paper reads the spectrum of K Kᵀ during training.
//
// Near-zero split: eigenvalues below a threshold (10⁻³ for ViT in Fig. 14, 10⁻¹ for T5 in Fig. 15)
// are "near-zero"; their portion is compared with Theorem 5's atom 1 − d/n. The majority: the
// shortest interval of log₁₀ λ that covers ⌈0.7·m⌉ of the m non-near-zero eigenvalues ("at least
// 70%, approximately one sigma"), un-logged into the ratio 10^width within which the majority
// varies (Fig. 14i). The extreme ratio λ_max/λ_min over the same eigenvalues is Theorem 5's.
#include <cstddef>
#include <vector>

#include <Eigen/Core>

namespace sparseact::spectral {

/// Fig. 14: "we consider eigenvalues < 10⁻³ as near-zero eigenvalues".
constexpr double kNearZeroThreshold = 1e-3;
/// Fig. 14: "the shortest interval that covers at least 70% ... of eigenvalues".
constexpr double kMajorityFraction = 0.7;

struct NearZeroSplit {
  double near_zero_portion = 0;  ///< (number of λ < threshold) / (number of λ)
  std::vector<double> rest;      ///< the non-near-zero eigenvalues (λ ≥ threshold), in input order
};

/// Splits a spectrum (all n eigenvalues of K Kᵀ, zeros included) at `threshold`.
NearZeroSplit split_near_zero(const Eigen::VectorXd& eigenvalues, double threshold = kNearZeroThreshold);

/// The majority of positive values λ: the shortest interval [lo, hi] in log₁₀ λ holding
/// count = ⌈fraction·m⌉ of the m values (the first such interval from below when several tie).
struct Majority {
  double lo = 0, hi = 0;      ///< its end points, as eigenvalues
  std::size_t count = 0;      ///< values it holds
  double ratio = 0;           ///< 10^(log₁₀ hi − log₁₀ lo): the ratio within which the majority varies
};

/// Needs at least two values, all > 0; with fewer than two the ratio is NaN (nothing to span).
Majority majority(std::vector<double> lambda, double fraction = kMajorityFraction);

/// λ_max/λ_min of the values; NaN when there are none.
double extreme_ratio(const std::vector<double>& lambda);

/// One spectrum as Figures 14–15 read it.
struct Section84Reading {
  double near_zero_portion = 0;
  double majority_ratio = 0;  ///< majority(rest).ratio
  double extreme_ratio = 0;   ///< extreme_ratio(rest)
  std::vector<double> rest;   ///< the non-near-zero eigenvalues
};

Section84Reading read_spectrum(const Eigen::VectorXd& eigenvalues, double threshold = kNearZeroThreshold,
                               double fraction = kMajorityFraction);

}  // namespace sparseact::spectral
