#pragma once
// Paper 001 §5's refinements (Algorithms 1–2) of LayerNorm and zeroth biases, as optimizer post-step hooks
// (nn/optim.hpp: they run after every update with θ and the number of steps taken t = 1, 2, …).
//
// Algorithm 1 (training from scratch), with c the zeroth biases' bound relative to LN scales:
//   RestrictLayerNorm:    γ^l ← max(γ^l, 1)                                    (elementwise)
//   RestrictZerothBiases: d^l ← clamp(d^l, −c|γ^l|, c|γ^l|)                    (elementwise)
// A block whose LayerNorm has no scale (affine off) or no LayerNorm at all uses |γ| = 1 in the
// clamp. The paper runs it with c = 0.1 (§7.1) on *unbiased* LayerNorms (ln_bias = false).
//
// Algorithm 2 (finetuning): uplift |γ| while keeping its sign, zeros counted as positive:
//   s ← sign(sign(γ) + 0.1),  γ ← s · max(|γ|, min(t / T_uplifting, 1)).
#include <sparseact/nn/mlp.hpp>
#include <sparseact/nn/optim.hpp>

namespace sparseact::flatness {

/// Algorithm 1 applied once to θ (both procedures, in the paper's order).
void restrict_layernorm_and_zeroth_biases(const nn::Mlp& net, Eigen::VectorXd& theta, double c);

/// Algorithm 2 applied once at step t.
void uplift_layernorm(const nn::Mlp& net, Eigen::VectorXd& theta, long t, long T_uplifting);

/// The hooks; `net` must outlive them. c ≥ 0 and T_uplifting ≥ 1, else InputError.
nn::PostStepHook algorithm1_hook(const nn::Mlp& net, double c);
nn::PostStepHook algorithm2_hook(const nn::Mlp& net, long T_uplifting);

}  // namespace sparseact::flatness
