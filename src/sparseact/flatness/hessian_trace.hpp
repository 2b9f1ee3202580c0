#pragma once
// tr(H_θ) for the whole network and for each layer's diagonal block H_{θ_l θ_l} (paper 001 §3.4:
// flatness is measured by the trace; Theorem 2's bounds are sums over layers, so each layer's trace
// is reported next to its own terms). A thin layer over core/estimators on nn::HessianOperator,
// whose segments() are the network's layers:
//  * Hutchinson with per-layer partial sums (core/estimators/hutchinson.hpp): E[z_lᵀ(Hz)_l] = tr(H_ll),
//    every layer with its own standard error from the same probes, the stopping rule on the whole;
//  * exact, tr(H_ll) = Σ_{i ∈ l} e_iᵀ H e_i, one Hessian-vector product per parameter
//    (core/estimators/exact_diagonal.hpp; small nets).
// In the result, estimate/std_error/half_width are the whole network's and segments[l] is layer l
// (named as in Mlp::layers). Hutch++, SLQ and the top eigenvalues take the same operator directly.
#include <Eigen/Core>

#include <sparseact/core/estimators/hutchinson.hpp>
#include <sparseact/nn/hvp.hpp>

namespace sparseact::flatness {

/// Hutchinson over H's layers; probe j from Rng(opt.seed, stream_id(opt.stream, j)).
estimators::TraceEstimate hutchinson_layer_traces(const nn::HessianOperator& H, const estimators::TraceOptions& opt = {});

/// Exact traces from H's diagonal, `batch` unit vectors per block product (standard errors 0).
estimators::TraceEstimate exact_layer_traces(const nn::HessianOperator& H, Eigen::Index batch = 32);

}  // namespace sparseact::flatness
