#pragma once
// Algorithm 2 of paper 003 (App. D.2): a mixture of PReLU MLP experts ("MoMLP") routed by prototypes.
//
//   1. Discovering prototypes. p_1 … p_K uniform in the bounding box of the training inputs; K one-hidden-layer
//      PReLU nets F̂ = (f̂_1, …, f̂_K) and p trained together on eq. (39)
//          Σ_{(x,y)} ℓ( softmax(−‖x − p_i‖)_{i=1..K}ᵀ F̂(x), y ),
//      so each net is pulled towards the inputs near its prototype.
//   2. Deepening. Before each net's output layer, Linear layers initialised to I + N(0, σ²) with bias 0, each
//      followed by PReLU with γ = 1 (σ₁ = identity): at σ = 0 the function is unchanged, so stage 3 starts
//      where stage 1 stopped; σ > 0 gives the new layers a gradient (the paper's "small Gaussian noise").
//   3. MoMLP training, eq. (40): each f̂_k alone, on the training points of its Voronoi cell
//          { x : k ∈ argmin_j ‖x − p_j‖ }  (eq. (5): the lowest index wins exact ties).
//   Inference routes x by eq. (5) to one expert (voronoi_cell).
//
// App. D.3: w = 1000, 3 hidden layers, learnable PReLU, Adam lr 1e-4 with PyTorch's defaults (nn::AdamW with
// weight decay 0 is torch.optim.Adam). The paper states neither epochs, batch size, the stage-1 length nor σ:
// MomlpSettings holds our choices and the analyses record them.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/device.hpp>
#include <sparseact/nn/data.hpp>
#include <sparseact/nn/prelu_mlp.hpp>

namespace sparseact::moe {

/// Stage 1's model, eq. (39), as an nn/train Model. θ = [p_1 … p_K (n × K, column-major), θ_1 … θ_K], every
/// θ_k laid out as nn::PreluMlp's. Output F(x) = Σ_k s_k(x) f̂_k(x), s = softmax(−‖x − p_i‖).
class SoftPrototypeModel {
 public:
  SoftPrototypeModel(int K, nn::PreluMlp expert);
  int K() const { return K_; }
  const nn::PreluMlp& expert() const { return expert_; }
  Eigen::Index parameter_count() const;
  /// Prototypes uniform in the bounding box of `inputs` (columns), experts by nn::init_prelu_mlp.
  Eigen::VectorXd init(const Eigen::MatrixXd& inputs, std::uint64_t seed, std::uint64_t stream, double gamma0 = 0.25) const;
  Eigen::MatrixXd prototypes(const Eigen::VectorXd& theta) const;
  Eigen::VectorXd expert_theta(const Eigen::VectorXd& theta, int k) const;

  const Eigen::MatrixXd& forward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& X);
  /// g = (∂F/∂θ)ᵀ G. With d_k = ‖x − p_k‖ and s = softmax(−d):
  ///   ∂L/∂f̂_k = s_k G,   ∂L/∂d_k = −s_k ⟨G, f̂_k − F⟩,   ∂d_k/∂p_k = (p_k − x)/d_k  (0 where x = p_k).
  void backward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& G, Eigen::VectorXd& grad);

 private:
  int K_;
  nn::PreluMlp expert_;
  Eigen::Index expert_size_;
  Eigen::MatrixXd X_, D_, S_, F_;
  std::vector<nn::PreluForward> fwd_;
};

struct PreluNet {
  nn::PreluMlp net;
  Eigen::VectorXd theta;
};

/// Step 2: `added` hidden layers of the last hidden width inserted before the output layer, each A = I + σZ
/// (Z standard normal, drawn from Rng(seed, stream_id(stream, layer))), b = 0, γ = 1. Throws std::invalid_argument
/// for a net without a hidden layer, added < 0 or σ < 0.
PreluNet deepen(const PreluNet& shallow, int added, double sigma, std::uint64_t seed, std::uint64_t stream);

/// How long each expert trains in eq. (40). The paper trains "each MoMLP independently" and states no budget.
enum class Budget {
  epochs,  ///< `epochs` passes over its own cell: K experts together cost one model's epochs on all data
  steps,   ///< as many optimizer steps as `epochs` passes over the whole training set: the same wall time as one
           ///< model when the K experts train in parallel, as App. D.2 proposes (one machine each)
};

struct MomlpSettings {
  int K = 4;                ///< prototypes = experts
  int width = 1000;         ///< w (App. D.3.1)
  int hidden_layers = 3;    ///< after deepening (App. D.3.1); stage 1 has one
  int stage1_epochs = 10;   ///< eq. (39) (unstated in the paper)
  int epochs = 50;          ///< eq. (40), per expert over its cell (unstated)
  int batch = 64;           ///< (unstated) a cell smaller than this trains in one batch of its size
  double lr = 1e-4;         ///< Adam, both stages (App. D.3.1)
  double sigma = 1e-2;      ///< deepening noise (unstated)
  double gamma0 = 0.25;     ///< PReLU's initial γ (PyTorch's)
  bool shared_gamma = false;
  Budget budget = Budget::epochs;
  /// cuda: stage 3 (each expert on its cell) and the baselines train on the GPU (cuda/plain_train.hpp: θ and the
  /// cell on the card, Adam there), each run's first steps again on the CPU (core/twin.hpp's training twin).
  /// Stage 1's soft-prototype model stays on the CPU.
  Device device = Device::cpu;
};

struct Momlp {
  Eigen::MatrixXd prototypes;        ///< n × K
  std::vector<PreluNet> experts;     ///< K deepened, trained experts
  std::vector<Eigen::Index> cell_sizes;  ///< training points per Voronoi cell (eq. (5))
  double stage1_loss = 0;            ///< eq. (39)'s last batch loss
};

/// Algorithm 2 on a regression or classification data set (MSE if `train.y` is set, cross-entropy otherwise).
/// Deterministic in (seed, stream); single-threaded apart from Eigen's own kernels.
Momlp train_momlp(const nn::Dataset& train, const MomlpSettings& s, std::uint64_t seed, std::uint64_t stream);

/// Eq. (5) for every column of X.
std::vector<Eigen::Index> route(const Eigen::MatrixXd& prototypes, const Eigen::MatrixXd& X);
/// The MoMLP's outputs: each column of X through its cell's expert.
Eigen::MatrixXd predict(const Momlp& m, const Eigen::MatrixXd& X);

/// The baselines' width round(w√K): as many w×w-block hidden parameters as K experts of width w (App. D.3.2
/// assumes √K ∈ N; K = 4 gives 2w).
int baseline_width(int w, int K) noexcept;

/// One PReLU MLP of `hidden_layers` layers of `width`, Adam on all of `train` (the baselines of App. D.3.2).
PreluNet train_prelu_mlp(const nn::Dataset& train, int width, int hidden_layers, int epochs, int batch, double lr, double gamma0,
                         bool shared_gamma, std::uint64_t seed, std::uint64_t stream, Device device = Device::cpu);
Eigen::MatrixXd predict(const PreluNet& f, const Eigen::MatrixXd& X);

/// Adam steps over `data` for `epochs` epochs (batch min(batch, N), last short batch dropped); returns the
/// last batch loss (NaN without steps).
double fit(PreluNet& f, const nn::Dataset& data, int epochs, int batch, double lr, std::uint64_t seed, std::uint64_t stream,
           Device device = Device::cpu);

}  // namespace sparseact::moe
