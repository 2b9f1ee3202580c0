#pragma once
// The plain MLP of paper 002 (nn/plain_mlp.hpp, eqs. (1)–(2), (7)–(8)) trained on the GPU: θ, the
// training set and every workspace stay in device memory for the whole run. A step uploads the batch's
// indices and downloads its loss; nothing else crosses the bus. Host-only API, no CUDA header here
// (docs/DESIGN.md, Devices); the kernels are cuda/plain_train.cu, the CPU stand-in cuda/standin_plain.cpp.
//
//   forward    a_ℓ = W_ℓ x_{ℓ−1} + b_ℓ (one DGEMM),  x_ℓ = m_ℓ ∘ f(a_ℓ)  (ℓ < L),  logits a_L
//              masks m_ℓ, decided on the card by the COMET forward's k-WTA kernel:
//                none       m_ℓ = 1
//                router     COMET's fixed router on the input, c_ℓ = V_ℓ z_{ℓ−1}, m_ℓ = C_k(c_ℓ), z_ℓ = m_ℓ ∘ c_ℓ, z_0 = x_0
//                           (eqs. (4)–(6))
//                layerwise  the router reads the backbone: c_ℓ = V_ℓ x_{ℓ−1}, m_ℓ = C_k(c_ℓ)
//                topk       the backbone's own pre-activations: m_ℓ = C_k(a_ℓ)
//   loss       cross-entropy, the batch mean: L = (1/B) Σ_s −log softmax(a_L)_{y_s, s},  G = (π − onehot(y))/B
//   backward   δ_L = G,  δ_{ℓ−1} = (W_ℓᵀ δ_ℓ) ∘ f′(a_{ℓ−1}) ∘ m_{ℓ−1};  ∇W_ℓ = δ_ℓ x_{ℓ−1}ᵀ,  ∇b_ℓ = δ_ℓ 1
//   SGD        θ ← θ − η ∇L  (nn::Sgd without momentum or decay; one DAXPY over the flat θ)
//   R-op       H v by Pearlmutter's R-operator, masks held fixed (they are piecewise constant in θ):
//                R a_ℓ = V^W_ℓ x_{ℓ−1} + W_ℓ R x_{ℓ−1} + v^b_ℓ,   R x_ℓ = m_ℓ ∘ f′(a_ℓ) ∘ R a_ℓ,   R x_0 = 0
//                R G = (π ∘ R a_L − π (πᵀ R a_L))/B per column
//                R δ_{ℓ−1} = (V^Wᵀ_ℓ δ_ℓ + W_ℓᵀ R δ_ℓ) ∘ f′ ∘ m + (W_ℓᵀ δ_ℓ) ∘ f″(a_{ℓ−1}) ∘ R a_{ℓ−1} ∘ m
//                (Hv)^W_ℓ = R δ_ℓ x_{ℓ−1}ᵀ + δ_ℓ (R x_{ℓ−1})ᵀ,   (Hv)^b_ℓ = R δ_ℓ 1
//   Hutchinson vᵀ H v for Rademacher probes v drawn on the card from (seed, probe, i) by `rademacher`, so
//              the probes never cross the bus and the stand-in draws the same ones
//
// θ's layout is nn::PlainMlp's: layer by layer W_ℓ (N_ℓ × N_{ℓ−1}, column-major), then b_ℓ.
#include <cstdint>
#include <memory>
#include <vector>

#include <Eigen/Core>

namespace sparseact::cuda {

enum class PlainMasks { none, router, layerwise, topk };

struct PlainTrainSpec {
  std::vector<int> widths;  ///< N_0 (input), N_1 … N_{L−1} (hidden), N_L (classes)
  int activation = 0;       ///< 0 ReLU, 1 tanh, 2 identity (nn::PlainActivation's order)
  bool biases = true;
  PlainMasks masks = PlainMasks::none;
  std::vector<std::vector<double>> V;  ///< router, layerwise: V_1 … V_{L−1}, N_ℓ × N_{ℓ−1} column-major
  std::vector<int> k;                  ///< router, layerwise, topk: kept units per hidden layer
  int tie_rule = 0;                    ///< 0 strict, 1 inclusive, 2 exact (routing::TieRule's order)
};

/// ±1 with probability ½ each, a function of (seed, probe, i) alone (splitmix64): the Hutchinson probes of
/// the GPU and of its stand-in are the same numbers.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline double rademacher(std::uint64_t seed, std::uint64_t probe, std::uint64_t i) {
  std::uint64_t z = seed ^ (probe * 0x9e3779b97f4a7c15ULL) ^ (i * 0xbf58476d1ce4e5b9ULL) ^ 0xd1b54a32d192ed03ULL;
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (z >> 63) ? 1.0 : -1.0;
}

/// The device state of one training run (opaque: the module's or the stand-in's).
struct PlainSession;
struct ModuleApi;

/// One training run's θ and data on the GPU. Throws std::runtime_error when CUDA is absent or a call fails,
/// std::invalid_argument on shapes that disagree, a label outside [0, N_L) or an index outside the
/// training set.
class PlainTrainer {
 public:
  /// Uploads θ_0, the training inputs X (N_0 × M) and their labels.
  PlainTrainer(const PlainTrainSpec& spec, const Eigen::VectorXd& theta0, const Eigen::MatrixXd& X, const std::vector<int>& labels);
  ~PlainTrainer();
  PlainTrainer(PlainTrainer&&) noexcept;
  PlainTrainer& operator=(PlainTrainer&&) noexcept;

  /// One SGD step on the training examples `index`: returns the batch loss at θ before the step.
  double sgd_step(const std::vector<Eigen::Index>& index, double lr);
  /// L and ∇L at the current θ on the examples `index`, θ unchanged.
  double gradient(const std::vector<Eigen::Index>& index, Eigen::VectorXd& grad);
  /// H v on the examples `index` (the masks of θ's forward pass held fixed).
  Eigen::VectorXd hvp(const std::vector<Eigen::Index>& index, const Eigen::VectorXd& v);
  /// vᵀ H v for the probes v_p = rademacher(seed, p, ·), p = 0 … probes − 1; their mean estimates tr H.
  Eigen::VectorXd hutchinson(const std::vector<Eigen::Index>& index, int probes, std::uint64_t seed);
  /// The logits a_L of other inputs (N_0 × M'), under the same masks.
  Eigen::MatrixXd logits(const Eigen::MatrixXd& X);
  /// θ, downloaded.
  Eigen::VectorXd theta() const;

 private:
  const ModuleApi* api_ = nullptr;  ///< the table that opened the session closes it
  PlainSession* session_ = nullptr;
};

}  // namespace sparseact::cuda
