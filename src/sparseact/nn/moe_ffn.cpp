#include <sparseact/nn/moe_ffn.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace sparseact::nn {

namespace {

using CMap = Eigen::Map<const Eigen::MatrixXd>;
using Map = Eigen::Map<Eigen::MatrixXd>;

void check(const FfnShape& s, const Eigen::MatrixXd& X) {
  if (s.d < 1 || s.inner < 1 || s.experts < 1 || s.top < 1) throw std::invalid_argument("FFN: d, inner width, experts and top must be ≥ 1");
  if (X.rows() != s.d) throw std::invalid_argument("FFN: inputs must have d rows");
}

}  // namespace

std::vector<int> top_experts(const Eigen::VectorXd& logits, int top) {
  std::vector<int> order(std::size_t(logits.size()));
  std::iota(order.begin(), order.end(), 0);
  // stable: among equal logits the lower index stays first
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits(a) > logits(b); });
  order.resize(std::size_t(std::min<Eigen::Index>(top, logits.size())));
  return order;
}

Eigen::MatrixXd ffn_forward(const FfnShape& s, const double* theta, const Eigen::MatrixXd& X, FfnCache& c) {
  check(s, X);
  const Eigen::Index T = X.cols(), f = s.inner, d = s.d;
  const double* experts = theta + s.router_size();
  c.X = X;
  c.chosen.assign(std::size_t(T), {}), c.gate.assign(std::size_t(T), {}), c.hidden.assign(std::size_t(T), {}), c.out.assign(std::size_t(T), {});
  c.load.assign(std::size_t(s.experts), 0);
  Eigen::MatrixXd Y = Eigen::MatrixXd::Zero(d, T);
  for (Eigen::Index t = 0; t < T; ++t) {
    const std::size_t tt = std::size_t(t);
    if (s.experts == 1) {
      c.chosen[tt] = {0}, c.gate[tt] = {1.0};
    } else {
      const Eigen::VectorXd logits = CMap(theta, s.experts, d) * X.col(t);
      c.chosen[tt] = top_experts(logits, s.top);
      const double top = logits(c.chosen[tt][0]);
      double sum = 0;
      for (int k : c.chosen[tt]) sum += std::exp(logits(k) - top);
      for (int k : c.chosen[tt]) c.gate[tt].push_back(std::exp(logits(k) - top) / sum);
    }
    for (std::size_t j = 0; j < c.chosen[tt].size(); ++j) {
      const int k = c.chosen[tt][j];
      ++c.load[std::size_t(k)];
      const double* e = experts + k * s.expert_size();
      const Eigen::VectorXd z = CMap(e, f, d) * X.col(t);
      const Eigen::VectorXd out = CMap(e + f * d, d, f) * z.cwiseMax(0.0);
      Y.col(t) += c.gate[tt][j] * out;
      c.hidden[tt].push_back(z), c.out[tt].push_back(out);
    }
  }
  return Y;
}

Eigen::MatrixXd ffn_backward(const FfnShape& s, const double* theta, const FfnCache& c, const Eigen::MatrixXd& dY, double* grad) {
  const Eigen::Index T = c.X.cols(), f = s.inner, d = s.d;
  const double* experts = theta + s.router_size();
  double* gexperts = grad + s.router_size();
  Eigen::MatrixXd dX = Eigen::MatrixXd::Zero(d, T);
  for (Eigen::Index t = 0; t < T; ++t) {
    const std::size_t tt = std::size_t(t);
    const auto& chosen = c.chosen[tt];
    std::vector<double> dgate;
    for (std::size_t j = 0; j < chosen.size(); ++j) {
      const int k = chosen[j];
      const double* e = experts + k * s.expert_size();
      double* ge = gexperts + k * s.expert_size();
      const Eigen::VectorXd& z = c.hidden[tt][j];
      const Eigen::VectorXd dout = c.gate[tt][j] * dY.col(t);
      dgate.push_back(dY.col(t).dot(c.out[tt][j]));
      Map(ge + f * d, d, f) += dout * z.cwiseMax(0.0).transpose();
      const Eigen::VectorXd dz = ((CMap(e + f * d, d, f).transpose() * dout).array() * (z.array() > 0).cast<double>()).matrix();
      Map(ge, f, d) += dz * c.X.col(t).transpose();
      dX.col(t) += CMap(e, f, d).transpose() * dz;
    }
    if (s.experts == 1) continue;
    // softmax over the chosen logits: ∂L/∂ℓ_k = π_k (∂L/∂π_k − Σ_j π_j ∂L/∂π_j)
    double mean = 0;
    for (std::size_t j = 0; j < chosen.size(); ++j) mean += c.gate[tt][j] * dgate[j];
    Eigen::VectorXd dlogits = Eigen::VectorXd::Zero(s.experts);
    for (std::size_t j = 0; j < chosen.size(); ++j) dlogits(chosen[j]) = c.gate[tt][j] * (dgate[j] - mean);
    Map(grad, s.experts, d) += dlogits * c.X.col(t).transpose();
    dX.col(t) += CMap(theta, s.experts, d).transpose() * dlogits;
  }
  return dX;
}

}  // namespace sparseact::nn
