#pragma once
// Paper 001 Theorem 6: for the effective gradient η ∈ R^n of an MLP block with key matrix
// K ∈ R^{n×d},
//
//   ηᵀ K Kᵀ η ≥ λ_min⁺(K Kᵀ) · ‖P η‖²,
//
// P the orthogonal projection onto the column space of K (span of (Uᵀ)_{1:d} when n > d; P = I when
// d > n). The left side is computed directly as ‖Kᵀη‖²; ‖Pη‖² = zᵀ(KᵀK)⁻¹z with z = Kᵀη by a
// Cholesky solve, and λ_min⁺ comes from the eigensolver: the inequality compares two independent
// computations. r = ‖Pη‖²/‖η‖² is the paper's "how much of η falls in the non-null space" (§4.4).
#include <cstdint>
#include <string>

#include <Eigen/Core>

#include <sparseact/spectral/spectrum.hpp>

namespace sparseact::spectral {

struct ProjectionTerms {
  Eigen::VectorXd quadratic;  ///< ηᵀ K Kᵀ η, one per column of η
  Eigen::VectorXd projected;  ///< ‖P η‖²
  Eigen::VectorXd norm2;      ///< ‖η‖²
};

/// Evaluates the terms of Theorem 6 for each column of `eta` (n × samples). Requires rank(K) = min(n, d).
ProjectionTerms projection_terms(const Eigen::MatrixXd& K, const Eigen::MatrixXd& eta);

/// Where the η of Theorem 6 come from.
enum class EtaSource {
  gaussian,        ///< η ~ N(0, I_n): no alignment with K
  relu_gradient,   ///< effective gradients of a ReLU MLP block at initialisation (see below)
};

/// `samples` effective gradients η = g_α ⊙ γ (paper 001 Definitions 2–3) of the block
/// y = V ReLU(K x) with V ∈ R^{d×n} Xavier-normal, inputs x LayerNorm-ed (x ~ N(0, I_d) rescaled to
/// ‖x‖² = d), squared loss ½‖y − t‖² against t ~ N(0, I_d): g_α = Vᵀ(y − t), γ = 1[K x > 0].
/// These depend on K through the mask γ and are half zeros, like real ReLU gradients.
Eigen::MatrixXd sample_eta(const Eigen::MatrixXd& K, EtaSource source, Eigen::Index samples, std::uint64_t seed,
                           std::uint64_t stream);

EtaSource parse_eta_source(const std::string& name);
const char* to_string(EtaSource source) noexcept;

}  // namespace sparseact::spectral
