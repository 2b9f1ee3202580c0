#include <sparseact/flatness/sparsity_log.hpp>

#include <limits>

namespace sparseact::flatness {
namespace {

// Left-to-right sum, then one division: the order the analyses have always averaged in.
double mean(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : s / static_cast<double>(v.size());
}

}  // namespace

std::vector<double> per_block(const std::vector<BlockStats>& blocks, BlockField field) {
  std::vector<double> out;
  out.reserve(blocks.size());
  for (const BlockStats& b : blocks) out.push_back(b.*field);
  return out;
}

double block_mean(const std::vector<BlockStats>& blocks, BlockField field) { return mean(per_block(blocks, field)); }

void SparsityLog::record(long t, const nn::Mlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& x) {
  steps.push_back(t);
  blocks.push_back(forward_sparsity(net, theta, x));
}

std::vector<double> SparsityLog::curve(std::size_t l, BlockField field) const {
  std::vector<double> out;
  out.reserve(blocks.size());
  for (const auto& log : blocks) out.push_back(log.at(l).*field);
  return out;
}

std::vector<double> SparsityLog::layer_mean_curve(BlockField field) const {
  std::vector<double> out;
  out.reserve(blocks.size());
  for (const auto& log : blocks) out.push_back(block_mean(log, field));
  return out;
}

std::vector<double> SparsityLog::integrated_per_block(BlockField field) const {
  const std::size_t L = blocks.empty() ? 0 : blocks.front().size();
  std::vector<double> out;
  for (std::size_t l = 0; l < L; ++l) out.push_back(mean(curve(l, field)));
  return out;
}

double SparsityLog::integrated(BlockField field) const { return mean(layer_mean_curve(field)); }

}  // namespace sparseact::flatness
