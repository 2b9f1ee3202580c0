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
  c.chosen.assign(std::size_t(T), {}), c.gate.assign(std::size_t(T), {});
  c.load.assign(std::size_t(s.experts), 0);
  c.experts.assign(std::size_t(s.experts), {});
  const Eigen::MatrixXd logits = s.experts > 1 ? Eigen::MatrixXd(CMap(theta, s.experts, d) * X) : Eigen::MatrixXd();
  for (Eigen::Index t = 0; t < T; ++t) {
    const std::size_t tt = std::size_t(t);
    if (s.experts == 1) {
      c.chosen[tt] = {0}, c.gate[tt] = {1.0};
    } else {
      c.chosen[tt] = top_experts(logits.col(t), s.top);
      const double top = logits(c.chosen[tt][0], t);
      double sum = 0;
      for (int k : c.chosen[tt]) sum += std::exp(logits(k, t) - top);
      for (int k : c.chosen[tt]) c.gate[tt].push_back(std::exp(logits(k, t) - top) / sum);
    }
    for (std::size_t j = 0; j < c.chosen[tt].size(); ++j) {
      FfnCache::Expert& e = c.experts[std::size_t(c.chosen[tt][j])];
      e.tokens.push_back(t), e.slot.push_back(int(j));
    }
  }
  Eigen::MatrixXd Y = Eigen::MatrixXd::Zero(d, T);
  for (int k = 0; k < s.experts; ++k) {
    FfnCache::Expert& e = c.experts[std::size_t(k)];
    c.load[std::size_t(k)] = int(e.tokens.size());
    if (e.tokens.empty()) continue;
    e.gate.resize(Eigen::Index(e.tokens.size()));
    for (std::size_t i = 0; i < e.tokens.size(); ++i) e.gate(Eigen::Index(i)) = c.gate[std::size_t(e.tokens[i])][std::size_t(e.slot[i])];
    const double* w = experts + k * s.expert_size();
    e.Xk = X(Eigen::all, e.tokens);
    e.Z.noalias() = CMap(w, f, d) * e.Xk;
    e.out = CMap(w + f * d, d, f) * e.Z.cwiseMax(0.0);
    Y(Eigen::all, e.tokens) += e.out * e.gate.asDiagonal();
  }
  return Y;
}

Eigen::MatrixXd ffn_backward(const FfnShape& s, const double* theta, const FfnCache& c, const Eigen::MatrixXd& dY, double* grad) {
  const Eigen::Index T = c.X.cols(), f = s.inner, d = s.d;
  const double* experts = theta + s.router_size();
  double* gexperts = grad + s.router_size();
  Eigen::MatrixXd dX = Eigen::MatrixXd::Zero(d, T);
  Eigen::MatrixXd dgate = Eigen::MatrixXd::Zero(std::max(1, std::min(s.top, s.experts)), T);  // ∂L/∂π, per token and slot
  for (int k = 0; k < s.experts; ++k) {
    const FfnCache::Expert& e = c.experts[std::size_t(k)];
    if (e.tokens.empty()) continue;
    const double* w = experts + k * s.expert_size();
    double* g = gexperts + k * s.expert_size();
    const Eigen::MatrixXd dYk = dY(Eigen::all, e.tokens);
    const Eigen::RowVectorXd dpi = (dYk.array() * e.out.array()).colwise().sum();
    for (std::size_t i = 0; i < e.tokens.size(); ++i) dgate(e.slot[i], e.tokens[i]) = dpi(Eigen::Index(i));
    const Eigen::MatrixXd dout = dYk * e.gate.asDiagonal();
    Map(g + f * d, d, f).noalias() += dout * e.Z.cwiseMax(0.0).transpose();
    const Eigen::MatrixXd dZ = ((CMap(w + f * d, d, f).transpose() * dout).array() * (e.Z.array() > 0).cast<double>()).matrix();
    Map(g, f, d).noalias() += dZ * e.Xk.transpose();
    dX(Eigen::all, e.tokens) += CMap(w, f, d).transpose() * dZ;
  }
  if (s.experts == 1) return dX;
  // Softmax over each token's chosen logits: ∂L/∂ℓ_k = π_k (∂L/∂π_k − Σ_j π_j ∂L/∂π_j); the rest get 0.
  Eigen::MatrixXd dlogits = Eigen::MatrixXd::Zero(s.experts, T);
  for (Eigen::Index t = 0; t < T; ++t) {
    const auto& chosen = c.chosen[std::size_t(t)];
    const auto& gate = c.gate[std::size_t(t)];
    double mean = 0;
    for (std::size_t j = 0; j < chosen.size(); ++j) mean += gate[j] * dgate(Eigen::Index(j), t);
    for (std::size_t j = 0; j < chosen.size(); ++j) dlogits(chosen[j], t) = gate[j] * (dgate(Eigen::Index(j), t) - mean);
  }
  Map(grad, s.experts, d) += dlogits * c.X.transpose();
  dX += CMap(theta, s.experts, d).transpose() * dlogits;
  return dX;
}

}  // namespace sparseact::nn
