#pragma once
// Small networks and batches for the Hessian-vector product tests (test_nn_hvp_block.cpp,
// test_nn_hvp_quadratic.cpp): a block's configuration in one call, Gaussian matrices from a stream,
// and a batch with inputs, regression targets and class labels.
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/rng.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/mlp.hpp>

namespace hvp_nets {

inline sparseact::nn::BlockConfig block(sparseact::nn::ActivationKind act, bool ln, bool affine, bool bias, bool zb, bool res,
                                        Eigen::Index n) {
  sparseact::nn::BlockConfig b;
  b.n = n;
  b.activation.kind = act;
  b.layernorm = ln;
  b.ln_affine = affine;
  b.ln_bias = bias;
  b.zeroth_bias = zb;
  b.residual = res;
  return b;
}

inline Eigen::MatrixXd random_matrix(Eigen::Index rows, Eigen::Index cols, double sd, std::uint64_t seed, std::uint64_t stream) {
  Eigen::MatrixXd m(rows, cols);
  sparseact::fill_random(m.data(), static_cast<std::size_t>(m.size()), sparseact::Distribution::normal, sd, seed, stream);
  return m;
}

inline sparseact::nn::Batch test_batch(const sparseact::nn::MlpConfig& c, Eigen::Index B, std::uint64_t seed) {
  sparseact::nn::Batch b;
  b.x = random_matrix(c.d_in, B, 1.5, seed, 3);
  b.y = random_matrix(c.d_out, B, 1.0, seed, 4);
  for (Eigen::Index s = 0; s < B; ++s) b.labels.push_back(static_cast<int>((s * 7 + 1) % c.d_out));
  return b;
}

/// A network, its loss and its batch size, named for a test's INFO.
struct NetCase {
  std::string name;
  sparseact::nn::MlpConfig config;
  sparseact::nn::LossKind loss;
  Eigen::Index batch;
};

/// The networks both test files run: small ones at odd sizes with every block option (activations,
/// LayerNorm with and without affine or bias, zeroth bias, residual, no value layer) and both
/// losses, and one of depth d = 400, above OpenBLAS's k-block (GEMM_Q), with stacked products.
inline std::vector<NetCase> common_nets() {
  using sparseact::nn::ActivationKind;
  using sparseact::nn::LossKind;
  using A = ActivationKind;
  const auto cfg = [](Eigen::Index d_in, Eigen::Index d, std::vector<sparseact::nn::BlockConfig> blocks) {
    sparseact::nn::MlpConfig c;
    c.d_in = d_in;
    c.d = d;
    c.d_out = 3;
    c.blocks = std::move(blocks);
    return c;
  };
  sparseact::nn::BlockConfig single = block(A::relu, true, false, false, false, true, 5);
  single.value_layer = false;
  return {
      {"DB-MLP J-SquaredReLU, LN affine+bias, residual, CE, odd sizes",
       cfg(3, 5, {block(A::j_squared_relu, true, true, true, true, true, 7), block(A::j_squared_relu, true, true, true, true, true, 3)}),
       LossKind::cross_entropy, 7},
      {"plain ReLU, no LN, no residual, MSE", cfg(4, 6, {block(A::relu, false, false, false, false, false, 5)}), LossKind::mse, 5},
      {"GELU, LN bias only / LN without affine, zeroth bias, CE",
       cfg(3, 5, {block(A::gelu, true, false, true, false, true, 6), block(A::squared_relu, true, false, false, true, false, 4)}),
       LossKind::cross_entropy, 6},
      {"single hidden Linear layers (no value layer), CE", cfg(3, 5, {single, single}), LossKind::cross_entropy, 4},
      {"d = 400 (dgemm splits k), stacked, MSE", cfg(3, 400, {block(A::squared_relu, true, true, true, false, true, 32)}), LossKind::mse, 320},
  };
}

}  // namespace hvp_nets
