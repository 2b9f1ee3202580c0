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
//              or paper 003's trainable PReLU (activation 3): x_ℓ = σ_γ(a_ℓ) = a_ℓ (a ≥ 0), γ a_ℓ (a < 0), one γ per neuron
//              or per layer, no masks, θ laid out as nn::PreluMlp (W_ℓ, b_ℓ, then γ_ℓ for the hidden layers)
//   loss       cross-entropy, the batch mean: L = (1/B) Σ_s −log softmax(a_L)_{y_s, s},  G = (π − onehot(y))/B
//              or MSE (targets Y): L = (1/(B N_L)) Σ (a_L − Y)²,  G = 2(a_L − Y)/(B N_L)
//   backward   δ_L = G,  δ_{ℓ−1} = (W_ℓᵀ δ_ℓ) ∘ f′(a_{ℓ−1}) ∘ m_{ℓ−1};  ∇W_ℓ = δ_ℓ x_{ℓ−1}ᵀ,  ∇b_ℓ = δ_ℓ 1
//              PReLU: ∂L/∂γ_i = Σ_s (W_ℓᵀ δ_ℓ)_{i,s} a_{i,s} [a_{i,s} < 0], and δ gated by γ_i where a < 0, by 1 elsewhere
//   SGD        θ ← θ − η ∇L  (nn::Sgd without momentum or decay; one DAXPY over the flat θ)
//   Adam       torch.optim.Adam (nn::AdamW with weight decay 0): m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g²,
//              θ ← θ − (η/(1−β₁ᵗ)) m/(√v/√(1−β₂ᵗ) + ε), one kernel over θ
//   R-op       H v by Pearlmutter's R-operator, masks held fixed (they are piecewise constant in θ; not for PReLU):
//                R a_ℓ = V^W_ℓ x_{ℓ−1} + W_ℓ R x_{ℓ−1} + v^b_ℓ,   R x_ℓ = m_ℓ ∘ f′(a_ℓ) ∘ R a_ℓ,   R x_0 = 0
//                R G = (π ∘ R a_L − π (πᵀ R a_L))/B per column (MSE: 2 R a_L/(B N_L))
//                R δ_{ℓ−1} = (V^Wᵀ_ℓ δ_ℓ + W_ℓᵀ R δ_ℓ) ∘ f′ ∘ m + (W_ℓᵀ δ_ℓ) ∘ f″(a_{ℓ−1}) ∘ R a_{ℓ−1} ∘ m
//                (Hv)^W_ℓ = R δ_ℓ x_{ℓ−1}ᵀ + δ_ℓ (R x_{ℓ−1})ᵀ,   (Hv)^b_ℓ = R δ_ℓ 1
//   Hutchinson vᵀ H v for Rademacher probes v drawn on the card from (seed, probe, i) by `rademacher`, so
//              the probes never cross the bus and the stand-in draws the same ones
//
// θ's layout is nn::PlainMlp's: layer by layer W_ℓ (N_ℓ × N_{ℓ−1}, column-major), then b_ℓ (and, PReLU, γ_ℓ).
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/cuda/comet_forward.hpp>
#include <sparseact/cuda/kwta_limits.hpp>

