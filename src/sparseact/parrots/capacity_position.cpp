#include <sparseact/parrots/capacity_position.hpp>

#include <cmath>
#include <stdexcept>

namespace sparseact::parrots {

CapacityPosition capacity_position(const stats::LinearFit& fit, const std::vector<MoePoint>& moes) {
  if (moes.empty()) throw std::invalid_argument("capacity_position: no MoE");
  if (fit.n < 3) throw std::invalid_argument("capacity_position: the dense fit needs at least 3 models");
  double sum_gap = 0, sum_paper_gap = 0, sum_active = 0, sum_gap_total = 0, sum_total = 0;
  for (const MoePoint& p : moes) {
    sum_gap += gap_at_active(fit, p);
    sum_paper_gap += gap_if_total_predicts(fit, p);
    sum_active += p.log_active;
    sum_gap_total += p.log_capacity - (fit.intercept + fit.slope * p.log_total);
    sum_total += p.log_total;
  }
  const double M = double(moes.size()), n = double(fit.n);
  CapacityPosition out;
  out.mean_gap = sum_gap / M;
  out.mean_paper_gap = sum_paper_gap / M;
  const double a_bar = sum_active / M;
  out.mean_gap_total = sum_gap_total / M;
  out.mean_log_ratio = sum_total / M - a_bar;
  out.testable = fit.residual_sd > 0 && fit.slope > 0 && out.mean_log_ratio > 0 && out.mean_paper_gap > 0;
  if (!out.testable) return out;
  const double D_bar = out.mean_log_ratio;
  out.lambda = out.mean_gap / out.mean_paper_gap;
  const double lever = a_bar + out.lambda * D_bar - fit.x_mean;
  out.std_error = fit.residual_sd / (fit.slope * D_bar) * std::sqrt(1 / M + 1 / n + lever * lever / fit.sxx);
  out.std_error_alpha_fixed =
      fit.residual_sd / out.mean_paper_gap * std::sqrt(1 / M + 1 / n + (a_bar - fit.x_mean) * (a_bar - fit.x_mean) / fit.sxx);
  out.df = n - 2;
  return out;
}

}  // namespace sparseact::parrots
