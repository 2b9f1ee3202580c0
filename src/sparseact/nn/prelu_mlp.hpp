#pragma once
// The MLP of paper 003, eqs. (1)–(2), with trainable PReLU (Definition 3.1):
//
//   σ_γ(z) = z (z ≥ 0), γz (z < 0);   x^{(j+1)} = σ_{γ^{(j)}} • (A^{(j)} x^{(j)} + b^{(j)}),  j = 0 … J − 1;
//   f(x) = A^{(J)} x^{(J)} + b^{(J)}   (affine output)
//
// One γ per neuron as eq. (1) (γ^{(j)} ∈ R^{d_{j+1}}), or one per layer as PyTorch's nn.PReLU() (shared).
// θ holds, layer by layer, A^{(j)} (d_{j+1} × d_j, column-major), b^{(j)}, then γ^{(j)} for hidden layers;
// parameter_count is the count as built: Σ_{j<J} d_{j+1}(d_j + 1 + g_j) + d_{J+1}(d_J + 1), g_j = d_{j+1} or 1.
// (The printed P([d]) = Σ_{j=0}^{J} d_j(d_{j+1} + 2) differs; ERRATA 003.) ReLU is γ = 0, identity γ = 1.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

namespace sparseact::nn {

struct PreluMlp {
  std::vector<int> widths;    ///< d_0 (input), d_1 … d_J (hidden), d_{J+1} (output)
  bool shared_gamma = false;  ///< one γ per layer (nn.PReLU()) instead of one per neuron (eq. (1))
};

Eigen::Index parameter_count(const PreluMlp& net);
/// A, b from U(−d_j^{−1/2}, d_j^{−1/2}) (nn.Linear's law), γ = `gamma0` (PyTorch's 0.25 by default).
Eigen::VectorXd init_prelu_mlp(const PreluMlp& net, std::uint64_t seed, std::uint64_t stream, double gamma0 = 0.25);

struct PreluForward {
  std::vector<Eigen::MatrixXd> x, z;  ///< x^{(0)} … x^{(J)}; pre-activations z^{(0)} … z^{(J)} (the last is the output)
};
PreluForward prelu_forward(const PreluMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X);
/// ∂/∂θ of Σ ⟨G, f⟩ (G: d_{J+1} × M), γ included: ∂σ_γ(z)/∂γ = z for z < 0, 0 otherwise.
Eigen::VectorXd prelu_gradient(const PreluMlp& net, const Eigen::VectorXd& theta, const PreluForward& fwd, const Eigen::MatrixXd& G);

/// As an nn/train Model.
class PreluModel {
 public:
  explicit PreluModel(PreluMlp net) : net_(std::move(net)) {}
  const Eigen::MatrixXd& forward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& x) {
    fwd_ = prelu_forward(net_, theta, x);
    return fwd_.z.back();
  }
  void backward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& G, Eigen::VectorXd& grad) { grad = prelu_gradient(net_, theta, fwd_, G); }
  const PreluMlp& net() const { return net_; }

 private:
  PreluMlp net_;
  PreluForward fwd_;
};

}  // namespace sparseact::nn
