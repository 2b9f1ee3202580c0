#pragma once
// diag(A) exactly, A_ii = e_iᵀ A e_i: n products with unit vectors, applied in batches of columns
// (so nn::HessianOperator runs a batch in parallel). For small operators — the ground truth the
// stochastic estimators are checked against — and for exact traces of diagonal blocks,
// tr(A_ll) = Σ_{i ∈ l} A_ii.
#include <algorithm>
#include <stdexcept>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/estimators/hutchinson.hpp>
#include <sparseact/core/ops/apply.hpp>
#include <sparseact/core/ops/segments.hpp>

namespace sparseact::estimators {

/// diag(A) from rows() products, `batch` unit vectors per block product.
template <class Op>
Eigen::VectorXd exact_diagonal(const Op& op, Eigen::Index batch = 32) {
  if (batch < 1) throw std::invalid_argument("exact_diagonal: batch must be ≥ 1");
  const Eigen::Index n = op.rows();
  Eigen::VectorXd diag(n);
  Eigen::MatrixXd E, AE;
  for (Eigen::Index first = 0; first < n; first += batch) {
    const Eigen::Index count = std::min(batch, n - first);
    E = Eigen::MatrixXd::Zero(n, count);
    for (Eigen::Index j = 0; j < count; ++j) E(first + j, j) = 1.0;
    ops::apply(op, E, AE);
    for (Eigen::Index j = 0; j < count; ++j) diag(first + j) = AE(first + j, j);
  }
  return diag;
}

/// tr(A) and tr(A_ll) for every segment, exactly (standard errors 0), in the result type of the
/// stochastic estimators so that the two stand side by side.
template <class Op>
TraceEstimate exact_trace(const Op& op, const std::vector<ops::Segment>& segments = {}, Eigen::Index batch = 32) {
  ops::check_segments(segments, op.rows());
  const Eigen::VectorXd diag = exact_diagonal(op, batch);
  TraceEstimate r;
  r.estimate = diag.sum();
  r.matvecs = op.rows();
  r.converged = true;
  for (const ops::Segment& s : segments) r.segments.push_back({s.name, diag.segment(s.offset, s.size).sum(), 0.0, 0.0});
  return r;
}

}  // namespace sparseact::estimators
