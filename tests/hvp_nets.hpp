#pragma once
// Small networks and batches for the Hessian-vector product tests (test_nn_hvp_block.cpp,
// test_nn_hvp_quadratic.cpp): a block's configuration in one call, Gaussian matrices from a stream,
// and a batch with inputs, regression targets and class labels.
#include <cstdint>
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

}  // namespace hvp_nets
