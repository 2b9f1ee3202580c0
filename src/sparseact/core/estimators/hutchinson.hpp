#pragma once
// Hutchinson's trace estimator (Hutchinson 1990) with a per-probe reduction over segments.
//
// For Rademacher probes z (E[zzᵀ] = I), zᵀAz is an unbiased estimate of tr(A), with variance
// 2(‖A‖_F² − Σ_i A_ii²). Split the coordinates into segments l (core/ops/segments.hpp; e.g. the
// layers θ_l of a network, A = H_θ): the same product Az gives, per probe,
//     zᵀAz = Σ_l z_lᵀ(Az)_l   and   E[z_lᵀ(Az)_l] = tr(A_ll)
// (the cross terms z_lᵀ A_lm z_m have mean zero), so the trace of every diagonal block, with its own
// standard error, comes from the same probes as the whole trace (paper 001 §3.4 measures flatness by
// tr(H_θ); Theorem 2's bounds are sums over layers).
//
// Stopping rule (stats::StoppingRule on the whole trace): stop once the (1 − α) Student-t interval
// is narrow, t_{1−α/2, k−1}·SE ≤ max(abs_tol, rel_tol·|estimate|), with k ≥ min_samples probes, or
// at max_samples. Batches end at min_samples, so the rule is first checked exactly there.
// Means and variances are stats::RunningMean (Welford, pushed in probe order: deterministic).
//
// Probe j is Rng(seed, stream_id(stream, j)) (estimators/probes.hpp); products go through
// perform_op_block when the operator has it (ops/apply.hpp).
//
// Quadratic forms: an operator may also offer
//     quadratic_forms_block(const double* Z, Eigen::Index ncols, double* q)   (with segments()),
// q[j·L + l] = z_lᵀ(Az)_l for its own L segments, without forming Az (nn::HessianOperator skips its
// parameter-gradient GEMMs). When the caller's segments are the operator's own (same offsets and
// sizes, in order), Hutchinson takes the per-segment values from it and the whole-trace sample as
// their sum in segment order; the values equal the Az path's to rounding.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/estimators/probes.hpp>
#include <sparseact/core/ops/apply.hpp>
#include <sparseact/core/ops/segments.hpp>
#include <sparseact/core/stats.hpp>

