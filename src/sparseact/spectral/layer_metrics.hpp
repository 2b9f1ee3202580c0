#pragma once
// Every per-layer quantity of issue 16 (whole-checkpoint spectral analysis) for one weight matrix
// W ∈ R^{N×M}, from the nonzero spectrum of WᵀW (the smaller Gram matrix, spectrum.hpp).
//
// Eigenvalues are reported unnormalised, as WeightWatcher does: λ_i are the eigenvalues of the smaller
// of WᵀW and W Wᵀ, so λ_max = σ_max(W)² and Σλ = ‖W‖²_F. Marchenko–Pastur sees ν = λ/max(N, M)
// (mp_fit.hpp). With the m = min(N, M) eigenvalues, rank r (those above Spectrum::rank_tol):
//
//   stable rank        Σλ / λ_max                                   (≥ 1, ≤ r)
//   norms              ‖W‖₂ = √λ_max, ‖W‖_F = √Σλ, and their log₁₀. WeightWatcher's log_spectral_norm
//                      is log₁₀ λ_max = 2 log₁₀‖W‖₂ and its log_norm log₁₀ Σλ = 2 log₁₀‖W‖_F:
//                      both are given (log10_lambda_max, log10_sum_lambda)
//   MP, own σ²         σ² = ‖W‖²_F/(N M) (paper 001 Theorem 1), λ₊ = max(N,M) σ² (1 + √c)², KS + p
//   MP, fitted σ²      σ² fitted to the bulk (mp_fit.hpp: Tracy–Widom-trimmed, censored MLE), λ₊, KS + p,
//                      and whether the bulk is MP at `mp_level` (p ≥ mp_level)
//   spikes             eigenvalues above the Tracy–Widom threshold τ(σ̂²) at `mp.spike_level`
//                      (tracy_widom.hpp; ≈ spike_level false-positive rate per pure-noise layer)
//   MP soft rank       λ₊/λ_max (fitted σ², WeightWatcher's mp_softrank; also with the own σ²)
//   power law          α, its SE, x_min, n_tail, D (power_law.hpp, Clauset–Shalizi–Newman) on the r
//                      nonzero eigenvalues; α-weighted = α log₁₀ λ_max (WeightWatcher's alpha_weighted)
//   Theorem 5          κ = λ_max/λ_min⁺ against paper 001 Theorem 5's value for an initialised (i.i.d.)
//                      layer of the same shape: the limit ((1 + √c)/(1 − √c))² and the finite-size
//                      Tracy–Widom interval at `ratio_level` (wishart_ratio_interval; c < 1 only)
//   §8.4               paper 001 §8.4's reading (majority.hpp) of the N eigenvalues of W Wᵀ (W as stored,
//                      rows = outputs, i.e. the paper's K Kᵀ with its N − r zeros): near-zero portion, the
//                      ratio within which the 70% majority varies, and the extreme ratio
//
// A degenerate layer (all zero, rank one, non-finite entries) is reported by `kind`, never by an
// exception; the quantities it has no value for are NaN (the fits' `valid` flags say the same).
#include <cstddef>

#include <Eigen/Core>

#include <sparseact/spectral/majority.hpp>
#include <sparseact/spectral/mp_fit.hpp>
#include <sparseact/spectral/power_law.hpp>
#include <sparseact/spectral/spectrum.hpp>

namespace sparseact::spectral {

enum class SpectrumKind {
  regular,     ///< rank ≥ 2
  rank_one,    ///< one nonzero eigenvalue: norms, stable rank 1, κ = 1; no MP or power-law fit
  all_zero,    ///< W = 0: norms 0 (their logs −∞), everything else NaN
  non_finite,  ///< a NaN or ±∞ entry: nothing computed, every quantity NaN
};
const char* to_string(SpectrumKind kind) noexcept;

struct LayerMetricOptions {
  MpFitOptions mp;                 ///< spike level (Tracy–Widom) and censoring of the bulk fit
  double mp_level = 0.05;          ///< the bulk is MP when its KS p-value ≥ mp_level
  PowerLawOptions power_law;       ///< x_min candidates and KS convention
  double ratio_level = 0.05;       ///< level of the Tracy–Widom interval of κ for an initialised layer
  double near_zero = kNearZeroThreshold;       ///< §8.4
  double majority_fraction = kMajorityFraction;  ///< §8.4
  EigenSolver solver = EigenSolver::automatic;
};

struct LayerMetrics {
  Eigen::Index rows = 0, cols = 0;  ///< N, M
  SpectrumKind kind = SpectrumKind::regular;
  Eigen::Index rank = 0;
  Eigen::VectorXd eigenvalues;      ///< all min(N, M) eigenvalues of the smaller Gram matrix, ascending

  double lambda_max = 0, lambda_min_nonzero = 0, sum_lambda = 0;
  double spectral_norm = 0, frobenius_norm = 0;              ///< √λ_max, √Σλ
  double log10_spectral_norm = 0, log10_frobenius_norm = 0;  ///< log₁₀ of those
  double log10_lambda_max = 0, log10_sum_lambda = 0;         ///< WeightWatcher's log_spectral_norm, log_norm
  double stable_rank = 0;                                    ///< Σλ/λ_max

  MpComparison mp_own;  ///< σ² = ‖W‖²_F/(N M)
  MpComparison mp_fit;  ///< σ² fitted to the bulk
  double mp_soft_rank = 0;      ///< mp_fit.lambda_plus / λ_max
  double mp_soft_rank_own = 0;  ///< mp_own.lambda_plus / λ_max
  std::size_t spikes = 0;       ///< mp_fit.spikes: above the Tracy–Widom threshold of the fitted noise level
  bool bulk_is_mp = false;      ///< mp_fit valid and its KS p-value ≥ mp_level

  PowerLawTail power_law;
  double alpha_weighted = 0;    ///< α log₁₀ λ_max

  double ratio = 0;             ///< κ = λ_max/λ_min⁺
  double ratio_limit = 0;       ///< Theorem 5: ((1 + √c)/(1 − √c))², +∞ at c = 1
  double ratio_init_lo = 0, ratio_init_hi = 0;  ///< Tracy–Widom interval of κ for an i.i.d. layer (NaN at c = 1)

  double near_zero_portion = 0;  ///< §8.4, of the N eigenvalues of W Wᵀ
  double majority_ratio = 0;     ///< §8.4: the ratio within which the 70% majority varies (NaN with < 2 values)
  std::size_t majority_count = 0, non_near_zero = 0;
  double extreme_ratio = 0;      ///< §8.4: max/min of the non-near-zero eigenvalues
};

/// The metrics of W, its spectrum on the CPU (kkt_spectrum with options.solver) with serial BLAS: OpenBLAS's
/// last bits depend on its pool size, these numbers must not (run layers side by side for speed).
LayerMetrics layer_metrics(const Eigen::MatrixXd& W, const LayerMetricOptions& options = {});

/// The same from the min(N, M) eigenvalues of W's smaller Gram matrix computed elsewhere (e.g. a GPU
/// batch, kkt_spectra); N × M is W's shape. All eigenvalues ≤ 0 reads as all_zero.
LayerMetrics layer_metrics_from_eigenvalues(Eigen::Index N, Eigen::Index M, Eigen::VectorXd gram_eigenvalues,
                                            const LayerMetricOptions& options = {});

}  // namespace sparseact::spectral
