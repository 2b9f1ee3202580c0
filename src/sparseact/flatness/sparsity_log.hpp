#pragma once
// Activation sparsity over training (paper 001 §3.3, §6, §7.1): the forward-only sparsity of
// layer_stats.hpp (fraction of activated neurons α ≠ Δy, flat-area fraction, zeros) per block,
// logged at chosen steps on the batch the network trains on, and the averages the paper reports:
//   per block l at log i:   s_{i,l} = a field of forward_sparsity(θ_{t_i}, X_{t_i})[l]
//   layer average at log i: s̄_i = (1/L) Σ_l s_{i,l}                          (Figures 5c, 6e)
//   training sparsity:      (1/I) Σ_i s̄_i  — integrated over steps, i.e. averaged over logs (§7.1)
//   testing sparsity:       (1/L) Σ_l of forward_sparsity on test data after training (§7.1)
// Averages are plain sums in log (then block) order, so they do not depend on threads.
//
//   SparsityLog log;
//   nn::train(..., [&](long t, const nn::Batch& b) { if (t > 0) log.record(t, net, theta, b.x); });
//   double training = log.integrated(&BlockStats::activation_density);
#include <cstddef>
#include <vector>

#include <Eigen/Core>

#include <sparseact/flatness/layer_stats.hpp>
#include <sparseact/nn/mlp.hpp>

namespace sparseact::flatness {

/// A per-block quantity of BlockStats, e.g. &BlockStats::flat_fraction.
using BlockField = double BlockStats::*;

/// That quantity for every block.
std::vector<double> per_block(const std::vector<BlockStats>& blocks, BlockField field);
/// Its average over blocks (NaN without blocks).
double block_mean(const std::vector<BlockStats>& blocks, BlockField field);

struct SparsityLog {
  std::vector<long> steps;                      ///< t of every log
  std::vector<std::vector<BlockStats>> blocks;  ///< [log][block]: forward_sparsity at that log

  /// Logs forward_sparsity(net, θ, x) as step t.
  void record(long t, const nn::Mlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& x);

  std::size_t size() const { return steps.size(); }
  /// s_{i,l} for every block l at log i.
  std::vector<double> at(std::size_t i, BlockField field) const { return per_block(blocks.at(i), field); }
  /// s_{i,l} of block l over the logs (its curve).
  std::vector<double> curve(std::size_t l, BlockField field) const;
  /// s̄_i over the logs: the layer-averaged curve.
  std::vector<double> layer_mean_curve(BlockField field) const;
  /// (1/I) Σ_i s_{i,l} for every block l: each block's value integrated over steps.
  std::vector<double> integrated_per_block(BlockField field) const;
  /// (1/I) Σ_i s̄_i: §7.1's training sparsity (NaN without logs).
  double integrated(BlockField field) const;
};

}  // namespace sparseact::flatness
