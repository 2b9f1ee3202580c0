#pragma once
// Paper 001 §3–4's per-layer quantities on one batch, from one forward and one backward pass.
//
// For block l and sample s (single-token hidden features, §3.1; per-sample signals are B × the
// batch-mean signals of backprop.hpp, since L = (1/B) Σ_s ℓ_s):
//   x + d   = the input of K^l (LN output plus the zeroth bias d^l)              §4.1
//   α       = σ(P), P = K(x + d) + b_K                                           Definition 1
//   γ       = σ'(P)                                                              Definition 2
//   g_K     = ∂ℓ_s/∂α  (the gradient w.r.t. the output of the K sublayer)        §4.2
//   η       = g_K ⊙ γ = ∂ℓ_s/∂P                                                  Definition 3
//   g_V     = ∂ℓ_s/∂(block output)                                               §4.2
//   M       = g_K g_Kᵀ, tr(M) = ‖g_K‖²                                           Lemma 6, §8.1
// and the terms of the bounds, each an average over the batch (the paper's E over (X, Y)):
//   ηᵀKKᵀη = ‖Kᵀη‖² = ‖∇_{x^{l-1}} ℓ‖² = ‖∇_{d^l} ℓ‖²                              Lemma 6
//   ‖η‖²‖x + d‖² = ‖∇_K ℓ‖²,   ‖g_V‖²‖α‖² = ‖∇_V ℓ‖²                              Lemma 5, Corollary 1
// Sparsity as §3.3 measures it: the fraction of entries of α that are nonzero (for shifted
// activations, that differ from Δy by more than 1e-6, as §6 does), the fraction of γ that is nonzero,
// and §6's flat-area fraction: P − Δx ∈ [−w_half, w_half] and |α − Δy| ≤ 1e-6 (for other
// activations the flat area is where σ' = 0). §6 also counts exact zeros, |α| ≤ 1e-6: a shifted
// activation (Δy ≠ 0) can be gradient-sparse without them.
#include <vector>

#include <Eigen/Core>

#include <sparseact/nn/backprop.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/mlp.hpp>

