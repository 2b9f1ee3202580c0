// SGD, AdamW, RMSProp and learning-rate schedules (formulas in optim.hpp).
#include <sparseact/nn/optim.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string_view>

#include <fmt/format.h>

#include <sparseact/core/errors.hpp>

namespace sparseact::nn {
namespace {

void require(bool ok, std::string_view what) {
  if (!ok) throw InputError(std::string(what));
}

void check_sizes(std::string_view who, const Eigen::VectorXd& theta, const Eigen::VectorXd& grad,
                 const Eigen::VectorXd& mask) {
  if (grad.size() != theta.size())
    throw InputError(fmt::format("{}: gradient has {} entries, parameters {}", who, grad.size(), theta.size()));
  if (mask.size() != 0 && mask.size() != theta.size())
    throw InputError(fmt::format("{}: decay_mask has {} entries, parameters {} (leave it empty to decay all)", who,
                                 mask.size(), theta.size()));
}

// θ ← θ − lr·wd·m⊙θ
void decay_decoupled(Eigen::VectorXd& theta, double lr, double wd, const Eigen::VectorXd& mask) {
  if (wd == 0.0) return;
  if (mask.size() == 0)
    theta *= 1.0 - lr * wd;  // PyTorch's param.mul_(1 - lr * weight_decay)
  else
    theta.array() *= 1.0 - lr * wd * mask.array();
}

void run_hooks(const std::vector<PostStepHook>& hooks, Eigen::VectorXd& theta, long steps) {
  for (const auto& hook : hooks)
    if (hook) hook(theta, steps);
}

}  // namespace

void Sgd::step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad) { step(theta, grad, lr); }

void Sgd::step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad, double lr_now) {
  require(std::isfinite(lr_now) && lr_now >= 0, fmt::format("Sgd: learning rate {} must be >= 0", lr_now));
  require(momentum >= 0 && momentum < 1 + 1e-12 && std::isfinite(momentum),
          fmt::format("Sgd: momentum {} must be in [0, 1]", momentum));
  require(weight_decay >= 0 && std::isfinite(weight_decay), fmt::format("Sgd: weight_decay {} must be >= 0", weight_decay));
  require(!nesterov || momentum > 0, "Sgd: Nesterov momentum requires momentum > 0");
  check_sizes("Sgd", theta, grad, decay_mask);

  Eigen::VectorXd d = grad;
  if (weight_decay != 0.0) {
    if (decay == WeightDecay::l2) {
      if (decay_mask.size() == 0)
        d += weight_decay * theta;
      else
        d.array() += weight_decay * decay_mask.array() * theta.array();
    } else {
      decay_decoupled(theta, lr_now, weight_decay, decay_mask);
    }
  }
  if (momentum != 0.0) {
    if (momentum_buffer.size() != theta.size()) {
      momentum_buffer = d;  // PyTorch: the first step's buffer is the gradient itself
    } else {
      momentum_buffer = momentum * momentum_buffer + d;
    }
    if (nesterov)
      d += momentum * momentum_buffer;
    else
      d = momentum_buffer;
  }
  theta -= lr_now * d;
  ++steps;
  run_hooks(hooks, theta, steps);
}

void Sgd::reset() {
  momentum_buffer.resize(0);
  steps = 0;
}

void AdamW::step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad) { step(theta, grad, lr); }

void AdamW::step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad, double lr_now) {
  require(std::isfinite(lr_now) && lr_now >= 0, fmt::format("AdamW: learning rate {} must be >= 0", lr_now));
  require(beta1 >= 0 && beta1 < 1, fmt::format("AdamW: beta1 {} must be in [0, 1)", beta1));
  require(beta2 >= 0 && beta2 < 1, fmt::format("AdamW: beta2 {} must be in [0, 1)", beta2));
  require(eps >= 0 && std::isfinite(eps), fmt::format("AdamW: eps {} must be >= 0", eps));
  require(weight_decay >= 0 && std::isfinite(weight_decay),
          fmt::format("AdamW: weight_decay {} must be >= 0", weight_decay));
  check_sizes("AdamW", theta, grad, decay_mask);

  if (exp_avg.size() != theta.size() || exp_avg_sq.size() != theta.size()) {
    exp_avg = Eigen::VectorXd::Zero(theta.size());
    exp_avg_sq = Eigen::VectorXd::Zero(theta.size());
    steps = 0;
  }
  const long t = steps + 1;
  decay_decoupled(theta, lr_now, weight_decay, decay_mask);
  exp_avg = beta1 * exp_avg + (1 - beta1) * grad;  // PyTorch: lerp_(grad, 1 - beta1)
  exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * grad.cwiseAbs2();
  const double bias1 = 1 - std::pow(beta1, static_cast<double>(t));
  const double bias2 = 1 - std::pow(beta2, static_cast<double>(t));
  const double step_size = lr_now / bias1;
  const double bias2_sqrt = std::sqrt(bias2);
  theta.array() -= step_size * exp_avg.array() / (exp_avg_sq.array().sqrt() / bias2_sqrt + eps);
  steps = t;
  run_hooks(hooks, theta, steps);
}

void AdamW::reset() {
  exp_avg.resize(0);
  exp_avg_sq.resize(0);
  steps = 0;
}

