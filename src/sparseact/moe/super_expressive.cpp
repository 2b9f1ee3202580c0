#include <sparseact/moe/super_expressive.hpp>

#include <algorithm>
#include <stdexcept>

#include <sparseact/core/lp.hpp>

namespace sparseact::moe {

using boost::multiprecision::cpp_int;

Rational sigma_star(const Rational& x) {
  if (x < 0) return x / (-x + 1);
  // x mod 2 for x ≥ 0: x − 2⌊x/2⌋ (integer division floors non-negative numbers).
  const Rational half = x / 2;
  const cpp_int fl = boost::multiprecision::numerator(half) / boost::multiprecision::denominator(half);
  return x - 2 * Rational(fl);
}

Rational super_expressive_weight(const std::vector<int>& labels) {
  Rational a(1, 2);
  cpp_int pow = 2;  // 2^i, i = 1 …
  for (int b : labels) {
    if (b != 0 && b != 1) throw std::invalid_argument("super_expressive_weight: labels are 0 or 1");
    if (b) a += Rational(pow);
    pow *= 2;
  }
  return a;
}

std::vector<int> super_expressive_labels(const Rational& a, int k) {
  std::vector<int> out;
  cpp_int pow = 2;
  for (int i = 1; i <= k; ++i, pow *= 2) {
    const Rational x(cpp_int(1), pow);  // x_i = 2^{−i}
    out.push_back(sigma_star(a * x) - 1 > 0 ? 1 : 0);
  }
  return out;
}

std::string to_fraction(const Rational& r) {
  const cpp_int p = boost::multiprecision::numerator(r), q = boost::multiprecision::denominator(r);
  return q == 1 ? p.str() : p.str() + "/" + q.str();
}

PreluUnitFit prelu_unit_fit(const std::vector<double>& x, const std::vector<int>& labels) {
  if (x.size() != labels.size() || x.empty()) throw std::invalid_argument("prelu_unit_fit: one label per point");
  std::vector<double> sorted = x;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> kinks{sorted.front() - 1, sorted.back() + 1};
  for (std::size_t i = 0; i + 1 < sorted.size(); ++i) kinks.push_back(0.5 * (sorted[i] + sorted[i + 1]));
  for (double t : kinks) {
    lp::Problem p;
    p.add_variables(3, -lp::inf, lp::inf);  // β, s₊, s₋
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double s = labels[i] ? 1.0 : -1.0, d = x[i] - t;
      Eigen::Vector3d row(s, x[i] >= t ? s * d : 0.0, x[i] >= t ? 0.0 : s * d);
      p.add_constraint(row, 1.0, lp::inf);
    }
    p.set_objective(Eigen::Vector3d::Zero(), lp::Sense::minimize);
    const lp::Solution sol = p.solve();
    if (!sol.optimal()) continue;
    PreluUnitFit f{true, t, sol.x(0), sol.x(1), sol.x(2)};
    bool ok = true;  // exact check of the certificate
    for (std::size_t i = 0; i < x.size() && ok; ++i) {
      const Rational d = Rational(x[i]) - Rational(t);
      const Rational v = Rational(f.beta) + (x[i] >= t ? Rational(f.slope_right) : Rational(f.slope_left)) * d;
      ok = (v > 0) == (labels[i] == 1);
    }
    if (ok) return f;
  }
  return {};
}

}  // namespace sparseact::moe
