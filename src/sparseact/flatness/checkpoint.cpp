#include <sparseact/flatness/checkpoint.hpp>

#include <sparseact/nn/hvp.hpp>

namespace sparseact::flatness {

Checkpoint measure_checkpoint(const nn::Mlp& net, const Eigen::VectorXd& theta, const nn::Batch& samples,
                              const estimators::TraceOptions& trace_options, long step, nn::LossKind loss) {
  Checkpoint cp;
  cp.step = step;
  cp.stats = flatness_stats(net, theta, samples, loss);
  cp.bounds = bound_terms(net, cp.stats);
  const nn::HessianOperator H(net, theta, samples, loss);
  cp.traces = hutchinson_layer_traces(H, trace_options);
  return cp;
}

}  // namespace sparseact::flatness
