#pragma once
// COMET forward passes of several nets on the GPU (paper 002, eqs. (4)–(8); host-only API, no CUDA
// header here, docs/DESIGN.md Devices). Per hidden layer: one cublasDgemmStridedBatched for every net's router
// (C = V_ℓ Z), one for every net's backbone (A = W_ℓ X), then one kernel per (net, input) column that
// applies C_k (the three tie rules of routing/kwta, decided by the same comparisons in double, so the
// masks equal the CPU's exactly) and writes m_ℓ, z_ℓ = m_ℓ ∘ c_ℓ and x_ℓ = m_ℓ ∘ f(a_ℓ + b_ℓ). The output
// layer is one more batched GEMM. Dense on purpose: on a GPU the GEMMs are cheap where A.8's gathers
// are not. The CPU twin is routing::comet_forward_batch; a [cuda] test compares them.
#include <cstddef>
#include <stdexcept>
#include <vector>

#include <Eigen/Core>

namespace sparseact::cuda {

/// How the GPU decides C_k per column: by counting (O(N²), the kernel verified on an H100) or by radix
/// selection (O(N), cuda/kwta_select.hpp; the same masks by construction, tested on the CPU, not yet run
/// on a GPU). routing/comet_batch picks it from SPARSEACT_KWTA_KERNEL=count|select (default count).
enum class KwtaKernel { count, select };

struct CometGpuNets {
  std::vector<int> widths;  ///< N_0, N_1 … N_{L−1} (masked), N_L
  int nets = 1;
  std::vector<std::vector<double>> V;  ///< hidden layer ℓ: nets blocks of N_ℓ × N_{ℓ−1}, column-major, net after net
  std::vector<std::vector<double>> W;  ///< layer ℓ = 1 … L, as V; empty: route only (no backbone)
  std::vector<std::vector<double>> b;  ///< layer ℓ = 1 … L: nets blocks of N_ℓ; empty: no biases
  std::vector<int> k;                  ///< kept units per hidden layer
  int tie_rule = 0;                    ///< 0 strict, 1 inclusive, 2 exact (routing::TieRule's order)
  int activation = 0;                  ///< 0 ReLU, 1 tanh, 2 identity (nn::PlainActivation's order)
  KwtaKernel kwta_kernel = KwtaKernel::count;
};

/// What the GPU hands back: per net, per hidden layer ℓ = 1 … L−1, the mask m_ℓ and the backbone's x_ℓ
/// (N_ℓ × M), and per net the output a_L (N_L × M). The order of the flat vectors is fixed here and only
/// here: the module writes through mask()/x()/output() and routing/comet_batch reads through them, so
/// the producer and the consumer cannot disagree (they did once: the module wrote layer after layer
/// while the consumer read net after net, and every multi-net forward came back scrambled).
struct CometGpuOutput {
  int nets = 0;
  int hidden_layers = 0;  ///< L − 1
  bool backbone = false;  ///< false: routing only (no x, no output)

  CometGpuOutput() = default;
  CometGpuOutput(int nets, int hidden_layers, bool backbone)
      : nets(nets), hidden_layers(hidden_layers), backbone(backbone),
        masks_(std::size_t(nets) * std::size_t(hidden_layers)),
        x_(backbone ? masks_.size() : 0),
        output_(backbone ? std::size_t(nets) : 0),
        kept_index_(masks_.size()), kept_value_(masks_.size()), kept_count_(masks_.size()) {}

