#pragma once
// COMET forward passes of several nets on the GPU (paper 002, eqs. (4)–(8); host-only API, no CUDA
// header here, docs/DESIGN.md Devices). Per hidden layer: one cublasDgemmStridedBatched for every net's router
// (C = V_ℓ Z), one for every net's backbone (A = W_ℓ X), then one kernel per (net, input) column that
// applies C_k (the three tie rules of routing/kwta, decided by the same comparisons in double, so the
// masks equal the CPU's exactly) and writes m_ℓ, z_ℓ = m_ℓ ∘ c_ℓ and x_ℓ = m_ℓ ∘ f(a_ℓ + b_ℓ). The output
// layer is one more batched GEMM. Dense on purpose: on a GPU the GEMMs are cheap where A.8's gathers
// are not. The CPU twin is routing::comet_forward_batch; a [cuda] test compares them.
#include <vector>

#include <Eigen/Core>

namespace sparseact::cuda {

struct CometGpuNets {
  std::vector<int> widths;  ///< N_0, N_1 … N_{L−1} (masked), N_L
  int nets = 1;
  std::vector<std::vector<double>> V;  ///< hidden layer ℓ: nets blocks of N_ℓ × N_{ℓ−1}, column-major, net after net
  std::vector<std::vector<double>> W;  ///< layer ℓ = 1 … L, as V; empty: route only (no backbone)
  std::vector<std::vector<double>> b;  ///< layer ℓ = 1 … L: nets blocks of N_ℓ; empty: no biases
  std::vector<int> k;                  ///< kept units per hidden layer
  int tie_rule = 0;                    ///< 0 strict, 1 inclusive, 2 exact (routing::TieRule's order)
  int activation = 0;                  ///< 0 ReLU, 1 tanh, 2 identity (nn::PlainActivation's order)
};

struct CometGpuOutput {
  std::vector<Eigen::MatrixXd> masks, x;  ///< [net · (L−1) + ℓ − 1]: N_ℓ × M (x empty when routing only)
  std::vector<Eigen::MatrixXd> output;    ///< per net: a_L, N_L × M (empty when routing only)
};

/// Every net on the columns of X0 (N_0 × M). Throws std::runtime_error when CUDA is absent or a call fails,
/// std::invalid_argument on shapes that disagree.
CometGpuOutput comet_forward(const CometGpuNets& nets, const Eigen::MatrixXd& X0);

}  // namespace sparseact::cuda
