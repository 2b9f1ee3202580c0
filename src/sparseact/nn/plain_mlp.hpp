#pragma once
// The plain MLP of paper 002 (COMET), eqs. (1)–(2), with per-example masks on the hidden layers,
// eqs. (7)–(8):
//
//   a_ℓ = W_ℓ x_{ℓ−1} + b_ℓ,    x_ℓ = m_ℓ ∘ f(a_ℓ)    (ℓ = 1 … L−1),    a_L = W_L x_{L−1} + b_L,
//
// f ∈ {ReLU, tanh, identity}; the output a_L is never masked. Weights and biases start from
// U(−N_{ℓ−1}^{−1/2}, N_{ℓ−1}^{−1/2}) (§4). Masks are constants of the forward pass: a mask policy
// (COMET routing, Top-k, dropout, …) computes them, and gradients treat them as fixed.
// Unlike nn/mlp (paper 001's LayerNorm-ed blocks), no normalisation.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace sparseact::nn {

enum class PlainActivation { relu, tanh, identity };
/// "relu", "tanh" or "identity"; throws std::invalid_argument otherwise.
PlainActivation parse_plain_activation(const std::string& name);

struct PlainMlp {
  std::vector<int> widths;  ///< N_0 (input), N_1, …, N_L (output)
  PlainActivation f = PlainActivation::relu;
  bool biases = true;
};

/// θ holds, layer by layer, W_ℓ (N_ℓ × N_{ℓ−1}, column-major) then b_ℓ (when biases).
Eigen::Index parameter_count(const PlainMlp& net);
/// Every entry of layer ℓ from U(−N_{ℓ−1}^{−1/2}, N_{ℓ−1}^{−1/2}), Rng(seed, stream_id(stream, ℓ)).
Eigen::VectorXd init_plain_mlp(const PlainMlp& net, std::uint64_t seed, std::uint64_t stream);

/// x_0 … x_{L−1} and a_1 … a_L for the columns of X0 (N_0 × M).
struct PlainForward {
  std::vector<Eigen::MatrixXd> x, a;
};
/// `masks`: m_1 … m_{L−1} (each N_ℓ × M), or empty for the unmasked network. Throws
/// std::invalid_argument on shapes that do not fit.
PlainForward plain_forward(const PlainMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X0,
                           const std::vector<Eigen::MatrixXd>& masks = {});

/// A mask policy decides m_ℓ during the pass, from layer ℓ's pre-activation a_ℓ and input x_{ℓ−1} (N_ℓ × M
/// and N_{ℓ−1} × M): Top-k reads a_ℓ, a layer-wise router reads x_{ℓ−1}, others ignore both. It returns
/// m_ℓ (entries may be scales, as inverted dropout's 1/p), or an empty matrix for no mask.
using MaskRule = std::function<Eigen::MatrixXd(std::size_t l, const Eigen::MatrixXd& a_l, const Eigen::MatrixXd& x_prev)>;
/// The forward pass with masks decided layer by layer; `masks` receives m_1 … m_{L−1} (empty when the
/// rule returned no masks), ready for plain_gradient.
PlainForward plain_forward(const PlainMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X0, const MaskRule& rule,
                           std::vector<Eigen::MatrixXd>& masks);

/// ∂/∂θ of Σ ⟨G, a_L⟩ (G = ∂loss/∂a_L, N_L × M), masks held constant: exact backpropagation.
Eigen::VectorXd plain_gradient(const PlainMlp& net, const Eigen::VectorXd& theta, const PlainForward& fwd,
                               const Eigen::MatrixXd& G, const std::vector<Eigen::MatrixXd>& masks = {});

/// The signals S_ℓ = ∂a_L/∂a_ℓ (N_L × N_ℓ, ℓ = 1 … L) at input column `j` of a forward pass, masks
/// held constant: S_L = I, S_{ℓ−1} = S_ℓ W_ℓ diag(m_{ℓ−1} ∘ f′(a_{ℓ−1})).
std::vector<Eigen::MatrixXd> plain_signals(const PlainMlp& net, const Eigen::VectorXd& theta, const PlainForward& fwd, Eigen::Index j,
                                           const std::vector<Eigen::MatrixXd>& masks = {});

/// ∂a_L/∂θ at input column `j` (N_L × |θ|), from the signals: ∂a_L/∂W_ℓ,ik = S_ℓ[:, i] x_{ℓ−1,k}, ∂a_L/∂b_ℓ,i = S_ℓ[:, i].
Eigen::MatrixXd plain_jacobian(const PlainMlp& net, const Eigen::VectorXd& theta, const PlainForward& fwd, Eigen::Index j,
                               const std::vector<Eigen::MatrixXd>& masks = {});

/// The empirical NTK (paper 002, eq. (10)) of inputs i and j of a forward pass: ∂a_L(i)/∂θ (∂a_L(j)/∂θ)ᵀ,
/// N_L × N_L, as the sum over layers of eq. (11)'s W_ℓ blocks, with x_{ℓ−1} as its input (ERRATA 002):
///   K_ℓ^W(i, j) = ⟨x_{ℓ−1}(i), x_{ℓ−1}(j)⟩ S_ℓ(i) S_ℓ(j)ᵀ,
/// plus the bias blocks S_ℓ(i) S_ℓ(j)ᵀ when the net has biases. `blocks` (optional) receives the W_ℓ blocks.
Eigen::MatrixXd plain_ntk(const PlainMlp& net, const Eigen::VectorXd& theta, const PlainForward& fwd, Eigen::Index i, Eigen::Index j,
                          const std::vector<Eigen::MatrixXd>& masks = {}, std::vector<Eigen::MatrixXd>* blocks = nullptr);

}  // namespace sparseact::nn
