#pragma once
// Paper 004 §4.2 (parrots_phonebook): where the MoEs' memorisation capacities sit between a dense fit's readings
// at their active and at their total parameters. "MoEs match the performance of dense transformers with the same
// number of total parameters" reads λ = 1; capacity predicted by active parameters, λ = 0.
//
//   dense fit:  ln capacity = β̂ + α̂ ln parameters over n dense models (σ̂ its residual sd, x̄, s_xx)
//   MoE j:      y_j = ln capacity, a_j = ln active, t_j = ln total parameters (M MoEs)
//   g_j = y_j − (β̂ + α̂ a_j)      its gap above the fit at its active parameters
//   G_j = α̂ (t_j − a_j)          the gap that following total parameters implies
//   λ̂ = mean g / mean G
// The gaps at total and at active parameters differ by G_j exactly, so they are one finding, not two. λ̂'s standard
// error carries α̂'s (delta method on (ȳ_M − ȳ_dense − α̂(ā − x̄))/(α̂ D̄), the MoEs' residual spread taken as the
// dense fit's):
//   se(λ̂) = σ̂/(α̂ D̄) · √(1/M + 1/n + (ā + λ̂ D̄ − x̄)²/s_xx),   Student t with n − 2 degrees of freedom,
// with ā the MoEs' mean a_j and D̄ their mean t_j − a_j.
#include <vector>

#include <sparseact/core/stats.hpp>

namespace sparseact::parrots {

struct MoePoint {
  double log_capacity = 0, log_active = 0, log_total = 0;
};

/// g_j: the MoE's log capacity above the dense fit at its active parameters.
inline double gap_at_active(const stats::LinearFit& fit, const MoePoint& p) { return p.log_capacity - (fit.intercept + fit.slope * p.log_active); }
/// G_j = α̂ (t_j − a_j): where following total parameters would put it above the fit at its active parameters.
inline double gap_if_total_predicts(const stats::LinearFit& fit, const MoePoint& p) { return fit.slope * (p.log_total - p.log_active); }

struct CapacityPosition {
  double mean_gap = 0;          ///< mean g: above the fit at active parameters
  double mean_gap_total = 0;    ///< mean y − (β̂ + α̂ t): above the fit at total parameters
  double mean_paper_gap = 0;    ///< mean G
  double mean_log_ratio = 0;    ///< D̄ = mean ln(total/active)
  bool testable = false;        ///< σ̂ > 0, α̂ > 0, D̄ > 0 and mean G > 0: λ̂ and its errors below are set
  double lambda = 0;
  double std_error = 0;              ///< carries α̂'s uncertainty
  double std_error_alpha_fixed = 0;  ///< with α̂ held fixed: σ̂/mean G · √(1/M + 1/n + (ā − x̄)²/s_xx)
  double df = 0;                     ///< n − 2
};

/// `dense_fit` from stats::linear_fit over n ≥ 3 dense models (ln parameters, ln capacity); at least one MoE.
/// Throws std::invalid_argument otherwise.
CapacityPosition capacity_position(const stats::LinearFit& dense_fit, const std::vector<MoePoint>& moes);

}  // namespace sparseact::parrots
