#include <sparseact/lsh/hash_certify.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace sparseact::lsh::certify {

namespace {

constexpr double kSafetyFactor = 1.01;
constexpr double kMinNorm64 = 0x1p-400;       // rows with a smaller ‖w‖₂ (but 0) are always recomputed

double gamma(Eigen::Index n, double u) { return static_cast<double>(n) * u / (1 - static_cast<double>(n) * u); }

// A finite double as ±M · 2^E, M a non-negative integer < 2^53.
struct Decomposed {
  std::uint64_t mantissa;
  int exponent;
  bool negative;
};
Decomposed decompose(double v) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  const int field = static_cast<int>((bits >> 52) & 0x7ff);
  const std::uint64_t frac = bits & ((std::uint64_t{1} << 52) - 1);
  if (field == 0) return {frac, -1074, (bits >> 63) != 0};  // zero or subnormal
  return {frac | (std::uint64_t{1} << 52), field - 1075, (bits >> 63) != 0};
}

// Exact sum of products of finite doubles and of finite doubles: a fixed-point number whose lowest
// bit is 2^-2148 (the product of two smallest subnormals) and which reaches past 2^(2·1024), in
// 32-bit limbs held in int64 so that each addition is carry-free (room for 2^29 terms).
class ExactAccumulator {
 public:
  void add_product(double a, double b) {
    const Decomposed x = decompose(a), y = decompose(b);
    if (x.mantissa == 0 || y.mantissa == 0) return;
    add(static_cast<unsigned __int128>(x.mantissa) * y.mantissa, x.exponent + y.exponent, x.negative != y.negative);
  }
  void add_value(double a) {
    const Decomposed x = decompose(a);
    if (x.mantissa != 0) add(x.mantissa, x.exponent, x.negative);
  }
  /// The sign of the sum: −1, 0 or 1.
  int sign() const {
    std::int64_t carry = 0;
    bool nonzero = false;
    for (std::int64_t limb : limbs_) {
      const std::int64_t v = limb + carry;
      nonzero = nonzero || (v & 0xffffffff) != 0;
      carry = v >> 32;  // floor division (arithmetic shift, C++20)
    }
    if (carry != 0) return carry < 0 ? -1 : 1;  // the limbs below it lie in [0, 2^32): the top decides
    return nonzero ? 1 : 0;
  }

 private:
  static constexpr int kLowest = -2148;
  static constexpr int kLimbs = 132;  // 132 · 32 = 4224 bits > 2148 + 971 + 971 + 106 (a product's mantissa width)
  void add(unsigned __int128 mag, int exponent, bool negative) {
    const int shift = exponent - kLowest;  // ≥ 0
    int limb = shift / 32;
    const int offset = shift % 32;
    for (; mag != 0; mag >>= 32, ++limb) {
      const std::uint64_t piece = static_cast<std::uint64_t>(mag & 0xffffffffu) << offset;  // < 2^63
      const auto lo = static_cast<std::int64_t>(piece & 0xffffffffu), hi = static_cast<std::int64_t>(piece >> 32);
      limbs_[limb] += negative ? -lo : lo;
      limbs_[limb + 1] += negative ? -hi : hi;
    }
  }
  std::int64_t limbs_[kLimbs + 1] = {};
};

}  // namespace

bool exact_positive(const double* w, Eigen::Index w_stride, const double* x, Eigen::Index d, double c) {
  bool finite = std::isfinite(c);
  for (Eigen::Index k = 0; k < d && finite; ++k) finite = std::isfinite(w[k * w_stride]) && std::isfinite(x[k]);
  if (!finite) {
    double q = 0;
    for (Eigen::Index k = 0; k < d; ++k) q += w[k * w_stride] * x[k];
    return q + c > 0;
  }
  ExactAccumulator acc;
  for (Eigen::Index k = 0; k < d; ++k) acc.add_product(w[k * w_stride], x[k]);
  acc.add_value(c);
  return acc.sign() > 0;
}

SignPlan make_plan(const HyperplaneLsh& lsh, bool f32) {
  SignPlan p;
  p.w = lsh.w.data();
  p.c = lsh.c.data();
  p.rows = lsh.w.rows();
  p.d = lsh.w.cols();
  p.tables = lsh.tables;
  p.bits = lsh.bits;
  const double dd = static_cast<double>(p.d);
  p.sqrt_d_underflow = std::sqrt(dd) * 0x1p-511;
  const double g64 = gamma(p.d, 0x1p-53);
  const double u = 0x1p-24, eta = 0x1p-150;
  p.f32 = f32 && p.d < (Eigen::Index{1} << 20);  // γ_d < 0.07: the bound stays useful
  const double g32 = gamma(p.d, u), kappa = g32 * (1 + u) * (1 + u) + 2 * u + u * u;
  p.b64.always.assign(static_cast<std::size_t>(p.tables), 0);
  p.b32.always.assign(static_cast<std::size_t>(p.tables), 0);
  for (Eigen::Index r = 0; r < p.rows; ++r) {
    const double n2 = lsh.w.row(r).norm(), n1 = lsh.w.row(r).lpNorm<1>(), nmax = lsh.w.row(r).cwiseAbs().maxCoeff();
    const bool finite = std::isfinite(lsh.c(r)) && std::isfinite(n1);  // a NaN or ∞ entry makes n1 non-finite
    const auto t = static_cast<std::size_t>(r / p.bits);
    const std::uint64_t bit = std::uint64_t{1} << (r % p.bits);
    if (finite && (n2 == 0 || (n2 >= kMinNorm64 && n2 <= kMaxNorm64))) {
      p.b64.a = std::max(p.b64.a, kSafetyFactor * g64 * n2);
      p.b64.b = kSafetyFactor * dd * 0x1p-1074 + 0x1p-1073;  // d · 2^-1075, doubled
    } else {
      p.b64.always[t] |= bit;
    }
    // float32 adds the rounding of c to fl32(c) and of fl32(p̂ + fl32(c)) (relative u, in the 1.01).
    if (p.f32 && finite && nmax <= kMaxNorm32 && std::fabs(lsh.c(r)) <= 0x1p100 && (n2 == 0 || n2 >= kMinNorm64)) {
      p.b32.a = std::max(p.b32.a, kSafetyFactor * (kappa * n2 + g32 * eta * (1 + u) * std::sqrt(dd)));
      p.b32.b = std::max(p.b32.b, kSafetyFactor * (eta * ((1 + g32) * (1 + u) * n1 + 3 * dd) + u * std::fabs(lsh.c(r)) + eta));
    } else {
      p.b32.always[t] |= bit;
    }
  }
  if (p.f32) {
    p.wf = lsh.w.cast<float>();
    p.cf = lsh.c.cast<float>();
  }
  return p;
}

bool recompute_from_f64(const SignPlan& p, Eigen::Index r, const double* x) {
  const Eigen::Index d = p.d, rows = p.rows;
  const double xn = norm_for_bound(p, Eigen::Map<const Eigen::VectorXd>(x, d).squaredNorm(), kMaxNorm64);
  if (!(p.b64.always[static_cast<std::size_t>(r / p.bits)] >> (r % p.bits) & 1)) {
    double q = 0;
    for (Eigen::Index k = 0; k < d; ++k) q += p.w[r + k * rows] * x[k];
    q += p.c[r];
    if (std::fabs(q) > p.b64.a * xn + p.b64.b) return q > 0;
  }
  return exact_positive(p.w + r, rows, x, d, p.c[r]);
}

}  // namespace sparseact::lsh::certify
