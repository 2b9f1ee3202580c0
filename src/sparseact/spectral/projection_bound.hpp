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
#include <functional>
#include <string>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <sparseact/core/stats.hpp>
#include <sparseact/spectral/spectrum.hpp>

namespace sparseact::spectral {

struct ProjectionTerms {
  Eigen::VectorXd quadratic;  ///< ηᵀ K Kᵀ η, one per column of η
  Eigen::VectorXd projected;  ///< ‖P η‖²
  Eigen::VectorXd norm2;      ///< ‖η‖²
};

/// What ‖Pη‖² needs of K, computed once per K and shared by every batch of η: when n > d the
/// Cholesky factor L of KᵀK (‖Pη‖² = ‖L⁻¹Kᵀη‖²); when d ≥ n nothing (P = I).
struct ColumnSpace {
  Eigen::Index n = 0, d = 0;
  Eigen::LLT<Eigen::MatrixXd> llt;  ///< of KᵀK (lower triangle), when n > d
  bool full_rank = false;           ///< P is defined: d ≥ n, or KᵀK is numerically positive definite
};

/// The factor of `gram_lower`, K's smaller Gram matrix of which only the lower triangle is read
/// (small_gram_lower(K); pass one already formed to share its syrk). Never throws on a
/// rank-deficient K: full_rank says whether the Cholesky factorisation succeeded.
ColumnSpace column_space(Eigen::Index n, Eigen::Index d, const Eigen::MatrixXd& gram_lower);
ColumnSpace column_space(const Eigen::MatrixXd& K);

/// Evaluates the terms of Theorem 6 for each column of `eta` (n × samples). Requires rank(K) =
/// min(n, d) (throws std::runtime_error otherwise). The second form reuses P's factor: the
/// numbers are bit for bit those of the first.
ProjectionTerms projection_terms(const Eigen::MatrixXd& K, const Eigen::MatrixXd& eta);
ProjectionTerms projection_terms(const Eigen::MatrixXd& K, const ColumnSpace& P, const Eigen::MatrixXd& eta);

/// Theorem 6 read over a set of η: the bound ratio ηᵀKKᵀη / (λ_min⁺ ‖Pη‖²), which the theorem says
/// is ≥ 1, and how η sits against K. An η with Pη = 0 (e.g. an all-inactive ReLU mask) has nothing
/// to bound and is left out (NaN in the per-sample vectors).
struct Theorem6Summary {
  Eigen::VectorXd bound_ratio;   ///< per η: ηᵀKKᵀη / (λ_min⁺ ‖Pη‖²)
  Eigen::VectorXd r;             ///< per η: r = ‖Pη‖²/‖η‖²
  double min_bound_ratio = 0;    ///< over the η used; +∞ when none
  double mean_r = 0;             ///< mean r
  double mean_rayleigh = 0;      ///< mean ηᵀKKᵀη / (λ_max ‖Pη‖²): where the Rayleigh quotient sits in [λ_min⁺, λ_max]
  Eigen::Index used = 0;         ///< η with Pη ≠ 0
};
Theorem6Summary theorem6_summary(const ProjectionTerms& terms, double lambda_min_nonzero, double lambda_max);

/// Relative rounding allowance of the bound ratio: ‖Kᵀη‖² and zᵀ(KᵀK)⁻¹z each carry a relative
/// error of order κ(KᵀK)·ε, κ = λ_max/λ_min⁺, summed over max(n, d) terms: 64·κ·max(n, d)·ε.
double theorem6_rounding_tolerance(double lambda_min_nonzero, double lambda_max, Eigen::Index n, Eigen::Index d);

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

/// V of that block for K ∈ R^{n×d}: d × n, Xavier normal, drawn from (seed, stream_id(stream, 1)).
Eigen::MatrixXd relu_readout(Eigen::Index n, Eigen::Index d, std::uint64_t seed, std::uint64_t stream);

/// sample_eta with V from `readout` (relu_gradient only; ignored for gaussian), asked for once and
/// only after the pre-activations K x are formed, so that a caller can have it drawn elsewhere
/// meanwhile (mp_spectrum: on the other compute thread). Bit for bit sample_eta when `readout`
/// returns relu_readout(n, d, seed, stream).
Eigen::MatrixXd sample_eta(const Eigen::MatrixXd& K, EtaSource source, Eigen::Index samples, std::uint64_t seed,
                           std::uint64_t stream, const std::function<const Eigen::MatrixXd&()>& readout);

/// Theorem 6's terms for η drawn in batches until the mean of r = ‖Pη‖²/‖η‖² is known to the stopping
/// rule's tolerance: after each batch of `batch` η (batch b from stream_id(stream, 16 + b); the ReLU
/// source's V from `readout`, shared by all batches), r of each η with Pη ≠ 0 is pushed in order into a
/// stats::RunningMean, and drawing stops once rule.done() (its (1 − α) Student-t interval within
/// max(abs_tol, rel_tol·mean r), at least min_samples, at most max_samples η, the cap). The inequality
/// holds for every η, so the stop never decides the verdict; it prices the mean r the report quotes.
struct SequentialTerms {
  ProjectionTerms terms;        ///< every η drawn, in order
  double mean_r = 0;            ///< over the η with Pη ≠ 0
  stats::Interval r_interval;   ///< its (1 − α) interval at the stop
  Eigen::Index drawn = 0;       ///< η drawn (a multiple of `batch`, or the cap)
  bool converged = false;       ///< the tolerance was met (false: the cap was reached first)
};
SequentialTerms projection_terms_until(const Eigen::MatrixXd& K, const ColumnSpace& P, EtaSource source, const stats::StoppingRule& rule,
                                       Eigen::Index batch, std::uint64_t seed, std::uint64_t stream,
                                       const std::function<const Eigen::MatrixXd&()>& readout);

EtaSource parse_eta_source(const std::string& name);
const char* to_string(EtaSource source) noexcept;

}  // namespace sparseact::spectral
