#pragma once
// The large-width law of COMET's masks (issue 12, beyond paper 002). Two inputs reach layer ℓ of the
// routing network as z, z′; a row v of V_ℓ gives the pre-activations (c, c′) = (vᵀz, vᵀz′), which over
// the rows are i.i.d. and, for wide layers, close to a standard bivariate normal pair (Z, Z′) with
// correlation ρ = cos(z, z′) after scaling. C_k keeps the fraction p_k above t = Φ⁻¹(1 − p_k), so
//
//   expected overlap   O(ρ) = P(Z > t, Z′ > t) / p_k = 1 − 2 T(t, √((1 − ρ)/(1 + ρ))) / p_k   (Owen's T),
//   next cosine        ρ′ = E[Z Z′; Z, Z′ > t] / E[Z²; Z > t]     (z = m ∘ c with the identity g),
//
// with the truncated moments in closed form (Rosenbaum 1961):
//   E[Z²; Z > t]        = Q(t) + t φ(t),   Q = 1 − Φ;
//   E[Z Z′; Z > h, Z′ > k] = ρ P + ρ h φ(h) Q((k − ρh)/s) + ρ k φ(k) Q((h − ρk)/s)
//                            + (s/√(2π)) φ(√(h² − 2ρhk + k²)/s),   s = √(1 − ρ²),  P = P(Z > h, Z′ > k),
//   here at h = k = t: ρ P + 2ρ t φ(t) Q(t √((1 − ρ)/(1 + ρ))) + (s/√(2π)) φ(t √(2/(1 + ρ))).
// O(0) = p_k, O(1) = 1, and at p_k = 1/2 O(ρ) = 1 − arccos(ρ)/π.
namespace sparseact::routing {

/// P(Z > t, Z′ > t) for a standard bivariate normal pair with correlation ρ ∈ [−1, 1].
double bivariate_upper_tail(double t, double rho);
/// O(ρ): the expected fraction of the k = p_k N winners two inputs share. p_k ∈ (0, 1], ρ ∈ [−1, 1].
double expected_overlap(double rho, double p_k);
/// E[Z Z′; Z > t, Z′ > t] (closed form).
double truncated_cross_moment(double t, double rho);
/// The cosine of the routing activations z = m ∘ c of two inputs whose previous cosine is ρ.
double next_routing_cosine(double rho, double p_k);

}  // namespace sparseact::routing
