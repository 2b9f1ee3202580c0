#pragma once
// Optimizers over a flat parameter vector θ and its gradient g, with PyTorch's semantics (same
// numbers as torch.optim in float64; the tests compare them when /usr/bin/python3 has torch), and
// learning-rate schedules.
//
// SGD (torch.optim.SGD, dampening 0), step t = 1, 2, …:
//   weight decay, WeightDecay::l2 (PyTorch's):  g ← g + wd·m⊙θ
//   weight decay, WeightDecay::decoupled (SGDW): θ ← θ − lr·wd·m⊙θ   (before the update, as AdamW)
//   momentum μ > 0:  b ← g (t = 1),  b ← μ b + g (t > 1);  d = g + μ b (Nesterov) or d = b
//   θ ← θ − lr·d
// AdamW (torch.optim.AdamW, amsgrad off):
//   θ ← θ − lr·wd·m⊙θ;  m₁ ← β₁ m₁ + (1−β₁) g;  m₂ ← β₂ m₂ + (1−β₂) g²
//   θ ← θ − (lr / (1−β₁ᵗ)) · m₁ / (√m₂ / √(1−β₂ᵗ) + ε)
// RMSProp (torch.optim.RMSprop; Hinton's lecture 6e, and Keras's with α = ρ, ε = 1e-7):
//   weight decay (L2):  g ← g + wd·m⊙θ
//   v ← α v + (1−α) g²   (v = 0 before the first step)
//   centered:  ḡ ← α ḡ + (1−α) g,  a = √(v − ḡ²) + ε;   else  a = √v + ε
//   momentum μ > 0:  b ← μ b + g/a (b = 0 before the first step),  θ ← θ − lr·b;   else  θ ← θ − lr·g/a
// Here m is the per-parameter weight-decay mask: empty means every parameter decays, otherwise an
// entry 0 excludes a parameter (paper 001 excludes LayerNorm scales and biases from weight decay)
// and 1 keeps it (any other value scales wd for that parameter).
//
// After each step the hooks run in order, with θ and the number of steps taken: this is where
// paper 001's Algorithm 1 (restrict LayerNorm scales, clamp zeroth biases) and Algorithm 2
// (uplift) act. Invalid hyperparameters (negative lr, β outside [0, 1), Nesterov without momentum)
// and size mismatches raise InputError naming the field.
#include <functional>
#include <vector>

#include <Eigen/Core>

namespace sparseact::nn {

/// Runs after a step: the updated parameters and the number of steps taken so far (1, 2, …).
using PostStepHook = std::function<void(Eigen::VectorXd& theta, long step)>;

enum class WeightDecay {
  l2,         ///< wd·θ added to the gradient (torch.optim.SGD)
  decoupled,  ///< θ ← θ − lr·wd·θ apart from the gradient (Loshchilov & Hutter; torch.optim.AdamW)
};

struct Sgd {
  // Hyperparameters (PyTorch's defaults, lr aside, which PyTorch requires).
  double lr = 0.01;
  double momentum = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;
  WeightDecay decay = WeightDecay::l2;
  Eigen::VectorXd decay_mask;  ///< empty: all parameters decay
  std::vector<PostStepHook> hooks;

  // State.
  Eigen::VectorXd momentum_buffer;  ///< empty until the first step with momentum
  long steps = 0;

  /// One step at the learning rate `lr`.
  void step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad);
  /// One step at learning rate `lr_now` (a schedule's value); the field `lr` is left unchanged.
  void step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad, double lr_now);
  /// Forgets the state (momentum, step count); hyperparameters and hooks stay.
  void reset();
};

struct AdamW {
  // Hyperparameters (PyTorch's defaults).
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
  Eigen::VectorXd decay_mask;  ///< empty: all parameters decay
  std::vector<PostStepHook> hooks;

  // State.
  Eigen::VectorXd exp_avg;     ///< m₁, empty before the first step
  Eigen::VectorXd exp_avg_sq;  ///< m₂
  long steps = 0;

  void step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad);
  void step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad, double lr_now);
  void reset();
};

struct RmsProp {
  // Hyperparameters (PyTorch's defaults).
  double lr = 1e-2;
  double alpha = 0.99;  ///< α, the decay of the mean square v (Keras's ρ)
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
  Eigen::VectorXd decay_mask;  ///< empty: all parameters decay
  std::vector<PostStepHook> hooks;

  // State.
  Eigen::VectorXd square_avg;       ///< v, empty before the first step
  Eigen::VectorXd grad_avg;         ///< ḡ (centered only)
  Eigen::VectorXd momentum_buffer;  ///< b (momentum only)
  long steps = 0;

  void step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad);
  void step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad, double lr_now);
  void reset();
};

enum class ScheduleKind { constant, linear_warmup, cosine, linear_decay };

/// Learning rate as a function of the number t of steps already taken (0 for the first step).
///   warmup (t < W):  lr = base·(s + (1 − s)·t/W), s = warmup_start_factor (PyTorch's LinearLR)
///   constant, and linear_warmup after W:  lr = base
///   cosine after W (PyTorch's CosineAnnealingLR closed form with T_max = T − W, then held):
///     lr = min_lr + (base − min_lr)·(1 + cos(π·min(t − W, T − W)/(T − W)))/2
///   linear decay after W (paper 004 §4: 20% warmup, then linear decay; PyTorch's LinearLR), then held:
///     lr = base + (min_lr − base)·min(t − W, T − W)/(T − W)
struct LrSchedule {
  ScheduleKind kind = ScheduleKind::constant;
  double base_lr = 1e-3;
  long warmup_steps = 0;             ///< W
  long total_steps = 0;              ///< T (cosine): the step at which lr reaches min_lr
  double min_lr = 0.0;               ///< η_min (cosine)
  double warmup_start_factor = 0.0;  ///< s: the first step's lr is s·base

  double operator()(long t) const;
};

LrSchedule constant_schedule(double lr);
LrSchedule linear_warmup_schedule(double lr, long warmup_steps, double start_factor = 0.0);
LrSchedule cosine_schedule(double lr, long warmup_steps, long total_steps, double min_lr = 0.0,
                           double start_factor = 0.0);
LrSchedule linear_decay_schedule(double lr, long warmup_steps, long total_steps, double min_lr = 0.0,
                                 double start_factor = 0.0);

}  // namespace sparseact::nn
