#pragma once
// Stochastic trace estimators over operators (DESIGN.md, Operators and estimators).
//
// An operator is anything with rows() and perform_op(const double* x, double* y) (Spectra's MatOp
// sense). Optionally it may provide perform_op_block(const double* X, double* Y, Index ncols),
// X and Y column-major rows()×ncols: a batch of probes is then applied in one call (e.g. batched
// Hessian-vector products); otherwise the batch is applied column by column.
//
//  * hutchinson: tr(A) ≈ mean of zᵀAz over Rademacher probes z, with the sample standard error and
//    a stopping rule on the width of the confidence interval (Student-t quantile): stop once
//    t_{1−α/2, k−1} · SE ≤ max(abs_tol, rel_tol·|estimate|) and k ≥ min_probes, or at max_probes.
//  * hutchpp (Meyer, Musco, Musco & Woodruff 2021, "Hutch++"): sketch S (Rademacher, k columns),
//    Q = orth(A S), tr(A) = tr(QᵀAQ) + tr((I−QQᵀ)A(I−QQᵀ)); the first term is exact, the second is
//    estimated by Hutchinson (so the standard error is that of the deflated part alone). Fixed-budget
//    version (m matvecs: k = m/3 sketch, k for AQ, m−2k probes) and an adaptive version (given k,
//    the deflated Hutchinson runs under the stopping rule).
//
// Randomness: probe j of a run is drawn from Rng(seed, stream_id(stream, j)) (Hutch++ sketch column
// j from Rng(seed, stream_id(stream_id(stream, kSketchTag), j))), so results do not depend on the
// thread count or on the batch size. Header-only, C++17.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <Eigen/QR>

#include <sparseact/core/rng.hpp>

