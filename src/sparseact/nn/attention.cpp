#include <sparseact/nn/attention.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace sparseact::nn {

namespace {

using CMap = Eigen::Map<const Eigen::MatrixXd>;
using Map = Eigen::Map<Eigen::MatrixXd>;

void check(const AttentionShape& s, const Eigen::MatrixXd& X) {
  if (s.d < 1 || s.heads < 1 || s.d % s.heads != 0) throw std::invalid_argument("attention: the head count must divide the width d");
  if (X.rows() != s.d) throw std::invalid_argument("attention: inputs must have d rows");
}

}  // namespace

Eigen::MatrixXd attention_forward(const AttentionShape& s, const double* theta, const Eigen::MatrixXd& X, AttentionCache& c) {
  check(s, X);
  const Eigen::Index d = s.d, T = X.cols(), dh = d / s.heads, dd = d * d;
  const CMap Wq(theta, d, d), Wk(theta + dd, d, d), Wv(theta + 2 * dd, d, d), Wo(theta + 3 * dd, d, d);
  c.X = X, c.Q = Wq * X, c.K = Wk * X, c.V = Wv * X;
  c.O.resize(d, T);
  c.P.assign(std::size_t(s.heads), Eigen::MatrixXd());
  const double scale = 1 / std::sqrt(double(dh));
  for (int h = 0; h < s.heads; ++h) {
    Eigen::MatrixXd S = c.Q.middleRows(h * dh, dh).transpose() * c.K.middleRows(h * dh, dh) * scale;
    for (Eigen::Index i = 0; i < T; ++i) {
      // softmax over the keys j ≤ i (causal), shifted by the row's maximum
      const double top = S.row(i).head(i + 1).maxCoeff();
      double sum = 0;
      for (Eigen::Index j = 0; j <= i; ++j) sum += (S(i, j) = std::exp(S(i, j) - top));
      S.row(i).head(i + 1) /= sum;
      S.row(i).tail(T - i - 1).setZero();
    }
    c.O.middleRows(h * dh, dh) = c.V.middleRows(h * dh, dh) * S.transpose();
    c.P[std::size_t(h)] = std::move(S);
  }
  return Wo * c.O;
}

Eigen::MatrixXd attention_backward(const AttentionShape& s, const double* theta, const AttentionCache& c, const Eigen::MatrixXd& dY, double* grad) {
  const Eigen::Index d = s.d, dh = d / s.heads, dd = d * d;
  const CMap Wq(theta, d, d), Wk(theta + dd, d, d), Wv(theta + 2 * dd, d, d), Wo(theta + 3 * dd, d, d);
  const Eigen::MatrixXd dO = Wo.transpose() * dY;
  Map(grad + 3 * dd, d, d) += dY * c.O.transpose();
  Eigen::MatrixXd dQ(d, c.X.cols()), dK(d, c.X.cols()), dV(d, c.X.cols());
  const double scale = 1 / std::sqrt(double(dh));
  for (int h = 0; h < s.heads; ++h) {
    const Eigen::MatrixXd& P = c.P[std::size_t(h)];
    const auto dOh = dO.middleRows(h * dh, dh);
    dV.middleRows(h * dh, dh) = dOh * P;
    const Eigen::MatrixXd dP = dOh.transpose() * c.V.middleRows(h * dh, dh);
    const Eigen::VectorXd inner = (dP.array() * P.array()).rowwise().sum();
    const Eigen::MatrixXd dS = (P.array() * (dP.colwise() - inner).array()).matrix();  // masked entries: P = 0
    dQ.middleRows(h * dh, dh) = c.K.middleRows(h * dh, dh) * dS.transpose() * scale;
    dK.middleRows(h * dh, dh) = c.Q.middleRows(h * dh, dh) * dS * scale;
  }
  Map(grad, d, d) += dQ * c.X.transpose();
  Map(grad + dd, d, d) += dK * c.X.transpose();
  Map(grad + 2 * dd, d, d) += dV * c.X.transpose();
  return Wq.transpose() * dQ + Wk.transpose() * dK + Wv.transpose() * dV;
}

Eigen::MatrixXd rmsnorm_forward(const double* g, const Eigen::MatrixXd& X, RmsNormCache& c) {
  const Eigen::Index d = X.rows();
  c.X = X;
  c.r = ((X.array().square().colwise().sum() / double(d)) + kRmsEps).sqrt().matrix();
  Eigen::MatrixXd Y = X.array().rowwise() / c.r.array();
  Y.array().colwise() *= Eigen::Map<const Eigen::ArrayXd>(g, d);
  return Y;
}

Eigen::MatrixXd rmsnorm_backward(const double* g, const RmsNormCache& c, const Eigen::MatrixXd& dY, double* grad) {
  const Eigen::Index d = c.X.rows();
  const Eigen::Map<const Eigen::ArrayXd> gain(g, d);
  Eigen::Map<Eigen::ArrayXd> dg(grad, d);
  dg += (dY.array() * (c.X.array().rowwise() / c.r.array())).rowwise().sum();
  const Eigen::ArrayXXd gdy = dY.array().colwise() * gain;
  const Eigen::RowVectorXd proj = (gdy * c.X.array()).colwise().sum().matrix();  // ⟨g ⊙ dy, x⟩ per token
  Eigen::MatrixXd dX = (gdy.rowwise() / c.r.array()).matrix();
  dX -= (c.X.array().rowwise() * (proj.array() / (double(d) * c.r.array().cube()))).matrix();
  return dX;
}

}  // namespace sparseact::nn
