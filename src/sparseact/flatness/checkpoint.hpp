#pragma once
// Paper 001 §4.3–4.4 at one point of training: the flatness tr(H_θ) next to every right-hand side
// of its sparsity bounds, all over the same samples S — the empirical distribution every E of
// Lemmas 4–5, Theorems 2–3 and Corollary 1 is taken over, and H_θ the Hessian of S's mean loss,
// so that Lemma 4's identity holds exactly for it:
//   tr(H_θ) = E‖∇_θ ℓ‖² − E[tr(∇²f_Y)/f_Y]                                      Lemma 4
// One forward and one backward pass give the bounds' terms (layer_stats.hpp); Hutchinson's
// estimator with per-layer partial sums gives tr(H_θ) with its 95% interval and every layer's
// tr(H_{θ_l θ_l}) (hessian_trace.hpp), on exact Hessian-vector products (nn::HessianOperator).
//
//   estimators::TraceOptions to;  to.seed = seed;  to.stream = stream_id(3, t);  to.stop.rel_tol = 0.05;
//   const Checkpoint cp = measure_checkpoint(net, theta, samples, to, t);
//   cp.bounds.theorem2 <= cp.trace() + cp.trace_half_width();   // Theorem 2, within the interval
#include <cmath>

#include <Eigen/Core>

#include <sparseact/flatness/hessian_trace.hpp>
#include <sparseact/flatness/layer_stats.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/mlp.hpp>

namespace sparseact::flatness {

struct Checkpoint {
  long step = 0;        ///< training steps taken (the caller's label)
  FlatnessStats stats;  ///< loss, accuracy, every block's terms, E‖∇_{θ_l} ℓ‖² per layer
  BoundTerms bounds;    ///< the bounds' right-hand sides, summed over blocks
  estimators::TraceEstimate traces;   ///< tr(H_θ) (Hutchinson, interval at level 1 − α) and tr(H_{θ_l θ_l}) per layer

  double trace() const { return traces.estimate; }
  double trace_half_width() const { return traces.half_width; }
  /// Lemma 4's relative gap |tr(H_θ) − E‖∇_θ ℓ‖²| / |tr(H_θ)|: small for a well-learned model.
  double lemma4_gap() const { return std::abs(trace() - bounds.lemma4) / std::abs(trace()); }
};

/// Everything above for the network at θ on `samples`: flatness_stats, bound_terms, and
/// hutchinson_layer_traces over layer_segments(net) with `trace_options` (its seed and stream pick
/// the probes; its stopping rule watches the whole-network interval).
Checkpoint measure_checkpoint(const nn::Mlp& net, const Eigen::VectorXd& theta, const nn::Batch& samples,
                              const estimators::TraceOptions& trace_options, long step = 0,
                              nn::LossKind loss = nn::LossKind::cross_entropy);

}  // namespace sparseact::flatness
