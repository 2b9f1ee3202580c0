#pragma once
// What paper 001's training experiments share: a Fashion-MNIST subset (our stand-in for MNIST,
// CIFAR-10 and ImageNet; say so in outputs), seeded epoch-wise batches, and a training loop that
// calls back at logging steps.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/rng.hpp>
#include <sparseact/nn/backprop.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/mlp.hpp>
#include <sparseact/nn/optim.hpp>

namespace sparseact::flatness {

/// The note every analysis that trains on it repeats.
inline constexpr const char* kFashionMnistNote =
    "Data: Fashion-MNIST (Debian's dataset-fashion-mnist) stands in for the paper's MNIST / CIFAR-10 / ImageNet-1K.";

struct Dataset {
  Eigen::MatrixXd x;        ///< features × N, standardised
  std::vector<int> labels;  ///< N labels in 0..9
  std::string description;
};

/// The first n images of a split (n ≤ 0: all) after `pool`×`pool` average pooling (pool ∈ {1, 2, 4,
/// 7}; 28/pool pixels a side), standardised with the training split's pixel mean and deviation over
/// those images. The first n of Fashion-MNIST's files are class-balanced to within a few percent.
/// Throws InputError if the dataset is missing (install dataset-fashion-mnist).
Dataset fashion_mnist(const std::string& split, Eigen::Index n, int pool);

/// Epoch-wise shuffled batches: epoch e's order is a Fisher–Yates permutation from
/// Rng(seed, stream_id(stream, e)), so the batches do not depend on the thread count.
class BatchStream {
 public:
  BatchStream(const Dataset& data, Eigen::Index batch_size, std::uint64_t seed, std::uint64_t stream);
  /// The next batch (the last batch of an epoch is dropped when short, as DataLoader(drop_last)).
  const nn::Batch& next();
  /// The batch `next` returned last (the one the latest step trained on).
  const nn::Batch& current() const { return batch_; }
  long epoch() const { return epoch_; }

 private:
  void shuffle();
  const Dataset* data_;
  Eigen::Index b_;
  std::uint64_t seed_, stream_;
  std::vector<Eigen::Index> order_;
  Eigen::Index pos_ = 0;
  long epoch_ = -1;
  nn::Batch batch_;
};

/// A batch of the given columns (for evaluation sets).
nn::Batch make_batch(const Dataset& data, Eigen::Index first, Eigen::Index count);

/// Trains for `steps` steps with `opt` (nn::Sgd or nn::AdamW: step(θ, g, lr)) at lr = schedule(t);
/// `on_log(t)` runs before step t = 0 and after every `log_every` steps (t = steps taken), and
/// after the last step. Returns the last batch loss.
template <class Optimizer>
double train(const nn::Mlp& net, Eigen::VectorXd& theta, Optimizer& opt, const nn::LrSchedule& schedule,
             BatchStream& stream, long steps, long log_every, const std::function<void(long)>& on_log) {
  nn::ForwardCache fwd;
  Eigen::VectorXd grad;
  double L = 0.0;
  if (on_log) on_log(0);
  for (long t = 0; t < steps; ++t) {
    const nn::Batch& b = stream.next();
    nn::forward(net, theta, b.x, fwd);
    L = nn::backward(net, theta, fwd, b, nn::LossKind::cross_entropy, grad);
    opt.step(theta, grad, schedule(t));
    if (on_log && ((t + 1) % log_every == 0 || t + 1 == steps)) on_log(t + 1);
  }
  return L;
}

/// Fraction of correct argmax predictions on `data` (evaluated in chunks).
double accuracy(const nn::Mlp& net, const Eigen::VectorXd& theta, const Dataset& data);

/// Weight-decay mask for AdamW/SGD: 1 on Linear weights (K, V, W_in, W_out), 0 on biases, LN
/// parameters and zeroth biases (paper 001 and PyTorch's recipe exclude them).
Eigen::VectorXd weights_only_decay_mask(const nn::Mlp& net);

}  // namespace sparseact::flatness