void RmsProp::step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad) { step(theta, grad, lr); }

void RmsProp::step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad, double lr_now) {
  require(std::isfinite(lr_now) && lr_now >= 0, fmt::format("RmsProp: learning rate {} must be >= 0", lr_now));
  require(alpha >= 0 && alpha < 1, fmt::format("RmsProp: alpha {} must be in [0, 1)", alpha));
  require(eps >= 0 && std::isfinite(eps), fmt::format("RmsProp: eps {} must be >= 0", eps));
  require(weight_decay >= 0 && std::isfinite(weight_decay),
          fmt::format("RmsProp: weight_decay {} must be >= 0", weight_decay));
  require(momentum >= 0 && momentum < 1 + 1e-12 && std::isfinite(momentum),
          fmt::format("RmsProp: momentum {} must be in [0, 1]", momentum));
  check_sizes("RmsProp", theta, grad, decay_mask);

  const Eigen::Index n = theta.size();
  if (square_avg.size() != n) {
    square_avg = Eigen::VectorXd::Zero(n);
    grad_avg.resize(0);
    momentum_buffer.resize(0);
    steps = 0;
  }
  if (centered && grad_avg.size() != n) grad_avg = Eigen::VectorXd::Zero(n);
  if (momentum > 0 && momentum_buffer.size() != n) momentum_buffer = Eigen::VectorXd::Zero(n);

  Eigen::VectorXd g = grad;
  if (weight_decay != 0.0) {
    if (decay_mask.size() == 0)
      g += weight_decay * theta;
    else
      g.array() += weight_decay * decay_mask.array() * theta.array();
  }
  square_avg = alpha * square_avg + (1 - alpha) * g.cwiseAbs2();
  Eigen::ArrayXd a;
  if (centered) {
    grad_avg = alpha * grad_avg + (1 - alpha) * g;  // PyTorch: lerp_(grad, 1 - alpha)
    a = (square_avg.array() - grad_avg.array().square()).sqrt() + eps;
  } else {
    a = square_avg.array().sqrt() + eps;
  }
  if (momentum > 0) {
    momentum_buffer.array() = momentum * momentum_buffer.array() + g.array() / a;
    theta -= lr_now * momentum_buffer;
  } else {
    theta.array() -= lr_now * (g.array() / a);  // PyTorch: addcdiv_(grad, avg, value=-lr)
  }
  ++steps;
  run_hooks(hooks, theta, steps);
}

void RmsProp::reset() {
  square_avg.resize(0);
  grad_avg.resize(0);
  momentum_buffer.resize(0);
  steps = 0;
}

double LrSchedule::operator()(long t) const {
  require(t >= 0, fmt::format("learning-rate schedule: step {} must be >= 0", t));
  require(warmup_steps >= 0, fmt::format("learning-rate schedule: warmup_steps {} must be >= 0", warmup_steps));
  require((kind != ScheduleKind::cosine && kind != ScheduleKind::linear_decay) || total_steps > warmup_steps,
          fmt::format("cosine or linear-decay schedule: total_steps {} must exceed warmup_steps {}", total_steps, warmup_steps));
  if (kind != ScheduleKind::constant && t < warmup_steps)
    return base_lr * (warmup_start_factor +
                      (1 - warmup_start_factor) * static_cast<double>(t) / static_cast<double>(warmup_steps));
  if (kind != ScheduleKind::cosine && kind != ScheduleKind::linear_decay) return base_lr;
  const double span = static_cast<double>(total_steps - warmup_steps);
  const double cur = static_cast<double>(std::min(t - warmup_steps, total_steps - warmup_steps));
  if (kind == ScheduleKind::linear_decay) return base_lr + (min_lr - base_lr) * cur / span;
  return min_lr + (base_lr - min_lr) * (1 + std::cos(std::numbers::pi * cur / span)) / 2;
}

LrSchedule constant_schedule(double lr) {
  LrSchedule s;
  s.kind = ScheduleKind::constant;
  s.base_lr = lr;
  return s;
}

LrSchedule linear_decay_schedule(double lr, long warmup_steps, long total_steps, double min_lr, double start_factor) {
  LrSchedule s;
  s.kind = ScheduleKind::linear_decay;
  s.base_lr = lr;
  s.warmup_steps = warmup_steps;
  s.total_steps = total_steps;
  s.min_lr = min_lr;
  s.warmup_start_factor = start_factor;
  return s;
}

LrSchedule linear_warmup_schedule(double lr, long warmup_steps, double start_factor) {
  LrSchedule s;
  s.kind = ScheduleKind::linear_warmup;
  s.base_lr = lr;
  s.warmup_steps = warmup_steps;
  s.warmup_start_factor = start_factor;
  (void)s(0);  // validates
  return s;
}

LrSchedule cosine_schedule(double lr, long warmup_steps, long total_steps, double min_lr, double start_factor) {
  LrSchedule s;
  s.kind = ScheduleKind::cosine;
  s.base_lr = lr;
  s.warmup_steps = warmup_steps;
  s.total_steps = total_steps;
  s.min_lr = min_lr;
  s.warmup_start_factor = start_factor;
  (void)s(0);
  return s;
}

}  // namespace sparseact::nn
