#pragma once
// Tracy–Widom law of the extreme eigenvalues of real Wishart matrices (β = 1), used to decide
// paper 001 Theorem 5's finite-size tolerance: λ_max/λ_min⁺ exceeds or falls short of its limit by
// an edge fluctuation of order n^{-2/3}, and the TW quantiles say how large it may be.
//
// F₁(s) = det(I − A_s) on L²(0, ∞), A_s(x, y) = Ai(x + y + s) (Ferrari–Spohn; evaluated by
// Bornemann's Nyström method with Gauss–Legendre nodes, "On the numerical evaluation of
// distributions in random matrix theory", 2010). Accurate to ~1e-12 for s ∈ [−10, 10].
namespace sparseact::spectral {

/// F₁(s) = P(TW₁ ≤ s).
double tracy_widom1_cdf(double s);
/// s with F₁(s) = p, for p ∈ (0, 1); remembered per p for the process (thread-safe).
double tracy_widom1_quantile(double p);

/// Centring and scale of the extreme eigenvalues of W = XᵀX, X ∈ R^{N×P} with i.i.d. N(0, 1)
/// entries and N ≥ P (Johnstone 2001 with Ma 2012's half-integer correction):
///   (λ_max − μ₊)/σ₊ → TW₁,   (μ₋ − λ_min)/σ₋ → TW₁  (the soft lower edge, N/P bounded away from 1).
/// For entries of variance v every quantity scales by v; ratios do not depend on it.
struct WishartEdges {
  double mu_max, sigma_max;  ///< μ₊ = (√(N−½) + √(P−½))², σ₊ = √μ₊ (1/√(N−½) + 1/√(P−½))^{1/3}
  double mu_min, sigma_min;  ///< μ₋ = (√(N−½) − √(P−½))², σ₋ = √μ₋ (1/√(P−½) − 1/√(N−½))^{1/3}
};
WishartEdges wishart_edges(double N, double P);

/// Interval that holds λ_max/λ_min of XᵀX with probability ≥ 1 − α (each edge at level α/2,
/// Bonferroni), from the TW₁ quantiles. Also the ratio at the TW₁ means (E TW₁ = −1.2065...).
struct RatioInterval {
  double lo, hi, at_mean;
};
RatioInterval wishart_ratio_interval(double N, double P, double alpha);
/// The ratio at the TW₁ means alone (RatioInterval::at_mean), without the quantiles' quadrature.
double wishart_ratio_at_mean(double N, double P);

}  // namespace sparseact::spectral