namespace sparseact::estimators {

struct TraceOptions {
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
  Eigen::Index batch = 8;      ///< probes applied per perform_op_block call (or loop)
  stats::StoppingRule stop;    ///< min/max probes, α, abs_tol, rel_tol (defaults 10, 1000, 0.05, 0, 1e-2)
  bool keep_history = false;   ///< record the running estimate after every batch
};

/// One segment's trace tr(A_ll) from the same probes as the whole.
struct SegmentTrace {
  std::string name;
  double estimate = 0.0;
  double std_error = 0.0;
  double half_width = 0.0;     ///< of the (1−α) Student-t interval
};

struct TraceEstimate {
  double estimate = 0.0;
  double std_error = 0.0;      ///< of the stochastic part (for Hutch++: the deflated part)
  double half_width = 0.0;     ///< of the (1−α) interval, Student-t quantile
  Eigen::Index probes = 0;     ///< Hutchinson probes (of the deflated operator for Hutch++)
  Eigen::Index matvecs = 0;    ///< products with the operator, all parts included
  bool converged = false;      ///< the stopping rule fired (false: max_samples reached / fixed budget)
  double exact_part = 0.0;     ///< Hutch++: tr(QᵀAQ); Hutchinson: 0
  double sample_variance = 0.0;///< of the single-probe values zᵀAz
  struct Step {
    Eigen::Index probes;
    double estimate, std_error, half_width;
  };
  std::vector<Step> history;   ///< per batch, when keep_history
  std::vector<SegmentTrace> segments;  ///< per segment, in the order given (empty for the whole alone)
};

namespace detail {

/// True when Op has quadratic_forms_block(const double*, Eigen::Index, double*) const and segments()
/// (a detection trait, not a concept: public headers stay C++17 for the notebooks' interpreter).
template <class Op, class = void>
struct quadratic_forms_trait : std::false_type {};
template <class Op>
struct quadratic_forms_trait<Op, std::void_t<decltype(std::declval<const Op&>().quadratic_forms_block(
                                                 std::declval<const double*>(), Eigen::Index{}, std::declval<double*>())),
                                             decltype(std::vector<ops::Segment>(std::declval<const Op&>().segments()))>>
    : std::true_type {};
template <class Op>
inline constexpr bool has_quadratic_forms = quadratic_forms_trait<Op>::value;

/// Same offsets and sizes in the same order (names aside).
inline bool same_segments(const std::vector<ops::Segment>& a, const std::vector<ops::Segment>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t l = 0; l < a.size(); ++l)
    if (a[l].offset != b[l].offset || a[l].size != b[l].size) return false;
  return true;
}

/// Hutchinson on `op`, with per-segment partial sums when `segs` is not null; the stopping rule's
/// tolerance is relative to |offset + estimate| (Hutch++ adds its exact part).
template <class Op>
TraceEstimate hutchinson_run(const Op& op, const std::vector<ops::Segment>* segs, const TraceOptions& opt,
                             double offset) {
  opt.stop.validate();
  const Eigen::Index n = op.rows();
  if (segs) ops::check_segments(*segs, n);
  const Eigen::Index min_p = std::max<Eigen::Index>(2, opt.stop.min_samples);
  const Eigen::Index max_p = std::max<Eigen::Index>(min_p, opt.stop.max_samples);
  const Eigen::Index batch = std::max<Eigen::Index>(1, opt.batch);
  const std::size_t L = segs ? segs->size() : 0;

  TraceEstimate r;
  stats::RunningMean whole;
  std::vector<stats::RunningMean> part(L);
  Eigen::Index k = 0;
  Eigen::MatrixXd Z, AZ, Q;
  bool quadratic = false;  // the operator's quadratic forms over its own segments
  if constexpr (has_quadratic_forms<Op>) quadratic = segs && same_segments(*segs, op.segments());
  while (!opt.stop.done(whole, offset)) {
    Eigen::Index count = std::min(batch, max_p - k);
    if (k < min_p) count = std::min(count, min_p - k);
    rademacher_columns(Z, n, k, count, opt.seed, opt.stream);
    r.matvecs += count;
    if constexpr (has_quadratic_forms<Op>) {
      if (quadratic) {
        Q.resize(static_cast<Eigen::Index>(L), count);
        op.quadratic_forms_block(Z.data(), count, Q.data());
        for (Eigen::Index j = 0; j < count; ++j) {
          double sum = 0.0;
          for (std::size_t l = 0; l < L; ++l) {
            const double q = Q(static_cast<Eigen::Index>(l), j);
            part[l].push(q);
            sum += q;
          }
          whole.push(sum);
        }
      }
    }
    if (!quadratic) ops::apply(op, Z, AZ);
    for (Eigen::Index j = 0; !quadratic && j < count; ++j) {
      for (std::size_t l = 0; l < L; ++l) {
        const ops::Segment& s = (*segs)[l];
        part[l].push(Z.col(j).segment(s.offset, s.size).dot(AZ.col(j).segment(s.offset, s.size)));
      }
      whole.push(Z.col(j).dot(AZ.col(j)));
    }
    k += count;
    r.estimate = whole.mean();
    r.std_error = whole.std_error();
    r.half_width = whole.half_width(opt.stop.alpha);
    r.sample_variance = whole.variance();
    r.probes = k;
    if (opt.keep_history) r.history.push_back({k, r.estimate, r.std_error, r.half_width});
  }
  r.converged = opt.stop.satisfied(whole, offset);
  for (std::size_t l = 0; l < L; ++l)
    r.segments.push_back({(*segs)[l].name, part[l].mean(), part[l].std_error(), part[l].half_width(opt.stop.alpha)});
  return r;
}

}  // namespace detail

/// tr(A) by Hutchinson's estimator under the stopping rule.
template <class Op>
TraceEstimate hutchinson(const Op& op, const TraceOptions& opt = {}) {
  return detail::hutchinson_run(op, nullptr, opt, 0.0);
}

/// tr(A) and tr(A_ll) for every segment l, from the same probes; the stopping rule watches the whole.
/// For segments that partition the coordinates, the segment estimates sum to the whole (up to rounding).
template <class Op>
TraceEstimate hutchinson(const Op& op, const std::vector<ops::Segment>& segments, const TraceOptions& opt = {}) {
  return detail::hutchinson_run(op, &segments, opt, 0.0);
}

}  // namespace sparseact::estimators
