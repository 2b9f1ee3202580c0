#pragma once
// Many COMET networks at once (paper 002, eqs. (4)–(8)), using what the masks make sparse (A.8):
// a hidden layer needs its pre-activation a_ℓ only on the kept units m_ℓ, and its input x_{ℓ−1} (and the
// router's z_{ℓ−1}) is zero off m_{ℓ−1}. So after the first layer (two dense GEMMs on the inputs),
// per input and layer:
//
//   router    c_ℓ = Σ_{i ∈ m_{ℓ−1}} V_ℓ[:, i] z_{ℓ−1,i}          N_ℓ · k_{ℓ−1} (contiguous columns of V_ℓ)
//   mask      m_ℓ = C_k(c_ℓ),  z_ℓ = c_ℓ on m_ℓ                  O(N_ℓ)
//   backbone  a_ℓ[r] = Σ_{i ∈ m_{ℓ−1}} W_ℓ[r, i] x_{ℓ−1,i} + b_ℓ[r],  r ∈ m_ℓ;  x_ℓ = f(a_ℓ) on m_ℓ    k_ℓ · k_{ℓ−1}
//
// instead of 2 N_ℓ N_{ℓ−1} for a dense layer: at p_k = 0.1 and N = 512 a deep layer costs ~ 1/10 of its
// dense router and ~ 1/100 of its dense backbone. Nets run in parallel (parallel_for, serial BLAS inside),
// each net's arithmetic in a fixed order: the same bits for any thread count.
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/device.hpp>
#include <sparseact/cuda/comet_forward.hpp>
#include <sparseact/routing/pair_study.hpp>

namespace sparseact::routing {

/// A layer's kept units per input, ascending, and the backbone's x_ℓ on them (k_max × M, padded with −1 / 0).
struct SparseColumns {
  Eigen::Index rows = 0;  ///< N_ℓ
  Eigen::MatrixXi index;
  Eigen::MatrixXd value;
  Eigen::VectorXi count;  ///< kept units per input (k_ℓ, or fewer under the strict rule's ties)
  /// The 0/1 mask m_ℓ (N_ℓ × M).
  Eigen::MatrixXd mask() const;
  /// x_ℓ as a dense N_ℓ × M matrix.
  Eigen::MatrixXd dense() const;
};

struct CometBatchForward {
  std::vector<SparseColumns> hidden;  ///< ℓ = 1 … L−1
  Eigen::MatrixXd output;             ///< a_L, N_L × M
};

/// Every net of `nets` on the columns of X0 at p_k, nets in parallel on `threads` threads (≤ 0: OpenMP's default).
/// Device::cuda runs every net on the GPU (cuda/comet_forward.hpp: dense batched GEMMs and a k-WTA kernel;
/// the nets must share their widths, activation, biases and tie rule): the same masks, activations to rounding.
std::vector<CometBatchForward> comet_forward_batch(const std::vector<const CometNet*>& nets, const Eigen::MatrixXd& X0, double p_k,
                                                   int threads = 0, Device device = Device::cpu);

/// The nets of comet_forward_batch kept on the GPU for many inputs and p_k (cuda::CometGpuPlan, issue 51): their
/// weights are uploaded once, and forward(X0, p_k) equals comet_forward_batch(nets, X0, p_k, ·, Device::cuda). The
/// nets must outlive it. One per thread.
class CometGpuBatch {
 public:
  explicit CometGpuBatch(const std::vector<const CometNet*>& nets);
  std::vector<CometBatchForward> forward(const Eigen::MatrixXd& X0, double p_k);

 private:
  std::vector<const CometNet*> nets_;
  cuda::CometGpuPlan plan_;
};

/// A router kept on the GPU for many batches of inputs (cuda::CometGpuPlan): masks(X0, p_k) equals
/// comet_masks_gpu(router, X0, p_k), and only the masks cross the bus. The router must outlive it. One per thread.
class CometGpuMasks {
 public:
  explicit CometGpuMasks(const CometRouter& router);
  std::vector<Eigen::MatrixXd> masks(const Eigen::MatrixXd& X0, double p_k);

 private:
  const CometRouter* router_;
  cuda::CometGpuPlan plan_;
};

/// The router's masks m_1 … m_{L−1} of the columns of X0 at p_k on the GPU (comet_masks' twin).
std::vector<Eigen::MatrixXd> comet_masks_gpu(const CometRouter& router, const Eigen::MatrixXd& X0, double p_k);

/// The GPU's k-WTA kernel from SPARSEACT_KWTA_KERNEL=count|select (cuda/comet_forward.hpp): count unless
/// select is asked for, until select has run on a GPU. Throws std::invalid_argument for another value.
cuda::KwtaKernel kwta_kernel_from_environment();

}  // namespace sparseact::routing
