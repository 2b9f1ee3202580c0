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
#include <vector>

#include <sparseact/nn/plain_mlp.hpp>

namespace sparseact::routing {

/// P(Z > t, Z′ > t) for a standard bivariate normal pair with correlation ρ ∈ [−1, 1].
double bivariate_upper_tail(double t, double rho);
/// O(ρ): the expected fraction of the k = p_k N winners two inputs share. p_k ∈ (0, 1], ρ ∈ [−1, 1].
double expected_overlap(double rho, double p_k);
/// E[Z Z′; Z > t, Z′ > t] (closed form).
double truncated_cross_moment(double t, double rho);
/// The cosine of the routing activations z = m ∘ c of two inputs whose previous cosine is ρ.
double next_routing_cosine(double rho, double p_k);

/// κ₁(ρ) = (√(1 − ρ²) + (π − arccos ρ) ρ)/π: the cosine of ReLU(a), ReLU(a′) for a standard bivariate
/// normal (a, a′) with correlation ρ (Cho & Saul's arc-cosine kernel of degree 1, normalised).
double relu_cosine(double rho);
/// κ₀(ρ) = 1 − arccos(ρ)/π = P(a > 0, a′ > 0)/P(a > 0): the cosine of ReLU′(a), ReLU′(a′) (degree 0).
double relu_derivative_cosine(double rho);

/// The law through the hidden layers ℓ = 1 … L−1 of a wide COMET MLP without biases and ReLU backbone,
/// for two inputs at cosine ρ₀: the routing overlap O_ℓ = O(ρ_{ℓ−1}) and cosine ρ_ℓ of z_ℓ, and the
/// backbone cosine cos x_ℓ = O_ℓ κ₁(cos x_{ℓ−1}) (the masks come from weights independent of W_ℓ).
struct LayerLaw {
  double overlap = 0, routing_cos = 0, act_cos = 0;
};
std::vector<LayerLaw> comet_law(double input_cos, double p_k, int hidden_layers);

/// The law for a whole COMET MLP of widths N_0 … N_L without biases, backbone f ∈ {ReLU, identity}
/// (κ_f(ρ) = κ₁(ρ) or ρ, κ̇_f = κ₀ or 1, e_f = E f′(a)² / … = 1/2 or 1). Each hidden layer uses its own kept
/// fraction q_ℓ = k_ℓ/N_ℓ, k_ℓ = max(1, round(p_k N_ℓ)), for the threshold t_ℓ = Φ⁻¹(1 − q_ℓ).
///
///   per layer       O_ℓ = O(ρ_{ℓ−1}; q_ℓ),  cos x_ℓ = O_ℓ κ_f(cos x_{ℓ−1})
///   norms           E‖x_ℓ‖² = ‖x_{ℓ−1}‖² k_ℓ e_f / (3 N_{ℓ−1})   (Var W = 1/(3N_{ℓ−1}); ≈ p_k N_ℓ/(6N_{ℓ−1}) for ReLU)
///   concatenated    mask cos = Σ k_ℓ O_ℓ / Σ k_ℓ,   act cos = Σ ‖x_ℓ‖² cos x_ℓ / Σ ‖x_ℓ‖²   (input norms cancel)
///   NTK block ℓ     cos x_{ℓ−1} · Π_{j=ℓ}^{L−1} O_j κ̇_f(cos x_{j−1})    (the W_ℓ block of eq. (11), trace-normalised)
///   signals         E‖S_j‖²_F = E‖S_{j+1}‖²_F k_j e_f / (3 N_j),  ‖S_L‖² = N_L
///   NTK trace cos   Σ_ℓ ‖x_{ℓ−1}‖² ‖S_ℓ‖² block_ℓ / Σ_ℓ ‖x_{ℓ−1}‖² ‖S_ℓ‖²
/// Throws std::invalid_argument for tanh (no closed-form κ), fewer than two layers or p_k ∉ (0, 1].
struct NetworkLaw {
  std::vector<LayerLaw> layers;  ///< hidden layers ℓ = 1 … L−1
  std::vector<int> k;            ///< k_ℓ
  double mask_cos = 0, act_cos = 0;
  std::vector<double> ntk_block_cos;  ///< ℓ = 1 … L
  double ntk_cos = 0;
};
NetworkLaw comet_network_law(double input_cos, double p_k, const std::vector<int>& widths, nn::PlainActivation f);

}  // namespace sparseact::routing
