#pragma once
// COMET's fixed random routing network (paper 002, §4, eqs. (4)–(6)): a second MLP of the backbone's
// shape whose weights V_ℓ are drawn once from the backbone's initial law U(−N_{ℓ−1}^{−1/2}, N_{ℓ−1}^{−1/2})
// and never trained (no biases, identity activation g), run on the same input z_0 = x_0:
//
//   c_ℓ = V_ℓ z_{ℓ−1}            (4)
//   m_ℓ = C_{k_ℓ}(c_ℓ)           (5)   k_ℓ = max(1, round(p_k N_ℓ))   (ERRATA 002)
//   z_ℓ = m_ℓ ∘ g(c_ℓ), g = id    (6)
//
// The masks m_ℓ of the hidden layers ℓ = 1 … L−1 then gate the backbone (eq. (8)); its output a_L is
// never masked, so no routing layer L is computed.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include <sparseact/routing/kwta.hpp>

namespace sparseact::routing {

struct CometRouter {
  std::vector<int> widths;          ///< N_0 (input), N_1, …, N_L
  std::vector<Eigen::MatrixXd> V;   ///< V_1 … V_{L−1}: N_ℓ × N_{ℓ−1}
  std::vector<int> k;               ///< k_1 … k_{L−1}
  TieRule rule = TieRule::strict;
};

/// V_ℓ (ℓ = 1 … L−1) with entries U(−N_{ℓ−1}^{−1/2}, N_{ℓ−1}^{−1/2}) from Rng(seed, stream_id(stream, ℓ)).
/// Throws std::invalid_argument for fewer than two layers, a width < 1 or p_k outside (0, 1].
CometRouter make_comet_router(const std::vector<int>& widths, double p_k, std::uint64_t seed, std::uint64_t stream,
                              TieRule rule = TieRule::strict);

/// m_1 … m_{L−1} for every column of X0 (N_0 × M inputs): N_ℓ × M 0/1 matrices.
std::vector<Eigen::MatrixXd> comet_masks(const CometRouter& router, const Eigen::MatrixXd& X0);

/// The same routing weights at another sparsity per column: column j keeps k_ℓ = max(1, round(p_j N_ℓ))
/// units (router.k is ignored). One product V_ℓ Z per layer serves every p_k, so a sweep over p_k with
/// "the same weights for all p_k" (§5.1.1) costs one routing pass. `column_pk` has X0.cols() entries.
std::vector<Eigen::MatrixXd> comet_masks(const CometRouter& router, const Eigen::MatrixXd& X0, const std::vector<double>& column_pk);

}  // namespace sparseact::routing