namespace sparseact::cuda {

enum class PlainMasks { none, router, layerwise, topk };
enum class PlainLoss { cross_entropy, mse };
/// What a step does after the gradient: nothing (gradient only), SGD or Adam.
enum class PlainUpdate { none, sgd, adam };
inline constexpr int kPrelu = 3;  ///< PlainTrainSpec::activation for paper 003's trainable PReLU

struct PlainTrainSpec {
  std::vector<int> widths;  ///< N_0 (input), N_1 … N_{L−1} (hidden), N_L (classes or outputs)
  int activation = 0;       ///< 0 ReLU, 1 tanh, 2 identity (nn::PlainActivation's order), kPrelu
  bool biases = true;       ///< PReLU nets always have them
  bool shared_gamma = false;  ///< PReLU: one γ per layer (nn.PReLU()), else one per neuron (eq. (1))
  PlainLoss loss = PlainLoss::cross_entropy;
  double adam_beta1 = 0.9, adam_beta2 = 0.999, adam_eps = 1e-8;  ///< torch.optim.Adam's defaults
  PlainMasks masks = PlainMasks::none;
  std::vector<std::vector<double>> V;  ///< router, layerwise: V_1 … V_{L−1}, N_ℓ × N_{ℓ−1} column-major
  std::vector<int> k;                  ///< router, layerwise, topk: kept units per hidden layer
  int tie_rule = 0;                    ///< 0 strict, 1 inclusive, 2 exact (routing::TieRule's order)
  KwtaKernel kwta_kernel = KwtaKernel::count;  ///< how the card decides C_k (the same masks either way)
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

/// Throws std::invalid_argument unless the spec and the training data fit together: widths ≥ 1, k (and, routed, V)
/// for every hidden layer, PReLU without masks and with biases, labels in [0, N_L) for cross-entropy or targets
/// N_L × M for MSE; with masks, each hidden layer's k ≥ 1, tie rule and width against the device's k-WTA limits
/// (cuda/kwta_limits.hpp). The module and its stand-in both call it, before any upload, so they refuse the same input.
inline void check_session(const PlainTrainSpec& spec, const Eigen::MatrixXd& X, const std::vector<int>& labels, const Eigen::MatrixXd& Y,
                          const KwtaLimits& limits) {
  const auto bad = [](const char* why) { throw std::invalid_argument(std::string("cuda::PlainTrainer: ") + why); };
  if (spec.widths.size() < 2) bad("need an input width and at least one layer");
  for (int w : spec.widths)
    if (w < 1) bad("every width must be at least 1");
  const std::size_t L = spec.widths.size() - 1;
  const bool routed = spec.masks == PlainMasks::router || spec.masks == PlainMasks::layerwise;
  if ((spec.masks != PlainMasks::none && spec.k.size() != L - 1) || (routed && spec.V.size() != L - 1))
    bad("masks need k (and, routed, V) for every hidden layer");
  for (std::size_t l = 1; routed && l < L; ++l)
    if (spec.V[l - 1].size() != std::size_t(spec.widths[l]) * std::size_t(spec.widths[l - 1])) bad("a router matrix has the wrong size");
  for (std::size_t l = 1; spec.masks != PlainMasks::none && l < L; ++l)
    check_kwta(limits, spec.kwta_kernel, spec.widths[l], spec.k[l - 1], spec.tie_rule, "cuda::PlainTrainer");
  if (spec.activation < 0 || spec.activation > kPrelu) bad("unknown activation");
  if (spec.activation == kPrelu && (spec.masks != PlainMasks::none || !spec.biases)) bad("a PReLU net has biases and no masks");
  if (X.rows() != spec.widths[0] || X.cols() == 0) bad("the training inputs have the wrong dimension, or none");
  if (spec.loss == PlainLoss::mse) {
    if (Y.rows() != spec.widths[L] || Y.cols() != X.cols()) bad("MSE needs targets N_L × M");
  } else {
    if (std::size_t(X.cols()) != labels.size()) bad("the training inputs and labels disagree");
    for (int y : labels)
      if (y < 0 || y >= spec.widths[L]) bad("a label outside [0, classes)");
  }
}

/// The device state of one training run (opaque: the module's or the stand-in's).
struct PlainSession;
struct ModuleApi;

/// One training run's θ and data on the GPU. Throws std::runtime_error when CUDA is absent or a call fails,
/// std::invalid_argument on shapes that disagree, a label outside [0, N_L) or an index outside the
/// training set.
class PlainTrainer {
 public:
  /// Uploads θ_0, the training inputs X (N_0 × M) and their labels (cross-entropy) or targets Y (N_L × M, MSE).
  PlainTrainer(const PlainTrainSpec& spec, const Eigen::VectorXd& theta0, const Eigen::MatrixXd& X, const std::vector<int>& labels,
               const Eigen::MatrixXd& Y = {});
  ~PlainTrainer();
  PlainTrainer(PlainTrainer&&) noexcept;
  PlainTrainer& operator=(PlainTrainer&&) noexcept;

  /// One SGD step on the training examples `index`: returns the batch loss at θ before the step.
  double sgd_step(const std::vector<Eigen::Index>& index, double lr);
  /// One Adam step (state kept on the card from the first call): returns the batch loss before the step.
  double adam_step(const std::vector<Eigen::Index>& index, double lr);
  /// L and ∇L at the current θ on the examples `index`, θ unchanged.
  double gradient(const std::vector<Eigen::Index>& index, Eigen::VectorXd& grad);
  /// H v on the examples `index` (the masks of θ's forward pass held fixed). Throws for a PReLU net.
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