  /// Net b's hidden layer ℓ (1-based, as in the paper) in the flat vectors: net after net.
  std::size_t at(int b, int l) const {
    if (b < 0 || b >= nets || l < 1 || l > hidden_layers) throw std::out_of_range("CometGpuOutput: no such net or hidden layer");
    return std::size_t(b) * std::size_t(hidden_layers) + std::size_t(l - 1);
  }
  Eigen::MatrixXd& mask(int b, int l) { return masks_[at(b, l)]; }
  const Eigen::MatrixXd& mask(int b, int l) const { return masks_[at(b, l)]; }
  Eigen::MatrixXd& x(int b, int l) { return x_.at(at(b, l)); }
  const Eigen::MatrixXd& x(int b, int l) const { return x_.at(at(b, l)); }
  Eigen::MatrixXd& output(int b) { return output_.at(std::size_t(b)); }
  const Eigen::MatrixXd& output(int b) const { return output_.at(std::size_t(b)); }
  /// With CometWant::kept: the kept units of net b's hidden layer ℓ per column, in index order (rows: the most any
  /// column kept; −1 below a column's count), x_ℓ at them (with a backbone; 0 below the count), and the counts.
  Eigen::MatrixXi& kept_index(int b, int l) { return kept_index_[at(b, l)]; }
  const Eigen::MatrixXi& kept_index(int b, int l) const { return kept_index_[at(b, l)]; }
  Eigen::MatrixXd& kept_value(int b, int l) { return kept_value_[at(b, l)]; }
  const Eigen::MatrixXd& kept_value(int b, int l) const { return kept_value_[at(b, l)]; }
  Eigen::VectorXi& kept_count(int b, int l) { return kept_count_[at(b, l)]; }
  const Eigen::VectorXi& kept_count(int b, int l) const { return kept_count_[at(b, l)]; }
  /// One net's masks m_1 … m_{L−1}, in layer order.
  std::vector<Eigen::MatrixXd> masks_of(int b) const {
    std::vector<Eigen::MatrixXd> m;
    for (int l = 1; l <= hidden_layers; ++l) m.push_back(mask(b, l));
    return m;
  }

 private:
  std::vector<Eigen::MatrixXd> masks_, x_, output_;
  std::vector<Eigen::MatrixXi> kept_index_;
  std::vector<Eigen::MatrixXd> kept_value_;
  std::vector<Eigen::VectorXi> kept_count_;
};

/// What one run of a plan brings back from the card: only what the caller reads crosses the bus.
struct CometWant {
  bool masks = true;   ///< m_ℓ of every hidden layer, dense
  bool x = true;       ///< x_ℓ of every hidden layer (with a backbone), dense
  bool output = true;  ///< a_L (with a backbone)
  bool kept = false;   ///< the kept units' indices (int32) and x there, compacted on the card: about k/N of the dense bytes
  std::vector<int> layers = {};  ///< the hidden layers (1-based) whose masks, x or kept units come back; empty: all
};

struct CometPlanSession;  // the module's or the stand-in's state (opaque)
struct ModuleApi;

/// Several nets kept on the card for many forward passes (issue 51, finding 3): their V, W and b are uploaded once,
/// and the plan owns its cuBLAS handle and its buffers, which grow to the widest run and are reused. Each run gives
/// its inputs and its k per hidden layer (so one plan serves every p_k), and downloads only what it wants.
/// Not thread-safe: one plan per thread. Throws as comet_forward does.
class CometGpuPlan {
 public:
  /// Checks the nets (check_comet_nets, with their k) and uploads their weights.
  explicit CometGpuPlan(const CometGpuNets& nets);
  ~CometGpuPlan();
  CometGpuPlan(CometGpuPlan&&) noexcept;
  CometGpuPlan& operator=(CometGpuPlan&&) noexcept;
  CometGpuPlan(const CometGpuPlan&) = delete;
  CometGpuPlan& operator=(const CometGpuPlan&) = delete;
  /// Every net on the columns of X0 (N_0 × M) with k[ℓ − 1] kept units in hidden layer ℓ. What `want` leaves out
  /// stays empty (0 × 0) in the output.
  CometGpuOutput run(const Eigen::MatrixXd& X0, const std::vector<int>& k, CometWant want = {});

 private:
  const ModuleApi* api_ = nullptr;
  CometPlanSession* session_ = nullptr;
};

/// Every net on the columns of X0 (N_0 × M): CometGpuPlan(nets).run(X0, nets.k). Throws std::runtime_error when CUDA is absent or a call fails,
/// std::invalid_argument on shapes that disagree, k < 1, an unknown tie rule, a hidden width wider than the
/// k-WTA kernel takes (cuda/kwta_limits.hpp) or a NaN in a routing vector — the module and its stand-in alike.
CometGpuOutput comet_forward(const CometGpuNets& nets, const Eigen::MatrixXd& X0);


}  // namespace sparseact::cuda
