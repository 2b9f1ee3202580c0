#pragma once
// Forward pass and hand-written backpropagation for a batch (samples as columns, one matrix
// product per layer, nothing allocated per sample), for the network of mlp.hpp.
//
// Backward, per block l (δX := ∂L/∂X, all batched; paper 001, Lemma 1 for the K, V and d^l parts):
//   δz = δh^l,  g_V = δz Aᵀ,  g_{b_V} = Σ_s δz,  δA = Vᵀ δz,  δP = δA ⊙ σ'(P),
//   g_K = δP (U + d)ᵀ,  g_{b_K} = Σ_s δP,  δu = Kᵀ δP,  g_d = Σ_s δu   (zeroth bias shares δu)
//   LN:  g_β = Σ_s δu,  g_γ = Σ_s δu ⊙ x̂,  δx̂ = γ ⊙ δu,
//        δh^{l-1} = r ⊙ (δx̂ − mean(δx̂) − x̂ ⊙ mean(δx̂ ⊙ x̂))  per column, r = (σ² + ε)^{-1/2}
//   plus δh^l itself through the residual connection.
#include <vector>

#include <Eigen/Core>

#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/mlp.hpp>

namespace sparseact::nn {

/// What one block's forward pass keeps (all d×B or n×B, one column per sample).
struct BlockCache {
  Eigen::MatrixXd h_in;       ///< h^{l-1}
  Eigen::MatrixXd xhat;       ///< x̂ = (h − μ) r (empty without LayerNorm)
  Eigen::RowVectorXd rstd;    ///< r = (σ² + ε)^{-1/2} per sample (empty without LayerNorm)
  Eigen::MatrixXd k_in;       ///< u + d, the input of K (U = LN(h) or h)
  Eigen::MatrixXd pre;        ///< P = K(u + d) + b_K, the pre-activations
  Eigen::MatrixXd act;        ///< A = σ(P), the activations α
  Eigen::MatrixXd d1;         ///< σ'(P)
  Eigen::MatrixXd d2;         ///< σ''(P) (only with second_order)
};

struct ForwardCache {
  Eigen::MatrixXd x;          ///< the input batch
  std::vector<BlockCache> blocks;
  Eigen::MatrixXd h_last;     ///< h^L
  Eigen::MatrixXd logits;     ///< F
};

/// Backprop signals ∂L/∂(·) per block, kept for per-sample gradients and the R-backward pass.
struct BlockSignals {
  Eigen::MatrixXd dz;   ///< ∂L/∂h^l (= ∂L/∂z through the block's output)
  Eigen::MatrixXd dA;   ///< ∂L/∂A
  Eigen::MatrixXd dP;   ///< ∂L/∂P
  Eigen::MatrixXd du;   ///< ∂L/∂(u + d) = ∂L/∂u
};

struct BackwardCache {
  Eigen::MatrixXd dlogits;            ///< ∂L/∂F
  std::vector<BlockSignals> blocks;
  Eigen::MatrixXd dh0;                ///< ∂L/∂h^0
};

/// Forward pass; second_order also stores σ''(P).
void forward(const Mlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& x, ForwardCache& cache,
             bool second_order = false);

/// The logits F = f_θ(x) (d_out×B).
Eigen::MatrixXd predict(const Mlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& x);

/// The batch loss L(θ) (mean over the batch).
double loss(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch, LossKind kind);

/// Backward pass after `forward`: fills grad = ∂L/∂θ (resized to num_params) and the signals.
/// If per_sample is not null it becomes num_params×B, column s = ∇_θ ℓ_s, the gradient of sample
/// s's own loss (so grad = mean of the columns). Returns L.
double backward(const Mlp& net, const Eigen::VectorXd& theta, const ForwardCache& cache, const Batch& batch,
                LossKind kind, Eigen::VectorXd& grad, BackwardCache* signals = nullptr,
                Eigen::MatrixXd* per_sample = nullptr);

/// Backward pass after `forward` from a given ∂L/∂F (d_out×B, any loss): fills grad = ∂L/∂θ and the
/// signals (per-sample columns as above, for an L that is the mean of per-sample losses).
void backward(const Mlp& net, const Eigen::VectorXd& theta, const ForwardCache& cache, const Eigen::MatrixXd& dlogits,
              Eigen::VectorXd& grad, BackwardCache* signals = nullptr, Eigen::MatrixXd* per_sample = nullptr);

/// forward + backward: returns L, fills grad = ∂L/∂θ (and per-sample gradients if asked).
double loss_and_gradient(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch, LossKind kind,
                         Eigen::VectorXd& grad, Eigen::MatrixXd* per_sample = nullptr);

}  // namespace sparseact::nn
