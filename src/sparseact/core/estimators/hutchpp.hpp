#pragma once
// Hutch++ (Meyer, Musco, Musco & Woodruff 2021, "Hutch++: optimal stochastic trace estimation"):
// sketch S (Rademacher, k columns), Q = orth(A S), and
//     tr(A) = tr(QᵀAQ) + tr((I − QQᵀ) A (I − QQᵀ)):
// the first term is exact (k more products), the second is Hutchinson on the deflated operator
// (ops/deflated.hpp), whose variance has lost the k largest directions of A. The standard error is
// therefore that of the deflated part alone.
//  * hutchpp: a fixed budget of m products, k = m/3 sketch columns, k for AQ, m − 2k probes;
//  * hutchpp_adaptive: a given k, then the deflated Hutchinson under the stopping rule, with the
//    tolerance relative to the full estimate tr(QᵀAQ) + deflated.
// Randomness: sketch column j from Rng(seed, stream_id(stream_id(stream, kSketchTag), j)), deflated
// probe j from Rng(seed, stream_id(stream_id(stream, kProbeTag), j)).
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include <Eigen/Core>
#include <Eigen/QR>

#include <sparseact/core/estimators/hutchinson.hpp>
#include <sparseact/core/estimators/probes.hpp>
#include <sparseact/core/ops/apply.hpp>
#include <sparseact/core/ops/deflated.hpp>
#include <sparseact/core/rng.hpp>

namespace sparseact::estimators {

namespace detail {
inline constexpr std::uint64_t kSketchTag = 0x48757463682b2b00ULL;  // "Hutch++"
inline constexpr std::uint64_t kProbeTag = 0x50726f6265730000ULL;   // "Probes"
}  // namespace detail

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
    rademacher_columns(S, n, 0, sketch, opt.seed, stream_id(opt.stream, detail::kSketchTag));
    ops::apply(op, S, Y);
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(Y);
    Q = qr.householderQ() * Eigen::MatrixXd::Identity(n, sketch);
    Eigen::MatrixXd AQ;
    ops::apply(op, Q, AQ);
    exact = (Q.array() * AQ.array()).sum();  // tr(QᵀAQ)
  }
  TraceEstimate r;
  if (sketch >= n) {  // Q spans everything: exact
    r.estimate = exact;
    r.exact_part = exact;
    r.matvecs = 2 * sketch;
    r.converged = true;
    return r;
  }
  TraceOptions o = opt;
  o.stream = stream_id(opt.stream, detail::kProbeTag);
  const ops::DeflatedOp<Op> deflated(op, Q);
  r = detail::hutchinson_run(deflated, nullptr, o, exact);
  r.exact_part = exact;
  r.estimate += exact;
  r.matvecs += 2 * sketch;
  for (auto& s : r.history) s.estimate += exact;
  return r;
}

/// Hutch++ with a fixed budget of `matvecs` products (≥ 4): sketch k = matvecs/3, k products for
/// AQ, the remaining matvecs − 2k as Hutchinson probes of the deflated operator. No stopping rule:
/// opt.stop's sample counts and tolerances are ignored; seed, stream, batch and α are used.
template <class Op>
TraceEstimate hutchpp(const Op& op, Eigen::Index matvecs, const TraceOptions& opt = {}) {
  if (matvecs < 4) throw std::invalid_argument("hutchpp: need at least 4 matvecs");
  const Eigen::Index k = matvecs / 3;
  TraceOptions o = opt;
  o.stop.min_samples = o.stop.max_samples = matvecs - 2 * k;  // ≥ 2
  o.stop.abs_tol = 0.0;
  o.stop.rel_tol = 0.0;
  TraceEstimate r = hutchpp_adaptive(op, k, o);
  r.converged = false;
  return r;
}

}  // namespace sparseact::estimators
