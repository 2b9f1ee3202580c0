#include <sparseact/routing/overlap_law.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <sparseact/core/stats.hpp>
#include <sparseact/routing/kwta.hpp>

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
  return bivariate_upper_tail(t, rho) / upper(t);  // = /p_k, but exactly 1 at ρ = 1 whatever Φ⁻¹'s rounding
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

NetworkLaw comet_network_law(double input_cos, double p_k, const std::vector<int>& widths, nn::PlainActivation f) {
  check_rho(input_cos);
  check_pk(p_k);
  if (widths.size() < 2) throw std::invalid_argument("comet_network_law: need an input width and at least one layer");
  if (f == nn::PlainActivation::tanh) throw std::invalid_argument("comet_network_law: no closed-form law for tanh (use relu or identity)");
  const bool relu = f == nn::PlainActivation::relu;
  const double e = relu ? 0.5 : 1.0;
  const auto kappa = [&](double r) { return relu ? relu_cosine(r) : r; };
  const auto kappa_dot = [&](double r) { return relu ? relu_derivative_cosine(r) : 1.0; };
  const std::size_t L = widths.size() - 1;

  NetworkLaw law;
  std::vector<double> act_cos{input_cos}, norm2{1.0};  // cos x_ℓ and E‖x_ℓ‖²/‖x_0‖², ℓ = 0 … L−1
  double rho = input_cos, mask_num = 0, mask_den = 0, act_num = 0, act_den = 0;
  for (std::size_t l = 1; l < L; ++l) {
    const int k = active_units(p_k, widths[l]);
    const double q = double(k) / widths[l];
    LayerLaw layer;
    layer.overlap = expected_overlap(rho, q);
    layer.routing_cos = next_routing_cosine(rho, q);
    layer.act_cos = std::clamp(layer.overlap * kappa(act_cos.back()), -1.0, 1.0);
    norm2.push_back(norm2.back() * k * e / (3.0 * widths[l - 1]));
    act_cos.push_back(layer.act_cos);
    mask_num += k * layer.overlap, mask_den += k;
    act_num += norm2.back() * layer.act_cos, act_den += norm2.back();
    law.k.push_back(k);
    law.layers.push_back(layer);
    rho = std::clamp(layer.routing_cos, -1.0, 1.0);
  }
  law.mask_cos = mask_den > 0 ? mask_num / mask_den : 1.0;
  law.act_cos = act_den > 0 ? act_num / act_den : input_cos;

  // Backward: the signal cosine cos S_ℓ = Π_{j≥ℓ} O_j κ̇(cos x_{j−1}) and E‖S_ℓ‖², from ℓ = L down.
  std::vector<double> signal_cos(L + 1, 1.0), signal_norm2(L + 1, double(widths[L]));
  for (std::size_t j = L - 1; j >= 1; --j) {
    const LayerLaw& layer = law.layers[j - 1];
    signal_cos[j] = signal_cos[j + 1] * layer.overlap * kappa_dot(act_cos[j - 1]);
    signal_norm2[j] = signal_norm2[j + 1] * law.k[j - 1] * e / (3.0 * widths[j]);
  }
  double ntk_num = 0, ntk_den = 0;
  for (std::size_t l = 1; l <= L; ++l) {
    const double block = act_cos[l - 1] * signal_cos[l];
    const double weight = norm2[l - 1] * signal_norm2[l];
    law.ntk_block_cos.push_back(block);
    ntk_num += weight * block, ntk_den += weight;
  }
  law.ntk_cos = ntk_num / ntk_den;
  return law;
}

}  // namespace sparseact::routing
