#include <sparseact/flatness/theorem7.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include <sparseact/core/errors.hpp>

namespace sparseact::flatness {

double effective_window(double tau, double lr, double wd) {
  if (!(tau > 0.0 && tau < 1.0)) throw InputError("effective window: tau must be in (0, 1)");
  if (!(lr > 0.0) || !(wd >= 0.0) || !(lr * wd < 1.0))
    throw InputError("effective window: need lr > 0, wd >= 0 and lr*wd < 1");
  if (lr * wd == 0.0) return std::numeric_limits<double>::infinity();
  const double r = 1.0 - lr * wd;
  // log1p for ln r: r is within 1e-4 of 1 at the paper's settings
  const double k = std::log(tau * (1.0 - r)) / std::log1p(-lr * wd) - 1.0;
  return std::ceil(k);
}

Theorem7Terms theorem7_terms(double p, double bT, double alpha, double beta, double v, double v0) {
  if (!(p >= 1.0) || !(bT >= 1.0) || !(alpha >= 0.0) || !(beta >= 0.0) || !(v0 > 0.0) || !(v >= v0))
    throw InputError("Theorem 7: need p, bT >= 1, alpha, beta >= 0 and v >= v0 > 0");
  Theorem7Terms t;
  t.p = p;
  t.bT = bT;
  t.alpha = alpha;
  t.beta = beta;
  t.v = v;
  t.v0 = v0;
  const double s2 = std::sqrt(2.0);
  t.c = p / bT;
  t.tau = t.c / p * (1.0 + beta + 2.0 * (s2 + 1.0) * alpha);
  t.lhs11 = (v0 + (1.0 - t.c)) / s2;
  t.rhs11 = t.tau / v0 + 2.0 * std::sqrt(t.c * v0) + 2.0 * std::sqrt(t.tau);
  t.margin11 = t.lhs11 - t.rhs11;
  t.condition11 = t.margin11 > 0.0 && v0 >= 2.0 * t.c && t.c <= 1.0;
  const double c = t.c, vp = v * p, m = std::min(bT, p);
  const double Q = std::sqrt(c + (2.0 * s2 + 2.0) * c * alpha / vp + c * beta / vp + c / vp);
  const double lead = s2 / (c * std::sqrt(v));
  t.bound10 = lead * alpha / m * Q;
  t.bound9 = lead * alpha * alpha / (v * m * m) * Q;
  return t;
}

Anisotropy anisotropy(const Eigen::MatrixXd& S) {
  if (S.rows() != S.cols() || S.rows() == 0) throw InputError("anisotropy: S must be square and nonempty");
  const double p = static_cast<double>(S.rows());
  const double trS = S.trace(), trS2 = S.squaredNorm();  // S symmetric: tr(S²) = ‖S‖_F²
  if (!(trS2 > 0.0)) throw InputError("anisotropy: S is zero");
  Anisotropy r;
  const double a = trS / trS2;
  r.a = a * trS;
  r.a_over_p = r.a / p;
  // computed directly, not by the identity ‖T − I‖_F² = p − tr(T), which the tests check
  const Eigen::MatrixXd TmI = a * S - Eigen::MatrixXd::Identity(S.rows(), S.cols());
  r.beta = std::sqrt(p * TmI.squaredNorm());
  r.beta_over_p = r.beta / p;
  return r;
}

Anisotropy layer_average(const std::vector<Anisotropy>& layers) {
  if (layers.empty()) throw InputError("layer_average: no layers");
  const double L = static_cast<double>(layers.size());
  Anisotropy m;
  for (const Anisotropy& l : layers) {
    m.a += l.a / L;
    m.a_over_p += l.a_over_p / L;
    m.beta += l.beta / L;
    m.beta_over_p += l.beta_over_p / L;
  }
  return m;
}

double accumulated_vectors(double batch, double T_ref, double window) {
  if (!(batch >= 1.0) || !(T_ref >= 1.0) || !(window >= 0.0)) throw InputError("accumulated_vectors: need batch, T_ref >= 1 and window >= 0");
  return batch * std::min(T_ref, window);
}

}  // namespace sparseact::flatness
