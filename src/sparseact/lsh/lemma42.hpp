#pragma once
// Lemma 4.2 of paper 000 measured over a grid of (d, k, ε, C): per grid point, independent trials of
// lsh/bucket_geometry's bucket_trial (a Haar k-subspace Γ, a Euclidean LSH with K = C·k hashes of width
// ε, uniform samples on Γ), summarised as the lemma states it; and the exponent β of the bucket count.
//
// Lemma 4.2: with probability ≥ 0.9, (1) every bucket's part of Γ has diameter ≤ ε/c, (2) at most
// (2√d/ε)^{O(k)} buckets meet Γ. The constant c is fixed before the run: the proof gives
// diameter ≤ ε√K/σ_min(AU) (ERRATA 000: √K, not √k), which is ≤ ε/c iff σ_min(AU) ≥ c√K; AU is a K × k
// matrix of i.i.d. N(0, 1) (U orthonormal, a_i ~ N(0, I_d)), whose σ_min concentrates at √K − √k
// (Gordon's inequality E σ_min ≥ √K − √k; the Marchenko–Pastur edge): c = 1 − √(k/K) = 1 − 1/√C, the
// typical value. Eq. (3) with an explicit constant (Davidson–Szarek 2001, Thm II.13):
// P[σ_min ≥ √K − √k − t] ≥ 1 − e^{−t²/2}, and t = √(2 ln 10) makes it ≥ 0.9.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/device.hpp>
#include <sparseact/lsh/bucket_geometry.hpp>

namespace sparseact::lsh {

/// c = 1 − 1/√C: the diameter statement's constant for K = C·k hashes.
double diameter_constant(int C);

/// √K − √k − √(2 ln 10): σ_min(AU) exceeds it with probability ≥ 0.9 (eq. (3), Davidson–Szarek).
double sigma_min_bound_90(Eigen::Index K, Eigen::Index k);

/// One grid point: ambient dimension d, subspace dimension k, width ε, K = C·k hashes.
struct BucketGridPoint {
  int d = 0, k = 0, C = 0;
  double eps = 0;
};

/// The trials of one grid point as Lemma 4.2 states them. Diameters are exact (bucket polytopes) for
/// k ≤ 3, from samples (a lower bound) otherwise.
struct BucketPointSummary {
  std::vector<BucketTrial> trials;
  double c = 0;                  ///< diameter_constant(C)
  double eps_over_c = 0;         ///< ε/c, the lemma's diameter bound
  long small = 0;                ///< trials in which every hit bucket has diameter ≤ ε/c
  double max_diameter = 0;       ///< over the trials
  double median_diameter = 0;    ///< upper median over the trials
  double median_sigma_min = 0;   ///< upper median of σ_min(AU) over the trials
  double buckets_mean = 0;       ///< mean number of buckets hit
  double log_buckets_mean = 0;   ///< mean of log(buckets hit)
  double singleton_fraction = 0; ///< mean fraction of samples alone in their bucket (Good–Turing unseen mass)
  double beta_point = 0;         ///< log_buckets_mean / (k log(2√d/ε)): this point's exponent
  // Always-true statements, worst over the trials:
  double worst_bound_ratio = 0;  ///< max of (bucket diameter)/(ε√K/σ_min(AU)), sampled and (k ≤ 3) exact: ≤ 1
  double worst_exact_minus_sampled = std::numeric_limits<double>::infinity();  ///< min of exact − sampled (k ≤ 3): ≥ 0
  double worst_count_excess = -std::numeric_limits<double>::infinity();  ///< max of log(buckets) − log(arrangement bound): ≤ 0
  long eq3_hits = 0;             ///< trials with σ_min(AU) ≥ sigma_min_bound_90(K, k)
  std::size_t fingerprint_collisions = 0;
};

/// Trial t of `at`: bucket_trial with K = C·k from stream_id(stream, t), hashed on `device` (a sweep's
/// work item: lsh_buckets runs them on many ranks).
BucketTrial bucket_grid_trial(const BucketGridPoint& at, int t, Eigen::Index samples, std::uint64_t seed, std::uint64_t stream,
                              Device device = Device::cpu);
/// The grid point's summary from its trials, read in trial order.
BucketPointSummary summarize_grid_point(const BucketGridPoint& at, std::vector<BucketTrial> trials, Eigen::Index samples);

/// `trials` trials of `at`, trial t from stream_id(stream, t), hashed on `device`; `trial_done` (optional)
/// is called after each. Deterministic for (seed, stream), any thread count.
BucketPointSummary bucket_grid_point(const BucketGridPoint& at, int trials, Eigen::Index samples, std::uint64_t seed,
                                     std::uint64_t stream, Device device = Device::cpu,
                                     const std::function<void()>& trial_done = {});

/// The exponent of the bucket count: least squares of mean log #buckets on x = k·log(2√d/ε), through
/// the origin (the lemma's form (2√d/ε)^{βk}) and with an intercept.
struct BucketExponent {
  double beta = 0, beta_se = 0;  ///< through the origin; NaN without a point with x ≠ 0 (SE: with fewer than 2 points)
  double slope = 0, slope_se = 0, intercept = 0;  ///< with an intercept; NaN without 3 points and 2 distinct x
  std::size_t points = 0;
};
BucketExponent bucket_count_exponent(const std::vector<double>& x, const std::vector<double>& log_buckets);

}  // namespace sparseact::lsh
