#pragma once
// Training the top layer of a DSM, dense, random-hash or LSH model (paper 000 §5, App. D.1): only the
// top layer θ (A ∈ R^{1×t} of the DSM, the bucket constants of the LSH model) trains, on the squared loss
//
//   L(θ) = (1/N) Σ_n (θᵀ φ̃(x_n) − y_n)²,   φ̃(x) = mask(x) ∘ φ(x)  (the ActiveFeatures of lsh/dsm.hpp).
//
// RMSProp (Hinton, lecture 6e; the paper's optimizer) as nn::RmsProp without momentum, centring or weight
// decay, per coordinate j and minibatch gradient g:
//
//   E[g²]_j ← ρ E[g²]_j + (1 − ρ) g_j²,    θ_j ← θ_j − lr · g_j / (√E[g²]_j + ε),
//
// with Keras's defaults ρ = 0.9, ε = 1e-7 and batch size 32 (the paper gives only lr = 1e-5 and 50
// epochs; Keras is what its TF code would use by default), θ = 0 at the start. g = (2/b) Σ_{n∈batch}
// (θᵀφ̃_n − y_n) φ̃_n. Coordinates outside a batch's active units have g_j = 0: their θ_j does not move and
// E[g²]_j decays by ρ per step; the trainer applies the decay lazily (ρ^k when a coordinate is next
// touched), so a step costs O(b·K), not O(t) — the same iterates up to the rounding of ρ^k.
// Minibatches: each epoch the permutation nn::epoch_permutation(N, seed, stream, epoch) (nn::BatchStream's);
// one pass per epoch, the last batch possibly smaller (Keras keeps it). Sequential and allocation-free in
// the loop, so the iterates are the same for any thread count.
//
// Why not nn::train (nn/train.hpp): that loop hands the optimizer a dense gradient of all t coordinates
// and its batches are dense columns (nn::Batch), so a step would cost O(t) instead of O(b·K) — with K ≪ t
// (a DSM activates K of t units) that is the whole point of sparse activation — and it drops the short
// last batch. The lazy decay cannot go through a dense optimizer step; what can be shared is: the
// permutations (nn::epoch_permutation) and the hyperparameters (an nn::RmsProp), and the tests hold the
// lazy iterates to nn::RmsProp stepped densely on the same batches.
//
// Because the loss is a convex quadratic in θ, its exact minimiser is the reference: the normal
// equations G θ = Φ y with G = Σ_n φ̃_n φ̃_nᵀ, solved by a pivoted LDLT on the units that are ever active.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include <sparseact/lsh/dsm.hpp>
#include <sparseact/nn/optim.hpp>

namespace sparseact::lsh {

/// App. D.1's RMSProp: lr = 1e-5, with Keras's ρ = α = 0.9 and ε = 1e-7.
nn::RmsProp paper_rmsprop();

struct TopLayerTraining {
  nn::RmsProp optimizer = paper_rmsprop();  ///< lr, α (= ρ), ε; momentum, centred, weight decay and hooks unsupported
  int batch = 32;       ///< Keras default batch size
  int epochs = 50;      ///< App. D.1
  bool history = true;  ///< record the train (and test) MSE after every epoch
};

struct TrainLog {
  std::vector<double> train_mse;  ///< after each epoch (when history), else only the final value
  std::vector<double> test_mse;   ///< after each epoch, when a test set was given
  std::int64_t steps = 0;
};

/// Mean squared error of θ on (F, y).
double mse(const Eigen::VectorXd& theta, const ActiveFeatures& F, const Eigen::VectorXd& y);

/// Trains θ (length t = F.width, updated in place) with RMSProp on (F, y); `opt.optimizer`'s state is not
/// used. Throws std::invalid_argument on inconsistent sizes or options.
TrainLog train_rmsprop(Eigen::VectorXd& theta, const ActiveFeatures& F, const Eigen::VectorXd& y, const TopLayerTraining& opt,
                       std::uint64_t seed, std::uint64_t stream = 0, const ActiveFeatures* test = nullptr,
                       const Eigen::VectorXd* y_test = nullptr);

/// G = Σ_n φ̃_n φ̃_nᵀ (t × t).
Eigen::MatrixXd gram(const ActiveFeatures& F);

struct LeastSquaresFit {
  Eigen::VectorXd theta;     ///< minimiser (0 on units never active)
  double train_mse = 0;      ///< L(θ*)
  Eigen::Index used_units = 0;  ///< units active on at least one input
};

/// The exact least-squares optimum of the top layer: pivoted LDLT of the normal equations on the units
/// that are ever active, with a ridge `ridge`·mean(diag G) (default 1e-12: only to make collinear units,
/// e.g. the s one-hot tables of the LSH model whose indicators each sum to 1, solvable; it changes L(θ*)
/// by a relative O(ridge)). Forms G: meant for t up to a few thousand.
LeastSquaresFit least_squares(const ActiveFeatures& F, const Eigen::VectorXd& y, double ridge = 1e-12);

}  // namespace sparseact::lsh
