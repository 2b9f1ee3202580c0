#include <sparseact/spectral/marchenko_pastur.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/special_functions/binomial.hpp>
#include <boost/math/tools/roots.hpp>
#include <fmt/format.h>

namespace sparseact::spectral {

MarchenkoPastur::MarchenkoPastur(double c, double sigma2) : c_(c), sigma2_(sigma2) {
  if (!(c > 0) || !std::isfinite(c)) throw std::invalid_argument(fmt::format("Marchenko–Pastur: c must be > 0, got {}", c));
  if (!(sigma2 > 0) || !std::isfinite(sigma2))
    throw std::invalid_argument(fmt::format("Marchenko–Pastur: σ² must be > 0, got {}", sigma2));
  const double s = std::sqrt(c);
  a_ = sigma2 * (1 - s) * (1 - s);
  b_ = sigma2 * (1 + s) * (1 + s);
}

double MarchenkoPastur::atom() const { return c_ > 1 ? 1.0 - 1.0 / c_ : 0.0; }

double MarchenkoPastur::density(double x) const {
  if (x <= a_ || x >= b_ || x <= 0) return 0.0;
  return std::sqrt((b_ - x) * (x - a_)) / (2 * M_PI * c_ * sigma2_ * x);
}

double MarchenkoPastur::cdf(double x) const {
  if (x < 0) return 0.0;
  if (x <= a_) return atom();
  if (x >= b_) return 1.0;
  // x(θ) = m − h cos θ: dx = h sin θ dθ and √((b−x)(x−a)) = h sin θ, so the integrand is smooth.
  const double m = 0.5 * (a_ + b_), h = 0.5 * (b_ - a_);
  const double theta_x = std::acos(std::clamp((m - x) / h, -1.0, 1.0));
  auto integrand = [&](double theta) {
    const double s = std::sin(theta);
    const double xt = m - h * std::cos(theta);
    return h * h * s * s / (2 * M_PI * c_ * sigma2_ * xt);
  };
  const double mass = boost::math::quadrature::gauss_kronrod<double, 31>::integrate(integrand, 0.0, theta_x, 10, 1e-14);
  return std::min(1.0, atom() + mass);
}

double MarchenkoPastur::quantile(double p) const {
  if (!(p >= 0 && p <= 1)) throw std::invalid_argument(fmt::format("Marchenko–Pastur quantile: p must be in [0, 1], got {}", p));
  if (p <= atom()) return c_ > 1 ? 0.0 : a_;
  if (p >= 1) return b_;
  boost::uintmax_t iterations = 200;
  auto f = [&](double x) { return cdf(x) - p; };
  auto [lo, hi] = boost::math::tools::toms748_solve(f, a_, b_, f(a_), f(b_), boost::math::tools::eps_tolerance<double>(50),
                                                    iterations);
  return 0.5 * (lo + hi);
}

double MarchenkoPastur::moment(int k) const {
  if (k < 0) throw std::invalid_argument("Marchenko–Pastur moment: k must be ≥ 0");
  if (k == 0) return 1.0;
  double sum = 0.0;
  for (int r = 0; r < k; ++r) {
    sum += std::pow(c_, r) / (r + 1) * boost::math::binomial_coefficient<double>(k, r) *
           boost::math::binomial_coefficient<double>(k - 1, r);
  }
  return sum * std::pow(sigma2_, k);
}

double MarchenkoPastur::variance() const { return moment(2) - moment(1) * moment(1); }

std::vector<double> MarchenkoPastur::density_grid(int points, std::vector<double>* xs) const {
  std::vector<double> ys(points);
  if (xs) xs->resize(points);
  for (int i = 0; i < points; ++i) {
    const double x = a_ + (b_ - a_) * i / (points - 1);
    if (xs) (*xs)[i] = x;
    ys[i] = density(x);
  }
  return ys;
}

double ratio_limit(double c) {
  if (!(c > 0)) throw std::invalid_argument(fmt::format("ratio_limit: c must be > 0, got {}", c));
  const double s = std::sqrt(c);
  if (s == 1.0) return std::numeric_limits<double>::infinity();
  const double r = (1 + s) / (1 - s);
  return r * r;
}

}  // namespace sparseact::spectral
