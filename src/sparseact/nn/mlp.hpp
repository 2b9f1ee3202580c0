#pragma once
// A small LayerNorm-ed (DB-)MLP as plain data: its configuration and the layout of all parameters
// in one flat vector θ (paper 001 §3.1, §4.1).
//
//   h^0 = W_in x + b_in                                  input Linear,  x ∈ R^{d_in}, h ∈ R^d
//   for l = 1..L:
//     u^l = LN^l(h^{l-1})  (or u^l = h^{l-1} without LayerNorm)
//         LN(h) = γ ⊙ (h − μ)/√(σ² + ε) + β,  μ, σ² the mean and (biased) variance of h's d entries;
//         γ present iff affine, β iff bias, ε ≥ 0 (ε = 0 allowed)
//     DB-MLP^l(u) = MLP^l(u + d^l) = V^l σ(K^l(u + d^l) + b_K^l) + b_V^l     // paper 001, §4.1
//         (d^l the zeroth bias, added to the hidden feature before K^l; without it, MLP^l(u))
//         K^l ∈ R^{n^l×d}, b_K^l ∈ R^{n^l}, V^l ∈ R^{d×n^l}, b_V^l ∈ R^d            // §3.1
//         or, without the value layer, σ(K^l(u + d^l) + b_K^l) (a single hidden Linear + σ, n^l = d, as
//         in §8.5's tiny pure MLP)
//     h^l = h^{l-1} + DB-MLP^l(u^l)  with a residual connection, else DB-MLP^l(u^l)
//   f = W_out h^L + b_out                                output Linear (logits), f ∈ R^{d_out}
//
// The paper places LayerNorm "before zeroth biases" (Theorem 3), which is the order above.
//
// θ is one Eigen::VectorXd; every tensor is a contiguous column-major slice of it, tensors of one
// layer are contiguous, and layers are in order: layer 0 is the input Linear, layers 1..L the
// blocks, layer L+1 the output Linear. Optimizers and Hessian estimators see θ; per-layer
// Hessian traces use `Mlp::layers`.
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/ops/segments.hpp>
#include <sparseact/nn/activation.hpp>

namespace sparseact::nn {

struct BlockConfig {
  Eigen::Index n = 16;          ///< width n^l of K^l's output (the hidden neurons)
  Activation activation{};      ///< σ
  bool layernorm = true;        ///< LN before the block
  bool ln_affine = true;        ///< LN has the scale γ
  bool ln_bias = true;          ///< LN has the shift β
  double ln_eps = 1e-5;         ///< ε ≥ 0
  bool zeroth_bias = false;     ///< DB-MLP: d^l added before K^l
  bool residual = true;         ///< h^l = h^{l-1} + block(h^{l-1})
  bool value_layer = true;      ///< V^l, b_V^l present; false: the block is σ(K u + b_K), needs n = d
};

struct MlpConfig {
  Eigen::Index d_in = 4;    ///< input dimension
  Eigen::Index d = 8;       ///< hidden-feature dimension d
  Eigen::Index d_out = 3;   ///< number of outputs (classes)
  std::vector<BlockConfig> blocks;
};

enum class ParamKind { weight, bias, ln_scale, ln_shift, zeroth_bias };

/// One parameter tensor: θ.segment(offset, rows·cols), read as a column-major rows×cols matrix.
struct ParamInfo {
  std::string name;  ///< e.g. "block1.K", "input.W", "block2.ln.gamma"
  ParamKind kind = ParamKind::weight;
  int layer = 0;
  Eigen::Index offset = 0, rows = 0, cols = 1;
  Eigen::Index size() const { return rows * cols; }
};

/// One layer's parameters: θ.segment(offset, size).
struct LayerInfo {
  std::string name;  ///< "input", "block1", ..., "output"
  Eigen::Index offset = 0, size = 0;
  int first_param = 0, num_params = 0;  ///< indices into Mlp::params
};

/// Indices into Mlp::params of one block's tensors; −1 where absent (V and b_V without a value layer).
struct BlockParams {
  int gamma = -1, beta = -1, d = -1, K = -1, b_K = -1, V = -1, b_V = -1;
};

struct Mlp {
  MlpConfig config;
  std::vector<ParamInfo> params;
  std::vector<LayerInfo> layers;
  std::vector<BlockParams> blocks;
  int W_in = -1, b_in = -1, W_out = -1, b_out = -1;
  Eigen::Index num_params = 0;
};

/// Lays out the parameters; throws std::invalid_argument on a bad configuration.
Mlp make_mlp(const MlpConfig& config);

/// Mlp::layers as segments of θ (core/ops/segments.hpp), named after the layers; they partition θ.
inline std::vector<ops::Segment> layer_segments(const Mlp& net) {
  std::vector<ops::Segment> out;
  for (const LayerInfo& l : net.layers) out.push_back({l.offset, l.size, l.name});
  return out;
}

using MatrixMap = Eigen::Map<Eigen::MatrixXd>;
using ConstMatrixMap = Eigen::Map<const Eigen::MatrixXd>;

/// The tensor `index` of θ as a matrix (a view: writes go to θ).
inline MatrixMap param_view(const Mlp& net, Eigen::VectorXd& theta, int index) {
  const ParamInfo& p = net.params[static_cast<std::size_t>(index)];
  return MatrixMap(theta.data() + p.offset, p.rows, p.cols);
}
inline ConstMatrixMap param_view(const Mlp& net, const Eigen::VectorXd& theta, int index) {
  const ParamInfo& p = net.params[static_cast<std::size_t>(index)];
  return ConstMatrixMap(theta.data() + p.offset, p.rows, p.cols);
}

/// Index of the tensor named `name`, or −1.
int find_param(const Mlp& net, const std::string& name);

/// Standard initialisation, drawn from (seed, stream) — the same θ for any thread count: weights
/// N(0, 1/fan_in) (PyTorch-like scale), biases 0, γ = 1, β = 0, zeroth biases 0 (as the paper
/// initialises them, §4.1).
Eigen::VectorXd init_params(const Mlp& net, std::uint64_t seed, std::uint64_t stream = 0);

}  // namespace sparseact::nn
