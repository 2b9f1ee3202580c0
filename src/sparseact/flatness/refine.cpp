#include <sparseact/flatness/refine.hpp>

#include <algorithm>
#include <cmath>

#include <sparseact/core/errors.hpp>

namespace sparseact::flatness {

using nn::BlockParams;
using nn::param_view;

void restrict_layernorm_and_zeroth_biases(const nn::Mlp& net, Eigen::VectorXd& theta, double c) {
  for (const BlockParams& bp : net.blocks) {  // RestrictLayerNorm first, as Algorithm 1 lists it
    if (bp.gamma >= 0) {
      auto g = param_view(net, theta, bp.gamma);
      g = g.cwiseMax(1.0);
    }
  }
  for (const BlockParams& bp : net.blocks) {
    if (bp.d < 0) continue;
    auto d = param_view(net, theta, bp.d);
    if (bp.gamma >= 0) {
      const Eigen::ArrayXd s = c * param_view(net, theta, bp.gamma).col(0).array().abs();
      d.col(0) = d.col(0).array().max(-s).min(s).matrix();
    } else {
      d = d.cwiseMax(-c).cwiseMin(c);
    }
  }
}

void uplift_layernorm(const nn::Mlp& net, Eigen::VectorXd& theta, long t, long T_uplifting) {
  const double floor = std::min(static_cast<double>(t) / static_cast<double>(T_uplifting), 1.0);
  for (const BlockParams& bp : net.blocks) {
    if (bp.gamma < 0) continue;
    auto g = param_view(net, theta, bp.gamma);
    for (Eigen::Index i = 0; i < g.rows(); ++i) {
      const double s = g(i, 0) >= 0.0 ? 1.0 : -1.0;  // sign(sign(γ) + 0.1): zeros go positive
      g(i, 0) = s * std::max(std::abs(g(i, 0)), floor);
    }
  }
}

nn::PostStepHook algorithm1_hook(const nn::Mlp& net, double c) {
  if (!(c >= 0.0) || !std::isfinite(c)) throw InputError("Algorithm 1: c must be finite and >= 0");
  return [&net, c](Eigen::VectorXd& theta, long) { restrict_layernorm_and_zeroth_biases(net, theta, c); };
}

nn::PostStepHook algorithm2_hook(const nn::Mlp& net, long T_uplifting) {
  if (T_uplifting < 1) throw InputError("Algorithm 2: T_uplifting must be >= 1");
  return [&net, T_uplifting](Eigen::VectorXd& theta, long t) { uplift_layernorm(net, theta, t, T_uplifting); };
}

}  // namespace sparseact::flatness
