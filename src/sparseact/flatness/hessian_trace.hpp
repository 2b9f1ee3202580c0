#pragma once
// tr(H_θ) for the whole network and for each layer's diagonal block H_{θ_l θ_l} (paper 001 §3.4:
// flatness is measured by the trace; Theorem 2's bounds are sums over layers, so each layer's
// trace is reported next to its own terms).
//
//  * exact: tr(H_ll) = Σ_{i ∈ l} e_iᵀ H e_i, one Hessian-vector product per parameter (small nets).
//  * Hutchinson with per-layer partial sums: one Rademacher probe z over all of θ gives
//      zᵀHz = Σ_l z_lᵀ(Hz)_l   and   E[z_lᵀ(Hz)_l] = tr(H_ll)
//    (the cross terms z_lᵀ H_lm z_m have mean zero), so every layer's estimate, with its own
//    standard error, comes from the same products. The stopping rule (core/trace_estimators.hpp)
//    watches the whole-network interval: t_{1−α/2,k−1}·SE ≤ max(abs_tol, rel_tol·|estimate|).
//  * Hutch++ (whole network only) is core's hutchpp / hutchpp_adaptive on the same operator.
// Probe j is drawn from Rng(seed, stream_id(stream, j)), the same probes as core's hutchinson, so
// the whole-network numbers agree with it exactly; products go through perform_op_block when the
// operator has it (nn::HessianOperator runs the batch's columns in parallel).
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/trace_estimators.hpp>

namespace sparseact::flatness {

/// A parameter subset: θ.segment(offset, size).
struct Segment {
  Eigen::Index offset = 0, size = 0;
};

struct LayerTraces {
  std::string method;                 ///< "exact" | "hutchinson"
  TraceEstimate total;                ///< whole network
  std::vector<double> layer;          ///< tr(H_ll) estimates
  std::vector<double> layer_std_error;
  std::vector<double> layer_half_width;
};

/// Exact traces by e_i products (n products in batches of opt_batch columns).
template <class Op>
LayerTraces exact_layer_traces(const Op& op, const std::vector<Segment>& layers, Eigen::Index batch = 32) {
  const Eigen::Index n = op.rows();
  Eigen::VectorXd diag(n);
  Eigen::MatrixXd E, HE;
  for (Eigen::Index first = 0; first < n; first += batch) {
    const Eigen::Index count = std::min(batch, n - first);
    E = Eigen::MatrixXd::Zero(n, count);
    for (Eigen::Index j = 0; j < count; ++j) E(first + j, j) = 1.0;
    trace_detail::apply(op, E, HE);
    for (Eigen::Index j = 0; j < count; ++j) diag(first + j) = HE(first + j, j);
  }
  LayerTraces r;
  r.method = "exact";
  r.total.estimate = diag.sum();
  r.total.matvecs = n;
  r.total.converged = true;
  for (const Segment& s : layers) {
    r.layer.push_back(diag.segment(s.offset, s.size).sum());
    r.layer_std_error.push_back(0.0);
    r.layer_half_width.push_back(0.0);
  }
  return r;
}

/// Hutchinson with per-layer partial sums and the stopping rule on the whole-network interval.
template <class Op>
LayerTraces hutchinson_layer_traces(const Op& op, const std::vector<Segment>& layers, const TraceOptions& opt = {}) {
  const Eigen::Index n = op.rows();
  const Eigen::Index min_p = std::max<Eigen::Index>(2, opt.min_probes);
  const Eigen::Index max_p = std::max(min_p, opt.max_probes);
  const Eigen::Index batch = std::max<Eigen::Index>(1, opt.batch);
  if (!(opt.alpha > 0 && opt.alpha < 1)) throw std::invalid_argument("hutchinson: alpha outside (0,1)");
  const std::size_t L = layers.size();
  // Welford accumulators, in probe order (deterministic): index L is the whole network.
  std::vector<double> mean(L + 1, 0.0), m2(L + 1, 0.0);
  LayerTraces r;
  r.method = "hutchinson";
  Eigen::Index k = 0;
  Eigen::MatrixXd Z, HZ;
  auto half_width = [&](double var, Eigen::Index probes) {
    const double se = std::sqrt(var / static_cast<double>(probes));
    return std::make_pair(se, probes > 1 ? trace_detail::student_t_quantile(1 - opt.alpha / 2, double(probes - 1)) * se
                                         : std::numeric_limits<double>::infinity());
  };
  while (k < max_p) {
    Eigen::Index count = std::min(batch, max_p - k);
    if (k < min_p) count = std::min(count, min_p - k);
    trace_detail::rademacher_columns(Z, n, k, count, opt.seed, opt.stream);
    trace_detail::apply(op, Z, HZ);
    r.total.matvecs += count;
    for (Eigen::Index j = 0; j < count; ++j) {
      ++k;
      double whole = 0.0;
      auto push = [&](std::size_t i, double v) {
        const double delta = v - mean[i];
        mean[i] += delta / static_cast<double>(k);
        m2[i] += delta * (v - mean[i]);
      };
      for (std::size_t l = 0; l < L; ++l) {
        const Segment& s = layers[l];
        const double v = Z.col(j).segment(s.offset, s.size).dot(HZ.col(j).segment(s.offset, s.size));
        push(l, v);
      }
      whole = Z.col(j).dot(HZ.col(j));
      push(L, whole);
    }
    const double var = k > 1 ? m2[L] / static_cast<double>(k - 1) : 0.0;
    const auto [se, hw] = half_width(var, k);
    r.total.estimate = mean[L];
    r.total.std_error = se;
    r.total.half_width = hw;
    r.total.sample_variance = var;
    r.total.probes = k;
    if (opt.keep_history) r.total.history.push_back({k, mean[L], se, hw});
    if (k >= min_p && hw <= std::max(opt.abs_tol, opt.rel_tol * std::abs(mean[L]))) {
      r.total.converged = true;
      break;
    }
  }
  for (std::size_t l = 0; l < L; ++l) {
    const auto [se, hw] = half_width(k > 1 ? m2[l] / static_cast<double>(k - 1) : 0.0, k);
    r.layer.push_back(mean[l]);
    r.layer_std_error.push_back(se);
    r.layer_half_width.push_back(hw);
  }
  return r;
}

}  // namespace sparseact::flatness
