#pragma once
// Marchenko–Pastur against the spectrum of one weight matrix (issue 16; paper 001 Theorem 1), with
// the entry variance σ² either the layer's own or fitted to the bulk.
//
// W ∈ R^{N×M}; the nonzero spectrum is that of the smaller Gram matrix (m = min(N, M) eigenvalues λ,
// unnormalised: λ_max = σ_max(W)²). With n = max(N, M) and c = m/n ≤ 1, the eigenvalues ν = λ/n of a
// matrix of i.i.d. entries of variance σ² follow MP(c, σ²) (marchenko_pastur.hpp; no atom since
// c ≤ 1), whose bulk edges are, in λ units,
//   λ₋ = n σ² (1 − √c)²,   λ₊ = n σ² (1 + √c)².
//
// Own σ²: σ² = ‖W‖²_F/(N M) = Σλ/(N M), the mean of MP(c, σ²) (Theorem 1); spikes inflate it.
//
// Fitted σ² (the bulk fit):
//  1. Start from the median: σ²₀ = median(ν)/median(MP(c, 1)), which a few spikes do not move.
//  2. Bulk B = {λ ≤ τ(σ²)}, τ the Tracy–Widom spike threshold of a noise layer of this shape and σ²
//     at level `spike_level` (tracy_widom.hpp, N ≥ P the larger and smaller dimension):
//       τ(σ²) = σ² (μ₊ + σ₊ s₁₋ₐ),   s₁₋ₐ = F₁⁻¹(1 − spike_level).
//     For a pure-noise layer, P(λ_max > τ) ≈ spike_level: the eigenvalues above τ are spikes.
//  3. σ² = the maximum-likelihood σ² of MP(c, σ²) on B, Type II censored: the ⌊q|B|⌋ smallest and
//     ⌊q|B|⌋ largest of B (q = `censor`) enter only through their count (r ln F(x_(r+1)) and
//     s ln(1 − F(x_(|B|−s)))), the rest through ln f. MP's support is bounded: an eigenvalue a finite-size
//     fluctuation pushes past an edge would make the uncensored likelihood 0 for every σ² near the truth;
//     censored, the likelihood is positive on an interval of σ², maximised there (a 24-point grid in ln σ²
//     finds the basin, Brent's method polishes it).
//  4. Repeat 2–3 until B no longer changes (at most `max_iterations`).
// Measured on pure Gaussian layers: σ̂² runs low by 0.5% at 240×80, 0.2% at 512×512 and 0.09% at
// 1536×384 (finite-size edges), so the spike count's false-positive rate at spike_level = 1% is about
// 2% on small layers (982 of 1000 draws at 240×80 had none); the own σ² gives 0.7–0.8% there.
// Then the bulk's KS distance to MP(c, σ̂²) (exact for a step ESD, as esd.hpp's; MP's CDF in closed form) and
// its p-value (stats::kolmogorov_smirnov_p_value, n = |B|). Two caveats the p-value carries: σ² was
// fitted to the same values, and eigenvalues are not independent: they repel, so an MP bulk's ESD sits
// O(log m / m) from its law, not O(1/√m). Both make the test conservative: "not MP" at level 0.05 is a
// strong statement, "MP" a weak one.
#include <cstddef>

#include <Eigen/Core>

namespace sparseact::spectral {

struct MpFitOptions {
  double spike_level = 0.01;  ///< Tracy–Widom level of the spike threshold τ (step 2)
  double censor = 0.05;       ///< fraction q of the bulk censored at each end (step 3), in [0, 0.45]
  int max_iterations = 50;
};

/// One MP law against one spectrum. Everything in λ units (eigenvalues of WᵀW) except σ².
struct MpComparison {
  bool valid = false;        ///< false when there are too few eigenvalues (< 4) or none positive
  double c = 0;              ///< min(N, M)/max(N, M)
  double sigma2 = 0;         ///< entry variance σ²
  double lambda_minus = 0;   ///< n σ² (1 − √c)²
  double lambda_plus = 0;    ///< n σ² (1 + √c)²
  double tw_threshold = 0;   ///< τ(σ²): above it an eigenvalue is a spike at `spike_level`
  std::size_t spikes = 0;    ///< eigenvalues > τ(σ²)
  std::size_t above_edge = 0;  ///< eigenvalues > λ₊ (WeightWatcher's num_spikes)
  std::size_t bulk = 0;      ///< eigenvalues compared with the law (the fit: ≤ τ; own: all)
  double ks = 0;             ///< KS distance of their ESD to MP(c, σ²) (ν = λ/n)
  double ks_p_value = 0;     ///< Kolmogorov p-value for `bulk` values (see the caveats above)
  int iterations = 0;        ///< fit only: refits until the bulk stopped changing
  bool converged = true;     ///< fit only: the bulk stopped changing within max_iterations
};

/// MP with the layer's own σ² = Σλ/(N M). `eigenvalues`: the nonzero eigenvalues of the smaller Gram
/// matrix (Spectrum::nonzero(); at most min(N, M) of them, any order); the KS test compares all of them.
MpComparison marchenko_pastur_own(const Eigen::VectorXd& eigenvalues, Eigen::Index N, Eigen::Index M,
                                  const MpFitOptions& options = {});

/// MP with σ² fitted to the bulk (steps 1–4 above); same input.
MpComparison marchenko_pastur_fit(const Eigen::VectorXd& eigenvalues, Eigen::Index N, Eigen::Index M,
                                  const MpFitOptions& options = {});

/// The CDF of MP(c, σ²) for c ≤ 1 (no atom) in closed form: with y = x/σ², a, b = (1 ∓ √c)² and
/// R = √((b − y)(y − a)), integrating the density gives on [a, b]
///   F = [R + (1 + c) asin((y − 1 − c)/(2√c)) − (1 − c) asin(((1 + c) y − (1 − c)²)/(2√c y)) + cπ] / (2πc)
/// (F(a) = 0, F(b) = 1). No quadrature: thousands of evaluations per fit cost microseconds, and c = 1 (a = 0,
/// square layers) is exact, where MarchenkoPastur::cdf's θ-substitution computes x = m − h cos θ by
/// cancellation and returns 1 for x ≲ 1e-4 (0/0 in its integrand). Absolute error ~ε/c.
double marchenko_pastur_cdf(double x, double c, double sigma2 = 1.0);

/// τ(σ²)/σ² = μ₊ + σ₊ F₁⁻¹(1 − level) for an N × M noise layer (either orientation); F₁⁻¹ is memoised.
double tw_spike_threshold_unit(Eigen::Index N, Eigen::Index M, double level);

}  // namespace sparseact::spectral
