#pragma once
// The classification expert of paper 003 §6.2 and App. D.3.1: the PReLU MLP of eqs. (1)–(2) with
// BatchNorm1d applied before each PReLU ("we apply BatchNorm1d before the PReLU activation function"):
//
//   z^{(j)} = A^{(j)} x^{(j)} + b^{(j)}
//   u^{(j)} = s^{(j)} ⊙ (z^{(j)} − μ^{(j)}) / √(v^{(j)} + ε) + t^{(j)}          BatchNorm1d, per neuron
//   x^{(j+1)} = σ_{γ^{(j)}}(u^{(j)}),  j = 0 … J − 1;   f(x) = A^{(J)} x^{(J)} + b^{(J)}   (affine output)
//
// with torch.nn.BatchNorm1d's semantics (eps 1e-5, momentum 0.1):
//   training  μ, v are the batch mean and *biased* batch variance of z over the batch's columns, and the
//             running statistics move:  m ← (1 − 0.1) m + 0.1 μ,  r ← (1 − 0.1) r + 0.1 v·B/(B − 1)
//             (the *unbiased* variance), starting from m = 0, r = 1;
//   eval      μ = m, v = r: each column's output depends on that column alone.
// A batch of one column has no variance: torch refuses it in training mode, and so do we.
//
// θ holds, layer by layer, A^{(j)} (d_{j+1} × d_j, column-major), b^{(j)}, then for hidden layers the
// BatchNorm weight s^{(j)} and bias t^{(j)} (d_{j+1} each) and γ^{(j)} (one per neuron as eq. (1), or one
// per layer as PyTorch's nn.PReLU()); nn/prelu_mlp.hpp is the same network without BatchNorm and keeps the
// same conventions. Init: A, b as nn.Linear (U(−d_j^{−1/2}, d_j^{−1/2})), s = 1, t = 0 (BatchNorm1d's),
// γ = 0.25 (nn.PReLU's). The running statistics are model state, not parameters: they live outside θ.
//
// The Linear bias b^{(j)} of a hidden layer is cancelled by the batch mean in training mode (its gradient
// is exactly zero there); it is kept because torch's nn.Linear keeps it, so the parameter counts are the
// paper's architecture's.
#include <cstdint>
#include <utility>
#include <vector>

#include <Eigen/Core>

namespace sparseact::nn {

struct PreluBnMlp {
  std::vector<int> widths;    ///< d_0 (input), d_1 … d_J (hidden), d_{J+1} (output)
  bool shared_gamma = false;  ///< one γ per layer (nn.PReLU()) instead of one per neuron (eq. (1))
  double eps = 1e-5;          ///< BatchNorm1d's ε
  double momentum = 0.1;      ///< BatchNorm1d's momentum of the running statistics
};

/// Σ_{j<J} d_{j+1}(d_j + 3 + g_j) + d_{J+1}(d_J + 1), g_j = d_{j+1} or 1. Throws std::invalid_argument on
/// fewer than two widths, a width < 1, ε ≤ 0 or a momentum outside [0, 1].
Eigen::Index parameter_count(const PreluBnMlp& net);
/// A, b from U(−d_j^{−1/2}, d_j^{−1/2}) drawn from Rng(seed, stream_id(stream, j)), as nn/prelu_mlp;
/// s = 1, t = 0, γ = `gamma0`.
Eigen::VectorXd init_prelu_bn_mlp(const PreluBnMlp& net, std::uint64_t seed, std::uint64_t stream, double gamma0 = 0.25);

/// BatchNorm1d's running statistics of every hidden layer (model state, outside θ).
struct BnRunning {
  std::vector<Eigen::VectorXd> mean, var;  ///< m^{(j)}, r^{(j)}
  long batches = 0;                        ///< num_batches_tracked
};
/// m = 0, r = 1 (BatchNorm1d's reset_running_stats).
BnRunning init_bn_running(const PreluBnMlp& net);

enum class BnMode { train, eval };

/// What the backward pass needs.
struct PreluBnForward {
  BnMode mode = BnMode::train;
  std::vector<Eigen::MatrixXd> x;        ///< x^{(0)} … x^{(J)}: the inputs of the affine maps
  std::vector<Eigen::MatrixXd> xhat;     ///< (z − μ)/√(v + ε) per hidden layer
  std::vector<Eigen::MatrixXd> u;        ///< the BatchNorm outputs (PReLU inputs) per hidden layer
  std::vector<Eigen::VectorXd> mean, var;  ///< μ, v used per hidden layer (training: batch, biased; eval: running)
  std::vector<Eigen::VectorXd> inv_std;  ///< 1/√(v + ε)
  Eigen::MatrixXd out;                   ///< f(x), d_{J+1} × B
};

/// The forward pass over the columns of X. Training mode uses batch statistics (X needs ≥ 2 columns)
/// and leaves `running` untouched (update_bn_running moves it); eval mode reads `running`.
/// Throws std::invalid_argument on mismatched sizes.
PreluBnForward prelu_bn_forward(const PreluBnMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X, BnMode mode,
                                const BnRunning& running);
/// torch's update after a training-mode forward pass: m ← (1 − momentum) m + momentum μ,
/// r ← (1 − momentum) r + momentum v·B/(B − 1).
void update_bn_running(const PreluBnMlp& net, const PreluBnForward& fwd, BnRunning& running);

/// ∂/∂θ of Σ ⟨G, f⟩ (G: d_{J+1} × B) at the forward pass `fwd`, exactly: in training mode through the batch
/// statistics μ and v (every column's output depends on the whole batch), in eval mode with μ, v fixed.
/// ∂σ_γ(u)/∂γ = u for u < 0, 0 otherwise.
Eigen::VectorXd prelu_bn_gradient(const PreluBnMlp& net, const Eigen::VectorXd& theta, const PreluBnForward& fwd, const Eigen::MatrixXd& G);

/// As an nn/train Model, with a train/eval switch and its running statistics: in training mode every
/// forward call moves the running statistics, as a torch module's forward does.
class PreluBnModel {
 public:
  explicit PreluBnModel(PreluBnMlp net) : net_(std::move(net)), running_(init_bn_running(net_)) {}
  const Eigen::MatrixXd& forward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& x);
  void backward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& G, Eigen::VectorXd& grad) {
    grad = prelu_bn_gradient(net_, theta, fwd_, G);
  }
  /// torch's module.train() / module.eval().
  void train(bool on = true) { mode_ = on ? BnMode::train : BnMode::eval; }
  void eval() { train(false); }
  BnMode mode() const { return mode_; }
  /// Eval-mode outputs of X's columns, 1000 at a time, whatever the current mode; nothing moves.
  Eigen::MatrixXd predict(const Eigen::VectorXd& theta, const Eigen::MatrixXd& X) const;

  const PreluBnMlp& net() const { return net_; }
  const BnRunning& running() const { return running_; }
  BnRunning& running() { return running_; }

 private:
  PreluBnMlp net_;
  BnRunning running_;
  BnMode mode_ = BnMode::train;
  PreluBnForward fwd_;
};

}  // namespace sparseact::nn
