#include <sparseact/routing/overlap_law.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <sparseact/core/stats.hpp>

namespace sparseact::routing {

namespace {
void check_rho(double rho) {
  if (!(rho >= -1 && rho <= 1)) throw std::invalid_argument("overlap law: the correlation must lie in [−1, 1]");
}
void check_pk(double p_k) {
  if (!(p_k > 0 && p_k <= 1)) throw std::invalid_argument("overlap law: p_k must lie in (0, 1]");
}
double upper(double x) { return 1 - stats::normal_cdf(x); }
}  // namespace

double bivariate_upper_tail(double t, double rho) {
  check_rho(rho);
  if (rho == 1) return upper(t);
  if (rho == -1) return std::max(0.0, upper(t) - stats::normal_cdf(t));  // P(Z > t, Z < −t)
  // P(Z ≤ t, Z′ ≤ t) = Φ(t) − 2T(t, a), so P(Z > t, Z′ > t) = Q(t) − 2T(t, a) (T is even in t).
  return upper(t) - 2 * stats::owens_t(t, std::sqrt((1 - rho) / (1 + rho)));
}

double expected_overlap(double rho, double p_k) {
  check_pk(p_k);
  if (p_k == 1) return 1;
  const double t = stats::normal_quantile(1 - p_k);
  return bivariate_upper_tail(t, rho) / p_k;
}

double truncated_cross_moment(double t, double rho) {
  check_rho(rho);
  const double phi = stats::normal_pdf(t);
  if (rho == 1) return upper(t) + t * phi;  // E[Z²; Z > t]
  // Z′ = −Z: −E[Z²; t < Z < −t], nonzero only for t < 0.
  if (rho == -1) return t < 0 ? -(stats::normal_cdf(-t) - stats::normal_cdf(t)) - 2 * t * phi : 0.0;
  const double s = std::sqrt(1 - rho * rho);
  const double tail = bivariate_upper_tail(t, rho);
  const double side = rho * t * phi * upper((t - rho * t) / s);
  return rho * tail + 2 * side + s / std::sqrt(2 * M_PI) * stats::normal_pdf(t * std::sqrt(2 * (1 - rho)) / s);
}

double next_routing_cosine(double rho, double p_k) {
  check_pk(p_k);
  check_rho(rho);
  if (p_k == 1) return rho;  // nothing masked: z = c keeps the cosine
  const double t = stats::normal_quantile(1 - p_k);
  return truncated_cross_moment(t, rho) / (upper(t) + t * stats::normal_pdf(t));
}

double relu_cosine(double rho) {
  check_rho(rho);
  return (std::sqrt(1 - rho * rho) + (M_PI - std::acos(rho)) * rho) / M_PI;
}

double relu_derivative_cosine(double rho) {
  check_rho(rho);
  return 1 - std::acos(rho) / M_PI;
}

std::vector<LayerLaw> comet_law(double input_cos, double p_k, int hidden_layers) {
  check_rho(input_cos);
  check_pk(p_k);
  if (hidden_layers < 0) throw std::invalid_argument("comet_law: a negative number of layers");
  std::vector<LayerLaw> law;
  double rho = input_cos, act = input_cos;
  for (int l = 0; l < hidden_layers; ++l) {
    LayerLaw L;
    L.overlap = expected_overlap(rho, p_k);
    L.routing_cos = next_routing_cosine(rho, p_k);
    L.act_cos = L.overlap * relu_cosine(act);
    law.push_back(L);
    rho = std::clamp(L.routing_cos, -1.0, 1.0), act = std::clamp(L.act_cos, -1.0, 1.0);
  }
  return law;
}

}  // namespace sparseact::routing
