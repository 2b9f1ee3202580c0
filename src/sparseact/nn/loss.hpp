#pragma once
// Losses on a batch of network outputs F ∈ R^{d_out×B} (samples as columns), their gradient
// ∂L/∂F and the Hessian-vector product (∂²L/∂F²)·R{F} that Pearlmutter's R-operator needs.
//
//   cross-entropy  L = (1/B) Σ_s −log π_{y_s,s},  π_{·,s} = softmax(F_{·,s})   (paper 001 §3.1: L_CE)
//                  ∂L/∂F = (π − onehot(y))/B,   R{∂L/∂F} = (π ⊙ R{F} − π (πᵀR{F}))/B  per column
//   MSE            L = (1/(B d_out)) Σ_{i,s} (F_{i,s} − Y_{i,s})²   (PyTorch's MSELoss, mean reduction)
//                  ∂L/∂F = 2(F − Y)/(B d_out),   R{∂L/∂F} = 2 R{F}/(B d_out)
//   weighted cross-entropy, class weights w ∈ R^{d_out} (PyTorch's CrossEntropyLoss(weight=w), mean reduction;
//   paper 003 §6.2's "weighted" loss):
//                  L = Σ_s w_{y_s} ℓ_s / Σ_s w_{y_s},  ℓ_s = −log π_{y_s,s}
//                  ∂L/∂F_{·,s} = w_{y_s} (π_{·,s} − onehot(y_s)) / Σ_s w_{y_s}      (equal weights: the unweighted loss)
#include <string>
#include <vector>

#include <Eigen/Core>

namespace sparseact::nn {

//   token cross-entropy (next-token prediction with a loss mask; paper 004 §4): F ∈ R^{V×(T·B)} holds the logits of
//                  every position of B sequences of length T (sequence after sequence), batch.y ∈ R^{T×B} the target
//                  token of each position or −1 where the loss is masked (torch's ignore_index); L is the mean over
//                  the M unmasked positions, ∂L/∂F = (π − onehot(y))/M there and 0 elsewhere
enum class LossKind { cross_entropy, mse, token_cross_entropy };

/// A batch: inputs as columns; `labels` (in [0, d_out)) for cross-entropy, targets `y` (d_out×B)
/// for MSE. The other one may be left empty.
struct Batch {
  Eigen::MatrixXd x;
  std::vector<int> labels;
  Eigen::MatrixXd y;
  std::vector<Eigen::Index> index;  ///< each sample's position in its data set (per-example masks read it), or empty
  Eigen::Index size() const { return x.cols(); }
};

/// L(F) and, if dF is not null, ∂L/∂F. Throws std::invalid_argument on mismatched targets.
double loss_value(LossKind kind, const Eigen::MatrixXd& F, const Batch& batch, Eigen::MatrixXd* dF = nullptr);
/// The same with class weights for cross-entropy (above). Empty weights: exactly the unweighted call.
/// Throws std::invalid_argument for weights with MSE, weights not d_out long, a negative or non-finite
/// weight, or a batch whose labels' weights sum to 0 (torch returns NaN there).
double loss_value(LossKind kind, const Eigen::MatrixXd& F, const Batch& batch, Eigen::MatrixXd* dF,
                  const Eigen::VectorXd& class_weights);

/// Per-sample losses ℓ_s (so L = mean_s ℓ_s).
Eigen::VectorXd loss_per_sample(LossKind kind, const Eigen::MatrixXd& F, const Batch& batch);

/// (∂²L/∂F²) RF, the loss's Gauss–Newton middle factor applied to RF.
Eigen::MatrixXd loss_hessian_product(LossKind kind, const Eigen::MatrixXd& F, const Eigen::MatrixXd& RF,
                                     const Batch& batch);

LossKind parse_loss(const std::string& name);  ///< "cross_entropy" | "mse"
const char* to_string(LossKind kind) noexcept;

}  // namespace sparseact::nn
