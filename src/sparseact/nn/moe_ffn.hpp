#pragma once
// The feed-forward layers of paper 004's transformers, per token (columns of X ∈ R^{d×T}), with exact backward passes.
//
// Dense FFN (ReLU; §4.1 sets the inner width equal to d, we keep it a parameter f):
//   y = W₂ ReLU(W₁ x),  W₁ ∈ R^{f×d}, W₂ ∈ R^{d×f}   (no biases, as Mixtral)
// MoE FFN, K experts of that form and token-choice top-2 routing without token dropping (Mixtral's layout):
//   ℓ = W_r x ∈ R^K,  {a, b} = the two largest logits (ties: the lowest index first),
//   (π_a, π_b) = softmax(ℓ_a, ℓ_b),  y = π_a E_a(x) + π_b E_b(x)
// backward: ∂/∂E_k's output = π_k dy;  ∂L/∂π_k = ⟨dy, E_k(x)⟩;  through the two-way softmax
//   ∂L/∂ℓ_a = π_a π_b (∂L/∂π_a − ∂L/∂π_b) = −∂L/∂ℓ_b, and 0 for the other logits (the top-2 choice is piecewise constant).
// With K = 1 the layer is the dense FFN (a single expert, π = 1). θ: W_r (K×d) when K ≥ 2, then each expert's W₁, W₂.
#include <algorithm>
#include <vector>

#include <Eigen/Core>

namespace sparseact::nn {

struct FfnShape {
  int d = 1;        ///< model width
  int inner = 1;    ///< f, each expert's hidden width
  int experts = 1;  ///< K (1: dense)
  int top = 2;      ///< experts per token (min(top, K))
  Eigen::Index expert_size() const { return 2 * Eigen::Index(inner) * d; }
  Eigen::Index router_size() const { return experts > 1 ? Eigen::Index(experts) * d : 0; }
  Eigen::Index parameter_count() const { return router_size() + experts * expert_size(); }
  /// Parameters one token uses: the router and its top experts.
  Eigen::Index active_count() const { return router_size() + std::min(top, experts) * expert_size(); }
};

/// The tokens each expert serves are gathered and run as one matrix product per expert (as PyTorch's MoE layers do),
/// so the weight gradients are two GEMMs per expert instead of two outer products per token.
struct FfnCache {
  Eigen::MatrixXd X;
  std::vector<std::vector<int>> chosen;   ///< per token, the experts in order
  std::vector<std::vector<double>> gate;  ///< per token, π of each chosen expert
  std::vector<int> load;                  ///< tokens per expert (as first or second choice)
  struct Expert {
    std::vector<Eigen::Index> tokens;  ///< the tokens it serves
    std::vector<int> slot;             ///< for each, the expert's place in that token's `chosen`
    Eigen::RowVectorXd gate;           ///< their π
    Eigen::MatrixXd Xk, Z, out;        ///< its tokens' inputs X_k (gathered once, so every product is a plain GEMM), W₁X_k (pre-ReLU), E_k(X_k)
  };
  std::vector<Expert> experts;
};

/// The top-`top` experts of one logit vector, largest first, ties to the lowest index.
std::vector<int> top_experts(const Eigen::VectorXd& logits, int top);

Eigen::MatrixXd ffn_forward(const FfnShape& s, const double* theta, const Eigen::MatrixXd& X, FfnCache& cache);
/// Adds ∂L/∂θ to grad and returns ∂L/∂X.
Eigen::MatrixXd ffn_backward(const FfnShape& s, const double* theta, const FfnCache& cache, const Eigen::MatrixXd& dY, double* grad);

}  // namespace sparseact::nn