namespace sparseact {

struct TraceOptions {
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
  Eigen::Index min_probes = 10;   ///< never stop before this many probes (at least 2)
  Eigen::Index max_probes = 1000; ///< stop here even if the interval is still wide
  Eigen::Index batch = 8;         ///< probes applied per perform_op_block call (or loop)
  double alpha = 0.05;            ///< interval at level 1 − α
  double abs_tol = 0.0;           ///< stop when half-width ≤ max(abs_tol, rel_tol·|estimate|)
  double rel_tol = 1e-2;
  bool keep_history = false;      ///< record the running estimate after every batch
};

struct TraceEstimate {
  double estimate = 0.0;
  double std_error = 0.0;      ///< of the stochastic part (for Hutch++: the deflated part)
  double half_width = 0.0;     ///< of the (1−α) interval, Student-t quantile
  Eigen::Index probes = 0;     ///< Hutchinson probes (of the deflated operator for Hutch++)
  Eigen::Index matvecs = 0;    ///< products with the operator, all parts included
  bool converged = false;      ///< the stopping rule fired (false: max_probes reached / fixed budget)
  double exact_part = 0.0;     ///< Hutch++: tr(QᵀAQ); Hutchinson: 0
  double sample_variance = 0.0;///< of the single-probe values zᵀAz
  struct Step {
    Eigen::Index probes;
    double estimate, std_error, half_width;
  };
  std::vector<Step> history;   ///< per batch, when keep_history
};

namespace trace_detail {

inline constexpr std::uint64_t kSketchTag = 0x48757463682b2b00ULL;  // "Hutch++"
inline constexpr double kPi = 3.14159265358979323846;
inline constexpr std::uint64_t kProbeTag = 0x50726f6265730000ULL;   // "Probes"

/// Standard normal quantile: Acklam's rational approximation refined by one Halley step.
inline double normal_quantile(double p) {
  if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument("normal_quantile: p outside (0,1)");
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01,  -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double plow = 0.02425;
  double x;
  if (p < plow) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - plow) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * kPi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

/// Student-t quantile with nu degrees of freedom: exact for nu = 1, 2; Cornish–Fisher expansion
/// (four terms, error < 1e-3 relative for nu ≥ 3 at usual levels) otherwise.
inline double student_t_quantile(double p, double nu) {
  if (nu <= 0) throw std::invalid_argument("student_t_quantile: nu must be positive");
  if (nu == 1) return std::tan(kPi * (p - 0.5));
  if (nu == 2) return (2 * p - 1) / std::sqrt(2 * p * (1 - p));
  const double z = normal_quantile(p), z2 = z * z;
  const double z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
  return z + (z3 + z) / (4 * nu) + (5 * z5 + 16 * z3 + 3 * z) / (96 * nu * nu) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * nu * nu * nu) +
         (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * nu * nu * nu * nu);
}

template <class Op, class = void>
struct has_block_op : std::false_type {};
template <class Op>
struct has_block_op<Op, std::void_t<decltype(std::declval<const Op&>().perform_op_block(
                            std::declval<const double*>(), std::declval<double*>(), Eigen::Index{}))>>
    : std::true_type {};

/// Y = A X, column by column unless the operator takes a block.
template <class Op>
void apply(const Op& op, const Eigen::MatrixXd& X, Eigen::MatrixXd& Y) {
  Y.resize(X.rows(), X.cols());
  if constexpr (has_block_op<Op>::value) {
    op.perform_op_block(X.data(), Y.data(), X.cols());
  } else {
    for (Eigen::Index j = 0; j < X.cols(); ++j) op.perform_op(X.col(j).data(), Y.col(j).data());
  }
}

/// Columns first..first+count of a Rademacher matrix, column j from Rng(seed, stream_id(stream, j)).
inline void rademacher_columns(Eigen::MatrixXd& Z, Eigen::Index n, Eigen::Index first, Eigen::Index count,
                               std::uint64_t seed, std::uint64_t stream) {
  Z.resize(n, count);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (count > 1 && n * count > 4096)
#endif
  for (Eigen::Index j = 0; j < count; ++j) {
    Rng rng(seed, stream_id(stream, static_cast<std::uint64_t>(first + j)));
    double* z = Z.col(j).data();
    for (Eigen::Index i = 0; i < n; ++i) z[i] = rng.rademacher();
  }
}

/// (I − QQᵀ) A (I − QQᵀ) as an operator (Q with orthonormal columns).
template <class Op>
class DeflatedOp {
 public:
  DeflatedOp(const Op& op, const Eigen::MatrixXd& Q) : op_(op), Q_(Q) {}
  Eigen::Index rows() const { return Q_.rows(); }
  Eigen::Index cols() const { return Q_.rows(); }
  void perform_op_block(const double* x, double* y, Eigen::Index ncols) const {
    Eigen::Map<const Eigen::MatrixXd> X(x, rows(), ncols);
    Eigen::Map<Eigen::MatrixXd> Yout(y, rows(), ncols);
    Eigen::MatrixXd W = X - Q_ * (Q_.transpose() * X);
    Eigen::MatrixXd AW;
    apply(op_, W, AW);
    Yout = AW - Q_ * (Q_.transpose() * AW);
  }
  void perform_op(const double* x, double* y) const { perform_op_block(x, y, 1); }

 private:
  const Op& op_;
  const Eigen::MatrixXd& Q_;
};

}  // namespace trace_detail

