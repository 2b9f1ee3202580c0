#include <sparseact/moe/super_expressive.hpp>

#include <stdexcept>

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

}  // namespace sparseact::moe
