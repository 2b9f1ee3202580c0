#include <sparseact/nn/attention.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include <sparseact/core/blas_threads.hpp>

namespace sparseact::nn {

namespace {

using CMap = Eigen::Map<const Eigen::MatrixXd>;
using Map = Eigen::Map<Eigen::MatrixXd>;

/// Below this many score-matrix multiply-adds (T·B · T · d) the per-sequence loop stays on one thread.
constexpr Eigen::Index kParallelWork = Eigen::Index(1) << 18;

void check(const AttentionShape& s, const Eigen::MatrixXd& X) {
  if (s.d < 1 || s.heads < 1 || s.d % s.heads != 0) throw std::invalid_argument("attention: the head count must divide the width d");
  if (X.rows() != s.d) throw std::invalid_argument("attention: inputs must have d rows");
}

}  // namespace

Eigen::MatrixXd attention_forward(const AttentionShape& s, const double* theta, const Eigen::MatrixXd& X, AttentionCache& c, Eigen::Index T) {
  check(s, X);
  const Eigen::Index d = s.d, TB = X.cols(), dh = d / s.heads, dd = d * d, H = s.heads;
  if (T == 0) T = TB;
  if (T < 1 || TB % T != 0) throw std::invalid_argument("attention: the sequence length must divide the token count");
  const Eigen::Index B = TB / T;
  const CMap Wq(theta, d, d), Wk(theta + dd, d, d), Wv(theta + 2 * dd, d, d), Wo(theta + 3 * dd, d, d);
  c.T = T, c.X = X;
  c.Q.noalias() = Wq * X, c.K.noalias() = Wk * X, c.V.noalias() = Wv * X;
  c.O.resize(d, TB);
  c.P.assign(std::size_t(B * H), Eigen::MatrixXd());
  const double scale = 1 / std::sqrt(double(dh));
  {
    std::optional<ScopedBlasThreads> serial;  // one sequence per thread, each with serial BLAS
    if (B > 1) serial.emplace(1);
#pragma omp parallel for schedule(static) if (B > 1 && TB * T * d >= kParallelWork)
    for (Eigen::Index b = 0; b < B; ++b)
      for (Eigen::Index h = 0; h < H; ++h) {
        const auto block = [&](const Eigen::MatrixXd& M) { return M.block(h * dh, b * T, dh, T); };
        Eigen::MatrixXd S = block(c.Q).transpose() * block(c.K) * scale;
        for (Eigen::Index i = 0; i < T; ++i) {
          // softmax over the keys j ≤ i (causal), shifted by the row's maximum
          const double top = S.row(i).head(i + 1).maxCoeff();
          double sum = 0;
          for (Eigen::Index j = 0; j <= i; ++j) sum += (S(i, j) = std::exp(S(i, j) - top));
          S.row(i).head(i + 1) /= sum;
          S.row(i).tail(T - i - 1).setZero();
        }
        c.O.block(h * dh, b * T, dh, T).noalias() = block(c.V) * S.transpose();
        c.P[std::size_t(b * H + h)] = std::move(S);
      }
  }
  return Wo * c.O;
}

Eigen::MatrixXd attention_backward(const AttentionShape& s, const double* theta, const AttentionCache& c, const Eigen::MatrixXd& dY, double* grad) {
  const Eigen::Index d = s.d, dh = d / s.heads, dd = d * d, H = s.heads, T = c.T, TB = c.X.cols(), B = TB / T;
  if (dY.rows() != d || dY.cols() != TB) throw std::invalid_argument("attention_backward: dY must match the forward pass");
  const CMap Wq(theta, d, d), Wk(theta + dd, d, d), Wv(theta + 2 * dd, d, d), Wo(theta + 3 * dd, d, d);
  const Eigen::MatrixXd dO = Wo.transpose() * dY;
  Map(grad + 3 * dd, d, d).noalias() += dY * c.O.transpose();
  Eigen::MatrixXd dQ(d, TB), dK(d, TB), dV(d, TB);
  const double scale = 1 / std::sqrt(double(dh));
  {
    std::optional<ScopedBlasThreads> serial;
    if (B > 1) serial.emplace(1);
#pragma omp parallel for schedule(static) if (B > 1 && TB * T * d >= kParallelWork)
    for (Eigen::Index b = 0; b < B; ++b)
      for (Eigen::Index h = 0; h < H; ++h) {
        const auto block = [&](const Eigen::MatrixXd& M) { return M.block(h * dh, b * T, dh, T); };
        const Eigen::MatrixXd& P = c.P[std::size_t(b * H + h)];
        const auto dOh = block(dO);
        dV.block(h * dh, b * T, dh, T).noalias() = dOh * P;
        const Eigen::MatrixXd dP = dOh.transpose() * block(c.V);
        const Eigen::VectorXd inner = (dP.array() * P.array()).rowwise().sum();
        const Eigen::MatrixXd dS = (P.array() * (dP.colwise() - inner).array()).matrix();  // masked entries: P = 0
        dQ.block(h * dh, b * T, dh, T).noalias() = block(c.K) * dS.transpose() * scale;
        dK.block(h * dh, b * T, dh, T).noalias() = block(c.Q) * dS * scale;
      }
  }
  Map(grad, d, d).noalias() += dQ * c.X.transpose();
  Map(grad + dd, d, d).noalias() += dK * c.X.transpose();
  Map(grad + 2 * dd, d, d).noalias() += dV * c.X.transpose();
  Eigen::MatrixXd dX = Wq.transpose() * dQ;
  dX.noalias() += Wk.transpose() * dK;
  dX.noalias() += Wv.transpose() * dV;
  return dX;
}

// Both passes go column by column (one token's d contiguous entries), each column read once: as whole-matrix
// array expressions they made several passes over d × T temporaries.
Eigen::MatrixXd rmsnorm_forward(const double* g, const Eigen::MatrixXd& X, RmsNormCache& c) {
  const Eigen::Index d = X.rows(), T = X.cols();
  const Eigen::Map<const Eigen::VectorXd> gain(g, d);
  c.X = X;
  c.r.resize(T);
  Eigen::MatrixXd Y(d, T);
  for (Eigen::Index t = 0; t < T; ++t) {
    const double r = std::sqrt(X.col(t).squaredNorm() / double(d) + kRmsEps);
    c.r(t) = r;
    Y.col(t) = gain.cwiseProduct(X.col(t)) / r;
  }
  return Y;
}

Eigen::MatrixXd rmsnorm_backward(const double* g, const RmsNormCache& c, const Eigen::MatrixXd& dY, double* grad) {
  const Eigen::Index d = c.X.rows(), T = c.X.cols();
  const Eigen::Map<const Eigen::VectorXd> gain(g, d);
  Eigen::Map<Eigen::VectorXd> dg(grad, d);
  Eigen::MatrixXd dX(d, T);
  for (Eigen::Index t = 0; t < T; ++t) {
    const auto x = c.X.col(t), dy = dY.col(t);
    const double r = c.r(t);
    dg += dy.cwiseProduct(x) / r;
    dX.col(t) = gain.cwiseProduct(dy);                          // g ⊙ dy
    const double proj = dX.col(t).dot(x);                       // ⟨g ⊙ dy, x⟩
    dX.col(t) = (dX.col(t) - x * (proj / (double(d) * r * r))) / r;
  }
  return dX;
}

}  // namespace sparseact::nn