namespace trace_detail {
/// Hutchinson on `op`; the tolerance is relative to |offset + estimate| (Hutch++'s exact part).
template <class Op>
TraceEstimate hutchinson_offset(const Op& op, const TraceOptions& opt, double offset) {
  const Eigen::Index n = op.rows();
  const Eigen::Index min_p = std::max<Eigen::Index>(2, opt.min_probes);
  const Eigen::Index max_p = std::max(min_p, opt.max_probes);
  const Eigen::Index batch = std::max<Eigen::Index>(1, opt.batch);
  if (!(opt.alpha > 0 && opt.alpha < 1)) throw std::invalid_argument("hutchinson: alpha outside (0,1)");

  TraceEstimate r;
  double mean = 0.0, m2 = 0.0;  // Welford, in probe order: deterministic
  Eigen::Index k = 0;
  Eigen::MatrixXd Z, AZ;
  while (k < max_p) {
    // Batches end at min_probes so that the rule is first checked exactly there.
    Eigen::Index count = std::min(batch, max_p - k);
    if (k < min_p) count = std::min(count, min_p - k);
    rademacher_columns(Z, n, k, count, opt.seed, opt.stream);
    apply(op, Z, AZ);
    r.matvecs += count;
    for (Eigen::Index j = 0; j < count; ++j) {
      const double v = Z.col(j).dot(AZ.col(j));
      ++k;
      const double delta = v - mean;
      mean += delta / static_cast<double>(k);
      m2 += delta * (v - mean);
    }
    const double var = k > 1 ? m2 / static_cast<double>(k - 1) : 0.0;
    const double se = std::sqrt(var / static_cast<double>(k));
    const double hw = k > 1 ? student_t_quantile(1 - opt.alpha / 2, double(k - 1)) * se
                            : std::numeric_limits<double>::infinity();
    r.estimate = mean;
    r.std_error = se;
    r.half_width = hw;
    r.sample_variance = var;
    r.probes = k;
    if (opt.keep_history) r.history.push_back({k, mean, se, hw});
    if (k >= min_p && hw <= std::max(opt.abs_tol, opt.rel_tol * std::abs(offset + mean))) {
      r.converged = true;
      break;
    }
  }
  return r;
}
}  // namespace trace_detail

/// Hutchinson's estimator with Rademacher probes and a stopping rule on the interval's width.
template <class Op>
TraceEstimate hutchinson(const Op& op, const TraceOptions& opt = {}) {
  return trace_detail::hutchinson_offset(op, opt, 0.0);
}

/// Hutch++ with a given sketch size; the deflated part runs Hutchinson under `opt` (its stopping
/// rule, with the tolerance relative to the full estimate). Matvecs: 2·sketch + probes.
template <class Op>
TraceEstimate hutchpp_adaptive(const Op& op, Eigen::Index sketch, const TraceOptions& opt = {}) {
  const Eigen::Index n = op.rows();
  sketch = std::clamp<Eigen::Index>(sketch, 0, n);
  Eigen::MatrixXd Q(n, 0);
  double exact = 0.0;
  if (sketch > 0) {
    Eigen::MatrixXd S, Y;
    trace_detail::rademacher_columns(S, n, 0, sketch, opt.seed,
                                     stream_id(opt.stream, trace_detail::kSketchTag));
    trace_detail::apply(op, S, Y);
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(Y);
    Q = qr.householderQ() * Eigen::MatrixXd::Identity(n, sketch);
    Eigen::MatrixXd AQ;
    trace_detail::apply(op, Q, AQ);
    exact = (Q.array() * AQ.array()).sum();  // tr(QᵀAQ)
  }
  TraceOptions o = opt;
  o.stream = stream_id(opt.stream, trace_detail::kProbeTag);
  TraceEstimate r;
  if (sketch >= n) {  // Q spans everything: exact
    r.estimate = exact;
    r.exact_part = exact;
    r.matvecs = 2 * sketch;
    r.converged = true;
    return r;
  }
  trace_detail::DeflatedOp<Op> def(op, Q);
  r = trace_detail::hutchinson_offset(def, o, exact);
  r.exact_part = exact;
  r.estimate += exact;
  r.matvecs += 2 * sketch;
  for (auto& s : r.history) s.estimate += exact;
  return r;
}

/// Hutch++ with a fixed budget of `matvecs` products (≥ 3): sketch k = matvecs/3, k products for
/// AQ, the remaining matvecs − 2k as Hutchinson probes of the deflated operator. No stopping rule;
/// opt.min_probes / max_probes / tolerances are ignored, seed, stream, batch, alpha are used.
template <class Op>
TraceEstimate hutchpp(const Op& op, Eigen::Index matvecs, const TraceOptions& opt = {}) {
  if (matvecs < 4) throw std::invalid_argument("hutchpp: need at least 4 matvecs");
  const Eigen::Index k = matvecs / 3;
  TraceOptions o = opt;
  o.min_probes = o.max_probes = matvecs - 2 * k;  // ≥ 2
  o.abs_tol = 0.0;
  o.rel_tol = 0.0;
  TraceEstimate r = hutchpp_adaptive(op, k, o);
  r.converged = false;
  return r;
}

}  // namespace sparseact
