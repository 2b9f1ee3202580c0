#pragma once
// The mixture-of-experts baseline of paper 002 §5.2.1: each hidden layer of the plain MLP (eqs. (1)–(2))
// split into E = ⌊1/p_k⌋ experts of n_e = round(p_k N_ℓ) consecutive units (E n_e ≤ N_ℓ; units beyond
// E n_e are never used), and a top-1 router per layer with one hidden layer that reads the layer's input,
// as a sparse MoE layer does (§4, "the gating and backbone networks at each layer take the same input"):
//
//   h = ReLU(U₁ x_{ℓ−1} + c₁),   g = softmax(U₂ h + c₂) ∈ R^E,   e* = argmax g (lowest index on ties)
//   x_ℓ = σ · m_{e*} ∘ f(W_ℓ x_{ℓ−1} + b_ℓ),   m_{e*} the units of expert e*
//
// trainable: σ = g_{e*}, so the router learns through the gate's probability (an argmax alone passes no
// gradient; ERRATA 002); fixed: σ = 1 and the router stays at its initialisation (its gradient is 0).
// θ holds the backbone's parameters (nn::PlainMlp's layout), then per hidden layer U₁ (H × N_{ℓ−1}), c₁,
// U₂ (E × H), c₂; every block starts U(−fan_in^{−1/2}, fan_in^{−1/2}).
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include <sparseact/nn/plain_mlp.hpp>

namespace sparseact::routing {

struct MoeMlp {
  nn::PlainMlp backbone;
  double p_k = 0.5;
  int router_hidden = 32;  ///< H
  bool trainable = true;
  int experts() const;                 ///< E = ⌊1/p_k⌋ (at least 1)
  int expert_size(std::size_t l) const;  ///< n_e = max(1, round(p_k N_ℓ)), capped at N_ℓ / E
};

Eigen::Index parameter_count(const MoeMlp& net);
Eigen::VectorXd init_moe_mlp(const MoeMlp& net, std::uint64_t seed, std::uint64_t stream);

/// What backward needs of a forward pass.
struct MoeForward {
  std::vector<Eigen::MatrixXd> x, a, h, g;  ///< x_0 … x_{L−1}, a_1 … a_L; router h, g per hidden layer
  std::vector<std::vector<int>> chosen;     ///< e* per hidden layer and input
};
MoeForward moe_forward(const MoeMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X0);
/// ∂/∂θ of Σ ⟨G, a_L⟩, through the gates when trainable (a fixed router's block is 0).
Eigen::VectorXd moe_gradient(const MoeMlp& net, const Eigen::VectorXd& theta, const MoeForward& fwd, const Eigen::MatrixXd& G);

/// As an nn/train Model.
class MoeModel {
 public:
  explicit MoeModel(MoeMlp net) : net_(std::move(net)) {}
  const Eigen::MatrixXd& forward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& x) {
    fwd_ = moe_forward(net_, theta, x);
    return fwd_.a.back();
  }
  void backward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& dlogits, Eigen::VectorXd& grad) {
    grad = moe_gradient(net_, theta, fwd_, dlogits);
  }
  const MoeMlp& net() const { return net_; }

 private:
  MoeMlp net_;
  MoeForward fwd_;
};

}  // namespace sparseact::routing
