#pragma once
// One training loop for every topic: any model with a flat parameter vector θ, any optimizer of
// nn/optim.hpp, the losses of nn/loss.hpp, on the seeded batches of nn/data.hpp.
//
//   for t = 0, 1, …, T − 1:
//     (x, y) ← the stream's next batch
//     F = f_θ(x),  L = L(F, y),  G = ∂L/∂F,  g = ∇_θ L = (∂F/∂θ)ᵀ G     model.forward, loss, model.backward
//     on_step({t, batch, L, g, θ_t, η_t})                               before the update: g is ∇L(θ_t)
//     θ_{t+1} = optimizer.step(θ_t, g, η_t),  η_t = schedule(t)         then the optimizer's hooks
//   on_log(t, batch) sees θ after t steps: at t = 0 (before the first step; `batch` is the one that step
//   will train on), after every log_every steps, and after the last (`batch` is the one the last step
//   trained on).
//
// A Model is anything with
//   F  = model.forward(θ, x)          F ∈ R^{d_out×B} for inputs x (columns), by value or by reference;
//                                     the model keeps what its backward pass needs
//   model.backward(θ, G, g)           g = (∂F/∂θ)ᵀ G for the last forward's input, resized to θ's size
// A model whose forward pass needs more than x (per-example masks read batch.index) may offer
//   F  = model.forward(θ, batch)      instead, and the loop calls that.
// (nn::MlpModel below adapts nn::Mlp). The iterates depend only on (θ_0, the stream's seed and stream
// id, the optimizer and the schedule): nothing in the loop is random or threaded.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include <Eigen/Core>

#include <sparseact/core/errors.hpp>
#include <sparseact/nn/backprop.hpp>
#include <sparseact/nn/data.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/mlp.hpp>
#include <sparseact/nn/optim.hpp>

namespace sparseact::nn {

/// True when Model has forward(θ, const Batch&).
template <class Model, class = void>
struct forward_takes_batch : std::false_type {};
template <class Model>
struct forward_takes_batch<Model, std::void_t<decltype(std::declval<Model&>().forward(std::declval<const Eigen::VectorXd&>(),
                                                                                        std::declval<const Batch&>()))>>
    : std::true_type {};

/// What a step's callback sees, before the optimizer moves θ.
struct TrainStep {
  long t;                        ///< steps taken before this one (0 for the first)
  const Batch& batch;            ///< the batch this step trains on
  double loss;                   ///< L(θ_t) on it
  const Eigen::VectorXd& grad;   ///< ∇_θ L(θ_t) on it, the gradient the optimizer receives
  const Eigen::VectorXd& theta;  ///< θ_t
  double lr;                     ///< η_t
};

using StepCallback = std::function<void(const TrainStep&)>;
/// θ after t steps (read it from the θ the caller passed to train) and the batch of step t − 1
/// (at t = 0: the batch of step 0).
using LogCallback = std::function<void(long t, const Batch& batch)>;

struct TrainOptions {
  long steps = 0;                           ///< T ≥ 0
  long log_every = 0;                       ///< ≤ 0: on_log only before the first step and after the last
  LossKind loss = LossKind::cross_entropy;  ///< labels (cross-entropy) or targets y (MSE) of the batches
  Eigen::VectorXd class_weights = {};       ///< cross-entropy's class weights w (nn/loss.hpp); empty: unweighted
};

/// nn::Mlp as a Model. Keeps the last forward pass's cache and the last backward pass's signals, so
/// a step callback reads a block's inputs, activations or ∂L/∂P without a second pass.
class MlpModel {
 public:
  explicit MlpModel(const Mlp& net) : net_(&net) {}
  const Eigen::MatrixXd& forward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& x) {
    nn::forward(*net_, theta, x, cache_);
    return cache_.logits;
  }
  void backward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& dlogits, Eigen::VectorXd& grad) {
    nn::backward(*net_, theta, cache_, dlogits, grad, &signals_);
  }
  const Mlp& net() const { return *net_; }
  const ForwardCache& cache() const { return cache_; }
  const BackwardCache& signals() const { return signals_; }

 private:
  const Mlp* net_;
  ForwardCache cache_;
  BackwardCache signals_;
};

/// Trains θ in place for options.steps steps (the loop above); returns the last step's batch loss
/// (NaN without steps). Callbacks must not draw from `stream`. Throws InputError on steps < 0.
template <class Model, class Optimizer>
double train(Model& model, Eigen::VectorXd& theta, Optimizer& optimizer, const LrSchedule& schedule,
             BatchStream& stream, const TrainOptions& options, const StepCallback& on_step = {},
             const LogCallback& on_log = {}) {
  if (options.steps < 0) throw InputError("train: steps " + std::to_string(options.steps) + " must be >= 0");
  double L = std::numeric_limits<double>::quiet_NaN();
  if (options.steps == 0) {
    if (on_log) on_log(0, stream.next());
    return L;
  }
  Eigen::MatrixXd dF;
  Eigen::VectorXd grad;
  for (long t = 0; t < options.steps; ++t) {
    const Batch& batch = stream.next();
    if (t == 0 && on_log) on_log(0, batch);
    if constexpr (forward_takes_batch<Model>::value) {
      L = loss_value(options.loss, model.forward(theta, batch), batch, &dF, options.class_weights);
    } else {
      L = loss_value(options.loss, model.forward(theta, batch.x), batch, &dF, options.class_weights);
    }
    model.backward(theta, dF, grad);
    const double lr = schedule(t);
    if (on_step) on_step(TrainStep{t, batch, L, grad, theta, lr});
    optimizer.step(theta, grad, lr);
    const long taken = t + 1;
    if (on_log && (taken == options.steps || (options.log_every > 0 && taken % options.log_every == 0)))
      on_log(taken, batch);
  }
  return L;
}

// Compiled once into the library for nn::Mlp and the three optimizers.
extern template double train<MlpModel, Sgd>(MlpModel&, Eigen::VectorXd&, Sgd&, const LrSchedule&, BatchStream&,
                                            const TrainOptions&, const StepCallback&, const LogCallback&);
extern template double train<MlpModel, AdamW>(MlpModel&, Eigen::VectorXd&, AdamW&, const LrSchedule&, BatchStream&,
                                              const TrainOptions&, const StepCallback&, const LogCallback&);
extern template double train<MlpModel, RmsProp>(MlpModel&, Eigen::VectorXd&, RmsProp&, const LrSchedule&, BatchStream&,
                                                const TrainOptions&, const StepCallback&, const LogCallback&);

}  // namespace sparseact::nn