namespace sparseact::flatness {

struct BlockStats {
  double activation_density = 0;  ///< fraction of α entries ≠ Δy (|·| > 1e-6): "activated neurons"
  double gradient_density = 0;    ///< fraction of γ entries ≠ 0
  double flat_fraction = 0;       ///< fraction of pre-activations in the flat area (§6)
  double zero_fraction = 0;       ///< fraction of α entries with |α| ≤ 1e-6 (§6: "not sparse" when small)
  double eta_sq = 0;              ///< E‖η‖²
  double x_sq = 0;                ///< E‖x + d‖²
  double x_eta = 0;               ///< E‖x + d‖²‖η‖² = E‖∇_K ℓ‖²   (Theorem 2's second term)
  double eta_KKt_eta = 0;         ///< E ηᵀ(KKᵀ)η, by the Gram matrix      (Theorem 2's first term)
  double grad_x_sq = 0;           ///< E‖∇_{x^{l-1}} ℓ‖² = E‖∇_{d^l} ℓ‖², by backprop (Lemma 5; = the above by Lemma 6)
  double gV_alpha = 0;            ///< E‖g_V‖²‖α‖² = E‖∇_V ℓ‖²     (Theorem 2's third term; 0 without V)
  double gV_sq = 0;               ///< E‖g_V‖²
  double trace_KKt = 0;           ///< tr(KKᵀ) = ‖K‖_F²
  double trace_M = 0;             ///< E tr(M) = E‖g_K‖²
  double gK_sq_active = 0;        ///< E[(g_K)_i² | γ_i ≠ 0], pooled over samples and i (Lemma 3)
  double active_count = 0;        ///< E‖γ‖₀
  double zeroth_bias_norm = 0;    ///< ‖d^l‖ (0 without a zeroth bias)
  double ln_scale_min = 1;        ///< min_i γ_i of the LN before the block (1 without a scale)
  bool zeroth_bias = false;
};

struct FlatnessStats {
  double loss = 0;
  double accuracy = 0;                   ///< cross-entropy only: fraction of argmax = label
  std::vector<BlockStats> blocks;
  std::vector<double> layer_grad_sq;     ///< E‖∇_{θ_l} ℓ‖² for each layer of Mlp::layers
  double grad_sq = 0;                    ///< E‖∇_θ ℓ‖² = Σ_l layer_grad_sq (Lemma 4's main term)
  Eigen::VectorXd batch_gradient;        ///< ∇_θ L of the batch loss
};

/// All of the above for the network at θ on `batch`.
FlatnessStats flatness_stats(const nn::Mlp& net, const Eigen::VectorXd& theta, const nn::Batch& batch,
                             nn::LossKind kind);

/// Only the forward-pass sparsity (activation, gradient and zero densities, flat fraction) per block,
/// e.g. on test data: no labels needed.
std::vector<BlockStats> forward_sparsity(const nn::Mlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& x);

/// ‖∇_{θ_l} ℓ_s‖² for every layer l (rows) and sample s (columns), without forming per-sample
/// gradients: each Linear's per-sample gradient is an outer product a bᵀ, so its squared norm is
/// ‖a‖²‖b‖²; biases, LN scales/shifts and zeroth biases are vectors.
Eigen::MatrixXd per_sample_layer_grad_sq(const nn::Mlp& net, const Eigen::VectorXd& theta,
                                         const nn::ForwardCache& fwd, const nn::BackwardCache& bwd);

/// Right-hand sides of the bounds, summed over blocks (paper 001):
struct BoundTerms {
  double lemma4 = 0;         ///< E‖∇_θ ℓ‖²                    (Lemma 4: ≈ tr(H) for well-learned models)
  double lemma5 = 0;         ///< Σ_l [DB] E‖∇_x ℓ‖² + E‖∇_K ℓ‖² + E‖∇_V ℓ‖²   (Lemma 5, summed; ≤ lemma4 exactly)
  double theorem2 = 0;       ///< eq. (5): Σ_l [DB] E ηᵀKKᵀη + E‖H(X+D)ᵀ‖² + E‖G_V Aᵀ‖²
  double corollary1 = 0;     ///< eq. (6): Σ_l [DB] E ηᵀKKᵀη + E‖x+d‖²‖η‖² + E‖g_V‖²‖α‖²; with single-token
                             ///<   features ‖H(X+D)ᵀ‖_F = ‖x+d‖‖η‖, so it equals eq. (5) (the paper's proof)
  double theorem3 = 0;       ///< Theorem 3: non-DB d Σ E‖η‖² + Σ E‖g_V‖²‖α‖²;
                             ///<   DB Σ E ηᵀKKᵀη + Σ (√d − c_l)²₊ E‖η‖² + Σ E‖g_V‖²‖α‖², c_l = ‖d^l‖
  double theorem3_relu = 0;  ///< its Lemma 3 form (ReLU): E[g_K² | α > 0]·E‖α‖₀ for E‖η‖²; NaN otherwise
};
BoundTerms bound_terms(const nn::Mlp& net, const FlatnessStats& stats);

/// Lemma 5's, Theorem 2's (eq. (5)) and Corollary 1's (eq. (6)) right-hand sides, summed over blocks and
/// averaged over the samples, each from its own formula (issue 47): with single-token features they
/// are one number (Lemma 6: ‖∇_x ℓ‖² = ηᵀKKᵀη; ∇_K ℓ = η(x + d)ᵀ and ∇_V ℓ = g_V αᵀ are rank one), so
/// the analysis checks one of them against tr(H_θ) and compares the three here, to 1e-12.
///   lemma5      Σ_l [DB] ‖∇_{d^l} ℓ_s‖² + ‖∇_{K^l} ℓ_s‖² + ‖∇_{V^l} ℓ_s‖², read off each sample's own
///               parameter gradient (one backward pass per sample; ∇_{d^l} = ∇_{x^{l-1}}, Lemma 5's proof)
///   theorem2    Σ_l [DB] ηᵀ(KKᵀ)η + ‖η (x + d)ᵀ‖_F² + ‖g_V αᵀ‖_F², with the Gram matrix KKᵀ and the
///               n×d and d×n matrices H(X + D)ᵀ and G_V Aᵀ formed
///   corollary1  Σ_l [DB] ‖Kᵀη‖² + ‖x + d‖²‖η‖² + ‖g_V‖²‖α‖², products of norms
/// ("[DB]": the first term only where the block has a zeroth bias.)
struct BoundIdentities {
  double lemma5 = 0, theorem2 = 0, corollary1 = 0;
};
BoundIdentities bound_identities(const nn::Mlp& net, const Eigen::VectorXd& theta, const nn::Batch& samples,
                                 nn::LossKind kind = nn::LossKind::cross_entropy);

}  // namespace sparseact::flatness
