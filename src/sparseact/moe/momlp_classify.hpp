#pragma once
// Paper 003 §6.2 and App. D.3–D.4 in miniature: classification with a MoMLP whose prototypes are K-means
// centroids of the training inputs, against one MLP of width w√K trained on all the data.
//
//   prototypes  p_1 … p_K = K-means centroids of the training inputs (§6.2; moe/kmeans.hpp)
//   routing     x ↦ its Voronoi cell, lowest index on ties (eq. (5); moe/voronoi.hpp's voronoi_cell)
//   experts     f̃_k: 4 hidden layers of width w, each Linear → BatchNorm1d → PReLU, affine output to the
//               classes (App. D.3.1; nn/prelu_bn_mlp.hpp), trained on the training points of cell k alone
//               (eq. (40)) by AdamW, lr 1e-3, PyTorch's other defaults (weight decay 0.01)
//   losses      unweighted cross-entropy, or weighted: class c's weight ∝ 1 / (its frequency in cell k)
//               (§6.2), torch's CrossEntropyLoss(weight=w)
//   inference   a test point is classified by the expert of its cell
//   baseline    the same architecture, width round(w√K) (App. D.3.2: w√K, K = 4 → 2w), on all the data
//
// A cell with fewer than the batch's points trains with batch = its size; a cell with fewer than 2 training
// points cannot train BatchNorm (torch refuses a batch of one) and predicts the majority class of its
// training points, or of the whole training set when it has none (ties: the lowest class); such cells are
// counted. Every run is single-threaded (serial BLAS) and depends on (seed, replicate) alone: the weighted
// and unweighted MoMLPs of one replicate share their prototypes, initialisations and batch orders.
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/moe/kmeans.hpp>
#include <sparseact/moe/momlp.hpp>
#include <sparseact/nn/data.hpp>
#include <sparseact/nn/prelu_bn_mlp.hpp>

namespace sparseact::moe {

/// The first n images of a Fashion-MNIST split (n ≤ 0: all), 784 × n, pixels scaled to [0, 1] as App. D.4
/// scales CIFAR's (no standardisation). Throws InputError when the data set is missing or too small.
nn::Dataset fashion_mnist_pixels(const std::string& split, Eigen::Index n);

struct ClassifyConfig {
  int K = 4;                 ///< prototypes (App. D.3.2: K = 4)
  int width = 64;            ///< w, each expert's hidden width (App. D.3.1: 1000)
  int hidden_layers = 4;     ///< App. D.3.1: four hidden layers for classification
  int epochs = 5;            ///< not stated by the paper
  Eigen::Index batch = 128;  ///< not stated by the paper
  double lr = 1e-3;          ///< AdamW's learning rate (App. D.3.1)
  bool weighted = false;     ///< class weights ∝ 1/frequency in the cell (§6.2's "weighted" loss)
  bool shared_gamma = true;  ///< one PReLU γ per layer, as nn.PReLU()
  KMeansOptions kmeans = {};
  std::uint64_t seed = 1;
  std::uint64_t replicate = 0;  ///< the run: prototypes, initialisations and batch orders depend on it
};

struct ClassifyRun {
  double test_acc = 0, train_acc = 0;
  /// Per Voronoi cell of the replicate's prototypes (for the baseline too: the same cells as the MoMLPs of its
  /// replicate, so its accuracy on each cell compares with the expert's): training and test points, and the
  /// accuracy on the cell's test points (NaN for none).
  std::vector<double> cell_train, cell_test, cell_test_acc;
  int degenerate_cells = 0;                   ///< cells with < 2 training points, answering a majority class
  Eigen::Index params_expert = 0;             ///< one expert's parameters (the baseline: its own)
  Eigen::Index params_total = 0;              ///< all experts' (the baseline: its own)
  Eigen::Index params_baseline = 0;           ///< the width-round(w√K) baseline's
  Eigen::MatrixXd prototypes;                 ///< p_1 … p_K as columns
  double kmeans_inertia = 0;
  int kmeans_iterations = 0;
};

/// The expert (or baseline) network: d_in, `width` × hidden_layers, classes.
nn::PreluBnMlp classify_net(const ClassifyConfig& cfg, int d_in, int classes, int width);
/// §6.2's weighted loss: w_c = n / (C · n_c) for the C classes present among `labels` (n of them, n_c of
/// class c), 0 for absent classes (they never occur in the cell, so their weight never enters the loss).
Eigen::VectorXd cell_class_weights(const std::vector<int>& labels, int classes);

/// Trains the MoMLP of `cfg` on `train` and scores it on `test`. Throws InputError on a bad config
/// (K < 1 or more than the training points, width < 1, hidden_layers < 1, epochs < 0, batch < 2, lr ≤ 0).
ClassifyRun train_momlp_classifier(const ClassifyConfig& cfg, const nn::Dataset& train, const nn::Dataset& test);
/// The baseline: one network of width round(w√K) trained on all of `train` (cfg.weighted ignored: the
/// paper's baseline has one loss).
ClassifyRun train_classify_baseline(const ClassifyConfig& cfg, const nn::Dataset& train, const nn::Dataset& test);

}  // namespace sparseact::moe
