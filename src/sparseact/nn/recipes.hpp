#pragma once
// The recipe the training analyses repeat: an MLP of identical blocks, AdamW that decays the weight
// matrices only, and test accuracy. (Paper 001's Algorithms 1–2 are flatness/refine.hpp's hooks.)
#include <Eigen/Core>

#include <sparseact/nn/data.hpp>
#include <sparseact/nn/mlp.hpp>
#include <sparseact/nn/optim.hpp>

namespace sparseact::nn {

/// Input Linear d_in → d, `blocks` copies of `block` with width n (block.n is overwritten), output
/// Linear d → d_out.
MlpConfig uniform_mlp_config(Eigen::Index d_in, Eigen::Index d, Eigen::Index n, int blocks, BlockConfig block,
                             Eigen::Index d_out);

/// Weight-decay mask: 1 on Linear weights (W_in, K, V, W_out), 0 on biases, LayerNorm parameters and
/// zeroth biases (paper 001 and PyTorch's usual recipe exclude them).
Eigen::VectorXd weights_only_decay_mask(const Mlp& net);

/// AdamW (PyTorch's β, ε) at learning rate lr with decoupled weight decay wd on the weights only.
AdamW adamw_weights_only(const Mlp& net, double lr, double wd);

/// Fraction of correct argmax predictions of f_θ on `data`'s labels (evaluated 2048 samples at a time).
double accuracy(const Mlp& net, const Eigen::VectorXd& theta, const Dataset& data);

}  // namespace sparseact::nn
