#include <sparseact/spectral/tracy_widom.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

#include <Eigen/Dense>
#include <boost/math/quadrature/gauss.hpp>
#include <boost/math/special_functions/airy.hpp>
#include <boost/math/tools/roots.hpp>
#include <fmt/format.h>

namespace sparseact::spectral {

namespace {
constexpr int nodes = 60;  // Gauss–Legendre points; F₁ converges exponentially in their number
constexpr double tw1_mean = -1.2065335745820;  // Bornemann (2010), Table 5
}  // namespace

double tracy_widom1_cdf(double s) {
  if (s > 12) return 1.0;  // 1 − F₁(12) < 1e-16
  if (s < -14) return 0.0;
  // Ai(x + y + s) is negligible once x + y + s > 14: integrate over (0, L).
  const double L = std::max(2.0, 14.0 - s);
  using gauss = boost::math::quadrature::gauss<double, nodes>;
  const auto& abscissa = gauss::abscissa();
  const auto& weights = gauss::weights();
  // Boost stores the nonnegative half of the symmetric rule on [−1, 1].
  std::vector<double> t, w;
  for (std::size_t i = 0; i < abscissa.size(); ++i) {
    t.push_back(abscissa[i]);
    w.push_back(weights[i]);
    if (abscissa[i] != 0) {
      t.push_back(-abscissa[i]);
      w.push_back(weights[i]);
    }
  }
  const auto m = static_cast<Eigen::Index>(t.size());
  Eigen::VectorXd x(m), sw(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    x(i) = 0.5 * L * (t[i] + 1.0);
    sw(i) = std::sqrt(0.5 * L * w[i]);
  }
  // The kernel Ai(x_i + x_j + s) is symmetric (x_i + x_j == x_j + x_i exactly): each Airy value is
  // evaluated once for both triangles, which halves the cost; A keeps its products in the order
  // sw(i)·Ai·sw(j), so its entries are the same bits as when every (i, j) called airy_ai.
  Eigen::MatrixXd A(m, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (Eigen::Index i = j; i < m; ++i) {
      const double ai = boost::math::airy_ai(x(i) + x(j) + s);
      A(i, j) = (i == j) - sw(i) * ai * sw(j);
      A(j, i) = (i == j) - sw(j) * ai * sw(i);
    }
  return std::clamp(A.partialPivLu().determinant(), 0.0, 1.0);
}

namespace {

/// F₁⁻¹(p) by TOMS 748 on the CDF above.
double quantile_uncached(double p) {
  auto f = [p](double s) { return tracy_widom1_cdf(s) - p; };
  double lo = -10, hi = 10;
  if (f(lo) > 0 || f(hi) < 0) throw std::invalid_argument(fmt::format("Tracy–Widom quantile: p = {} too extreme", p));
  boost::uintmax_t iterations = 100;
  auto [a, b] = boost::math::tools::toms748_solve(f, lo, hi, boost::math::tools::eps_tolerance<double>(40), iterations);
  return 0.5 * (a + b);
}

}  // namespace

double tracy_widom1_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument(fmt::format("Tracy–Widom quantile: p must be in (0, 1), got {}", p));
  // A quantile costs ~15 determinants of 120 × 120 Airy kernels (milliseconds); callers ask for the same
  // few levels again and again (every layer of a checkpoint, every shape of a sweep): remember them.
  static std::mutex mutex;
  static std::map<double, double> memo;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = memo.find(p); it != memo.end()) return it->second;
  }
  const double q = quantile_uncached(p);
  const std::lock_guard<std::mutex> lock(mutex);
  return memo.emplace(p, q).first->second;
}

WishartEdges wishart_edges(double N, double P) {
  if (N < P) std::swap(N, P);
  if (!(P >= 1)) throw std::invalid_argument("wishart_edges: dimensions must be ≥ 1");
  const double sn = std::sqrt(N - 0.5), sp = std::sqrt(P - 0.5);
  WishartEdges e{};
  e.mu_max = (sn + sp) * (sn + sp);
  e.sigma_max = (sn + sp) * std::cbrt(1 / sn + 1 / sp);
  e.mu_min = (sn - sp) * (sn - sp);
  e.sigma_min = (sn - sp) * std::cbrt(std::max(0.0, 1 / sp - 1 / sn));
  return e;
}

RatioInterval wishart_ratio_interval(double N, double P, double alpha) {
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("wishart_ratio_interval: alpha must be in (0, 1)");
  const auto e = wishart_edges(N, P);
  const double q_lo = tracy_widom1_quantile(alpha / 2), q_hi = tracy_widom1_quantile(1 - alpha / 2);
  // λ_max ∈ [μ₊ + σ₊ q_lo, μ₊ + σ₊ q_hi] and λ_min ∈ [μ₋ − σ₋ q_hi, μ₋ − σ₋ q_lo].
  RatioInterval r{};
  r.lo = (e.mu_max + e.sigma_max * q_lo) / (e.mu_min - e.sigma_min * q_lo);
  const double min_lo = e.mu_min - e.sigma_min * q_hi;  // ≤ 0 when the lower edge is not soft at this size
  r.hi = min_lo > 0 ? (e.mu_max + e.sigma_max * q_hi) / min_lo : std::numeric_limits<double>::infinity();
  r.at_mean = wishart_ratio_at_mean(N, P);
  return r;
}

double wishart_ratio_at_mean(double N, double P) {
  const auto e = wishart_edges(N, P);
  return (e.mu_max + e.sigma_max * tw1_mean) / (e.mu_min - e.sigma_min * tw1_mean);
}

}  // namespace sparseact::spectral
