#include <sparseact/flatness/hessian_trace.hpp>

#include <sparseact/core/estimators/exact_diagonal.hpp>

namespace sparseact::flatness {

estimators::TraceEstimate hutchinson_layer_traces(const nn::HessianOperator& H, const estimators::TraceOptions& opt) {
  return estimators::hutchinson(H, H.segments(), opt);
}

estimators::TraceEstimate exact_layer_traces(const nn::HessianOperator& H, Eigen::Index batch) {
  return estimators::exact_trace(H, H.segments(), batch);
}

}  // namespace sparseact::flatness
