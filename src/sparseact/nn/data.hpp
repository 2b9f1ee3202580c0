#pragma once
// Data for the training loop (nn/train.hpp): a data set held as columns, Fashion-MNIST subsets (our
// stand-in for MNIST, CIFAR-10 and ImageNet; outputs say so), and seeded epoch-wise batches.
//
// Epoch e's order is a Fisher–Yates permutation drawn from Rng(seed, stream_id(stream, e)), so the
// batches depend on (seed, stream) alone — not on the thread count, nor on who else draws numbers.
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/nn/loss.hpp>

namespace sparseact::nn {

/// The note every analysis that trains on Fashion-MNIST repeats.
inline constexpr const char* kFashionMnistNote =
    "Data: Fashion-MNIST (Debian's dataset-fashion-mnist) stands in for the paper's MNIST / CIFAR-10 / ImageNet-1K.";

/// N samples as columns: inputs x, and labels (classification, cross-entropy) or targets y
/// (regression, MSE), or both; the one not used may be left empty.
struct Dataset {
  Eigen::MatrixXd x;        ///< features × N
  std::vector<int> labels;  ///< N labels in [0, d_out), or empty
  Eigen::MatrixXd y;        ///< d_out × N targets, or empty
  std::string description;
  Eigen::Index size() const { return x.cols(); }
};

/// The first n images of a split (n ≤ 0: all) after `pool`×`pool` average pooling (pool ∈ {1, 2, 4,
/// 7}; 28/pool pixels a side), standardised with the training split's pixel mean and deviation over
/// those images. The first n of Fashion-MNIST's files are class-balanced to within a few percent.
/// Throws InputError if the dataset is missing (install dataset-fashion-mnist) or holds fewer than n
/// images.
Dataset fashion_mnist(const std::string& split, Eigen::Index n, int pool);

/// Epoch e's order of N samples: the identity permuted by Fisher–Yates, i = N−1, …, 1 swapping
/// i with Rng(seed, stream_id(stream, e)).below(i + 1). Fills `order` (resized to N).
void epoch_permutation(std::vector<Eigen::Index>& order, Eigen::Index N, std::uint64_t seed, std::uint64_t stream,
                       std::uint64_t epoch);

/// Epoch-wise shuffled batches of a data set (which must outlive the stream): epoch e visits the
/// samples in epoch_permutation(·, N, seed, stream, e) order, b at a time; the last batch of an epoch
/// is dropped when short, as DataLoader(drop_last=True). Labels and targets travel with their inputs.
class BatchStream {
 public:
  /// Throws InputError unless 1 ≤ batch_size ≤ N and the labels/targets match the inputs.
  BatchStream(const Dataset& data, Eigen::Index batch_size, std::uint64_t seed, std::uint64_t stream);
  /// The next batch (a reference to the stream's own batch, valid until the next call).
  const Batch& next();
  /// Epochs begun so far minus one (−1 before the first batch).
  long epoch() const { return epoch_; }
  Eigen::Index batch_size() const { return b_; }

 private:
  const Dataset* data_;
  Eigen::Index b_;
  std::uint64_t seed_, stream_;
  std::vector<Eigen::Index> order_;
  Eigen::Index pos_ = 0;
  long epoch_ = -1;
  Batch batch_;
};

/// The batch of samples first, …, first + count − 1 (e.g. a fixed evaluation set).
Batch make_batch(const Dataset& data, Eigen::Index first, Eigen::Index count);

}  // namespace sparseact::nn
