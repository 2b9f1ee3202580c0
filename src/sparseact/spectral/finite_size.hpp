#pragma once
// Paper 001 Theorem 5 as a limit, at finite size: for K ∈ R^{n×d} with c = n/d held fixed, how far
// the mean of λ_max/λ_min⁺ (of K Kᵀ) is from ((1 + √c)/(1 − √c))², and how far the ESD of
// K Kᵀ/(dσ²) is from Marchenko–Pastur(c) (Theorem 1) in Kolmogorov–Smirnov distance.
//
// Random-matrix theory predicts the excess E[ratio] − limit to be negative (E TW₁ < 0 pulls λ_max
// below the upper edge and λ_min⁺ above the lower one) and to shrink like n^{−2/3} (the Tracy–Widom
// edge scale); the KS distance of a sample-covariance ESD shrinks like n^{−1} up to logarithms
// (Götze–Tikhomirov). The rates are fitted as power laws over n.
#include <cstdint>
#include <vector>

#include <sparseact/core/device.hpp>
#include <sparseact/core/progress.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/spectral/init.hpp>

namespace sparseact::spectral {

/// One (c, n) of the sweep: `trials` independent draws of K.
struct FiniteSizeCell {
  double c = 0;                  ///< the requested ratio n/d
  int n = 0, d = 0;              ///< d = max(2, round(n/c)); the realised ratio is n/d
  double limit = 0;              ///< ratio_limit(n/d), at the realised shape
  double ratio_mean = 0, ratio_se = 0;  ///< mean and standard error of λ_max/λ_min⁺ over the trials
  double tw_mean = 0;            ///< the ratio at the TW₁ means of both edges (wishart_ratio_interval)
  double ks_mean = 0, ks_se = 0; ///< KS distance of the ESD to MP(n/d, d·σ²)
  double excess() const { return ratio_mean - limit; }
  double tw_excess() const { return tw_mean - limit; }
};

/// One draw of K at (n, c): the sweep's work item (mp_sweep runs them on many ranks).
struct FiniteSizeTrial {
  double ratio = 0;  ///< λ_max/λ_min⁺ of K Kᵀ
  double ks = 0;     ///< KS distance of the ESD of K Kᵀ/(dσ²) to MP(n/d)
};
/// d = max(2, round(n/c)), the realised shape of the cell (n, c).
int finite_size_columns(int n, double c);
/// Trial t of the cell: K from Rng(seed, stream_id(stream, t)), its spectrum on `device`.
FiniteSizeTrial finite_size_trial(int n, double c, Init init, Distribution dist, std::uint64_t seed, std::uint64_t stream, int trial,
                                  Device device);
/// The cell from its trials, averaged in trial order.
FiniteSizeCell finite_size_cell(int n, double c, const std::vector<FiniteSizeTrial>& trials);

/// Draws K ∈ R^{n×d} trial t from Rng(seed, stream_id(stream, t)) with `init` and `dist`, takes the
/// spectrum of K Kᵀ on `device` (kkt_spectra), and averages. `progress` advances once per trial.
FiniteSizeCell finite_size_cell(int n, double c, Init init, Distribution dist, int trials, std::uint64_t seed,
                                std::uint64_t stream, Device device, Progress* progress = nullptr);

/// Exponent b of y ∝ x^b: weighted least squares of log y on log x with σ(log y) = se/y (the delta
/// method), standard errors from those σ (stats::weighted_linear_fit).
stats::LinearFit power_law_fit(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& se);

/// The convergence rates over n at one c: |excess| and the KS distance against n.
struct FiniteSizeRates {
  stats::LinearFit excess;  ///< |E ratio − limit| ∝ n^b  (Tracy–Widom: b = −2/3)
  stats::LinearFit ks;      ///< KS distance ∝ n^b        (b ≈ −1)
};
/// Needs cells at ≥ 2 distinct n (≥ 3 for a standard error that means something).
FiniteSizeRates finite_size_rates(const std::vector<FiniteSizeCell>& cells);

}  // namespace sparseact::spectral
