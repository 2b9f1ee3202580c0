#include <sparseact/lsh/train.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

#include <Eigen/Cholesky>

#include <sparseact/nn/data.hpp>

namespace sparseact::lsh {

namespace {

void check_sizes(const Eigen::VectorXd& theta, const ActiveFeatures& F, const Eigen::VectorXd& y) {
  if (theta.size() != F.width)
    throw std::invalid_argument("train: θ has length " + std::to_string(theta.size()) + ", the model width is " +
                                std::to_string(F.width));
  if (y.size() != F.size())
    throw std::invalid_argument("train: " + std::to_string(y.size()) + " targets for " + std::to_string(F.size()) + " inputs");
}

double dot_active(const Eigen::VectorXd& theta, const ActiveFeatures& F, Eigen::Index n) {
  const double* v = F.val.col(n).data();
  double s = 0;
  if (F.all) {
    for (Eigen::Index k = 0; k < F.active(); ++k) s += theta(k) * v[k];
  } else {
    const std::int32_t* j = F.idx.col(n).data();
    for (Eigen::Index k = 0; k < F.active(); ++k) s += theta(j[k]) * v[k];
  }
  return s;
}

}  // namespace

double mse(const Eigen::VectorXd& theta, const ActiveFeatures& F, const Eigen::VectorXd& y) {
  check_sizes(theta, F, y);
  if (F.size() == 0) return 0;
  return (predict(theta, F) - y).squaredNorm() / static_cast<double>(F.size());
}

nn::RmsProp paper_rmsprop() {
  nn::RmsProp opt;
  opt.lr = 1e-5;  // App. D.1
  opt.alpha = 0.9;
  opt.eps = 1e-7;
  return opt;
}

TrainLog train_rmsprop(Eigen::VectorXd& theta, const ActiveFeatures& F, const Eigen::VectorXd& y, const TopLayerTraining& opt,
                       std::uint64_t seed, std::uint64_t stream, const ActiveFeatures* test, const Eigen::VectorXd* y_test) {
  check_sizes(theta, F, y);
  const nn::RmsProp& o = opt.optimizer;
  const double lr = o.lr, rho = o.alpha, eps = o.eps;
  if (!(lr > 0) || !(rho >= 0 && rho < 1) || !(eps >= 0) || opt.batch < 1 || opt.epochs < 0)
    throw std::invalid_argument("train_rmsprop: need lr > 0, 0 ≤ ρ < 1, ε ≥ 0, batch ≥ 1, epochs ≥ 0");
  if (o.momentum != 0 || o.centered || o.weight_decay != 0 || !o.hooks.empty())
    throw std::invalid_argument("train_rmsprop: the lazy sparse update is plain RMSProp (no momentum, centring, weight decay or hooks)");
  if ((test == nullptr) != (y_test == nullptr)) throw std::invalid_argument("train_rmsprop: give both test features and targets");
  if (test) check_sizes(theta, *test, *y_test);

  const Eigen::Index t = F.width, N = F.size(), K = F.active();
  TrainLog log;
  Eigen::VectorXd ms = Eigen::VectorXd::Zero(t), g = Eigen::VectorXd::Zero(t);
  std::vector<std::int64_t> last(static_cast<std::size_t>(t), 0);  // step at which ms_j was last brought up to date
  std::vector<char> mark(static_cast<std::size_t>(t), 0);
  std::vector<std::int32_t> touched;
  touched.reserve(static_cast<std::size_t>(std::min<Eigen::Index>(t, K * opt.batch)));
  std::vector<Eigen::Index> perm;
  std::vector<double> resid(static_cast<std::size_t>(opt.batch));
  constexpr int table_size = 4096;
  std::vector<double> rho_pow(table_size);  // ρ^k, k < table_size
  rho_pow[0] = 1;
  for (int k = 1; k < table_size; ++k) rho_pow[k] = rho_pow[k - 1] * rho;
  std::int64_t step = 0;

  for (int epoch = 0; epoch < opt.epochs; ++epoch) {
    nn::epoch_permutation(perm, N, seed, stream, static_cast<std::uint64_t>(epoch));
    for (Eigen::Index b0 = 0; b0 < N; b0 += opt.batch) {
      const Eigen::Index nb = std::min<Eigen::Index>(opt.batch, N - b0);
      ++step;
      for (Eigen::Index i = 0; i < nb; ++i) {
        const Eigen::Index n = perm[static_cast<std::size_t>(b0 + i)];
        resid[static_cast<std::size_t>(i)] = dot_active(theta, F, n) - y(n);  // all residuals at the same θ
      }
      const double scale = 2.0 / static_cast<double>(nb);
      for (Eigen::Index i = 0; i < nb; ++i) {
        const Eigen::Index n = perm[static_cast<std::size_t>(b0 + i)];
        const double r = scale * resid[static_cast<std::size_t>(i)];
        const double* v = F.val.col(n).data();
        for (Eigen::Index k = 0; k < K; ++k) {
          const std::int32_t j = F.unit(k, n);
          if (!mark[static_cast<std::size_t>(j)]) {
            mark[static_cast<std::size_t>(j)] = 1;
            touched.push_back(j);
          }
          g(j) += r * v[k];
        }
      }
      for (const std::int32_t j : touched) {
        const auto ju = static_cast<std::size_t>(j);
        const std::int64_t gap = step - 1 - last[ju];  // steps with g_j = 0 since the last update
        if (gap > 0 && ms(j) != 0) ms(j) *= gap < table_size ? rho_pow[static_cast<std::size_t>(gap)] : std::pow(rho, double(gap));
        ms(j) = rho * ms(j) + (1 - rho) * g(j) * g(j);
        theta(j) -= lr * g(j) / (std::sqrt(ms(j)) + eps);
        last[ju] = step;
        g(j) = 0;
        mark[ju] = 0;
      }
      touched.clear();
    }
    if (opt.history || epoch + 1 == opt.epochs) {
      log.train_mse.push_back(mse(theta, F, y));
      if (test) log.test_mse.push_back(mse(theta, *test, *y_test));
    }
  }
  log.steps = step;
  return log;
}

Eigen::MatrixXd gram(const ActiveFeatures& F) {
  const Eigen::Index t = F.width, N = F.size(), K = F.active();
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(t, t);
  if (F.all || 4 * K * K > t * t) {
    constexpr Eigen::Index chunk = 2048;
    for (Eigen::Index b = 0; b < N; b += chunk) {
      ActiveFeatures part;
      part.width = t;
      part.all = F.all;
      const Eigen::Index nb = std::min(chunk, N - b);
      part.val = F.val.middleCols(b, nb);
      if (!F.all) part.idx = F.idx.middleCols(b, nb);
      const Eigen::MatrixXd D = to_dense(part);
      G.selfadjointView<Eigen::Lower>().rankUpdate(D);
    }
    G.triangularView<Eigen::StrictlyUpper>() = G.transpose();
    return G;
  }
  for (Eigen::Index n = 0; n < N; ++n)
    for (Eigen::Index a = 0; a < K; ++a) {
      const double va = F.val(a, n);
      const std::int32_t ja = F.idx(a, n);
      for (Eigen::Index b = 0; b < K; ++b) G(F.idx(b, n), ja) += va * F.val(b, n);
    }
  return G;
}

LeastSquaresFit least_squares(const ActiveFeatures& F, const Eigen::VectorXd& y, double ridge) {
  if (y.size() != F.size()) throw std::invalid_argument("least_squares: one target per input");
  if (F.width > 20000) throw std::invalid_argument("least_squares: width above 20000 (the Gram matrix is formed)");
  const Eigen::Index t = F.width;
  const Eigen::MatrixXd G = gram(F);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(t);
  for (Eigen::Index n = 0; n < F.size(); ++n)
    for (Eigen::Index k = 0; k < F.active(); ++k) rhs(F.unit(k, n)) += F.val(k, n) * y(n);
  std::vector<Eigen::Index> used;
  for (Eigen::Index j = 0; j < t; ++j)
    if (G(j, j) > 0) used.push_back(j);
  const auto u = static_cast<Eigen::Index>(used.size());
  LeastSquaresFit fit;
  fit.theta = Eigen::VectorXd::Zero(t);
  fit.used_units = u;
  if (u > 0) {
    Eigen::MatrixXd Gu(u, u);
    Eigen::VectorXd bu(u);
    double mean_diag = 0;
    for (Eigen::Index a = 0; a < u; ++a) {
      bu(a) = rhs(used[a]);
      mean_diag += G(used[a], used[a]) / double(u);
      for (Eigen::Index b = 0; b < u; ++b) Gu(a, b) = G(used[a], used[b]);
    }
    Gu.diagonal().array() += ridge * mean_diag;
    const Eigen::LDLT<Eigen::MatrixXd> ldlt(Gu);
    if (ldlt.info() != Eigen::Success) throw std::runtime_error("least_squares: LDLT failed");
    const Eigen::VectorXd th = ldlt.solve(bu);
    for (Eigen::Index a = 0; a < u; ++a) fit.theta(used[a]) = th(a);
  }
  fit.train_mse = mse(fit.theta, F, y);
  return fit;
}

}  // namespace sparseact::lsh
