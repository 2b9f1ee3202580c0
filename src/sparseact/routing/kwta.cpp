#include <sparseact/routing/kwta.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

namespace sparseact::routing {

TieRule parse_tie_rule(const std::string& name) {
  if (name == "strict") return TieRule::strict;
  if (name == "inclusive") return TieRule::inclusive;
  if (name == "exact") return TieRule::exact;
  throw std::invalid_argument("tie rule '" + name + "': use strict, inclusive or exact");
}

const char* to_string(TieRule rule) noexcept {
  switch (rule) {
    case TieRule::strict: return "strict";
    case TieRule::inclusive: return "inclusive";
    case TieRule::exact: return "exact";
  }
  return "?";
}

int active_units(double p_k, int N) {
  if (!(p_k > 0 && p_k <= 1) || N < 1) throw std::invalid_argument("active_units: need 0 < p_k ≤ 1 and N ≥ 1");
  return std::max(1, static_cast<int>(std::round(p_k * N)));  // std::round: halves away from zero
}

namespace {

/// Writes C_k(v[0..n)) into mask[0..n) with a column stride of 1; `scratch` holds n doubles.
void kwta_into(const double* v, Eigen::Index n, int k, TieRule rule, double* mask, std::vector<double>& scratch) {
  if (k < 1) throw std::invalid_argument("kwta: k must be at least 1");
  for (Eigen::Index i = 0; i < n; ++i)
    if (std::isnan(v[i])) throw std::invalid_argument("kwta: the routing vector holds a NaN");
  if (k >= n) {
    std::fill(mask, mask + n, 1.0);
    return;
  }
  // t: the k-th largest value.
  scratch.assign(v, v + n);
  std::nth_element(scratch.begin(), scratch.begin() + (k - 1), scratch.end(), std::greater<double>());
  const double t = scratch[static_cast<std::size_t>(k - 1)];
  Eigen::Index above = 0, at = 0;  // values > t and = t
  for (Eigen::Index i = 0; i < n; ++i) above += v[i] > t, at += v[i] == t;
  Eigen::Index tied_left = k - above;  // exact: how many of the tied values still win, lowest index first
  for (Eigen::Index i = 0; i < n; ++i) {
    bool wins = v[i] > t;
    if (v[i] == t) {
      switch (rule) {
        case TieRule::strict: wins = above + at <= k; break;
        case TieRule::inclusive: wins = true; break;
        case TieRule::exact: wins = tied_left-- > 0; break;
      }
    }
    mask[i] = wins ? 1.0 : 0.0;
  }
}

}  // namespace

Eigen::VectorXd kwta(const Eigen::VectorXd& v, int k, TieRule rule) {
  Eigen::VectorXd mask(v.size());
  std::vector<double> scratch;
  kwta_into(v.data(), v.size(), k, rule, mask.data(), scratch);
  return mask;
}

Eigen::MatrixXd kwta_columns(const Eigen::MatrixXd& V, int k, TieRule rule) {
  Eigen::MatrixXd mask(V.rows(), V.cols());
  std::vector<double> scratch;
  for (Eigen::Index c = 0; c < V.cols(); ++c) kwta_into(V.col(c).data(), V.rows(), k, rule, mask.col(c).data(), scratch);
  return mask;
}

}  // namespace sparseact::routing
