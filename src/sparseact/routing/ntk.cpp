#include <sparseact/routing/ntk.hpp>

#include <sparseact/core/blas_threads.hpp>

#include <cmath>
#include <stdexcept>

namespace sparseact::routing {

ops::KhatriRaoGramOp ntk_gram(const nn::PlainMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X0,
                              const std::vector<Eigen::MatrixXd>& masks) {
  const nn::PlainForward fwd = nn::plain_forward(net, theta, X0, masks);
  const std::size_t L = net.widths.size() - 1;
  const Eigen::Index M = X0.cols(), P = net.widths[L];
  std::vector<ops::KroneckerRows> factors(L);
  for (std::size_t l = 1; l <= L; ++l) factors[l - 1] = {Eigen::MatrixXd(M * P, net.widths[l]), fwd.x[l - 1]};
  for (Eigen::Index i = 0; i < M; ++i) {
    const std::vector<Eigen::MatrixXd> S = nn::plain_signals(net, theta, fwd, i, masks);
    for (std::size_t l = 0; l < L; ++l) factors[l].S.middleRows(i * P, P) = S[l];
  }
  if (net.biases)
    for (std::size_t l = 0; l < L; ++l) factors.push_back({factors[l].S, Eigen::MatrixXd()});
  return ops::KhatriRaoGramOp(std::move(factors), P);
}

Eq11Errors eq11_errors(const nn::PlainMlp& net, const Eigen::VectorXd& theta, const nn::PlainForward& fwd, Eigen::Index i,
                       Eigen::Index j, const std::vector<Eigen::MatrixXd>& masks) {
  // The errors are rounding-level numbers that an analysis reports: computed with serial BLAS, they are
  // the same bits wherever they run. OpenBLAS's threaded GEMM cuts the depth (here |W_ℓ|, beyond its
  // k-block) otherwise than its serial one, so a plain run (two BLAS threads) and a rank of an mpirun
  // (one core, one thread) differed in the last bits (issue 26).
  const ScopedBlasThreads serial_blas(1);
  const std::size_t L = net.widths.size() - 1;
  const Eigen::MatrixXd Ji = nn::plain_jacobian(net, theta, fwd, i, masks), Jj = nn::plain_jacobian(net, theta, fwd, j, masks);
  const std::vector<Eigen::MatrixXd> Si = nn::plain_signals(net, theta, fwd, i, masks), Sj = nn::plain_signals(net, theta, fwd, j, masks);
  Eq11Errors e;
  Eigen::Index at = 0;
  for (std::size_t l = 1; l <= L; ++l) {
    const Eigen::Index n = Eigen::Index(net.widths[l]) * net.widths[l - 1];
    const Eigen::MatrixXd direct = Ji.middleCols(at, n) * Jj.middleCols(at, n).transpose();  // eq. (10) over W_ℓ's entries
    const Eigen::MatrixXd SS = Si[l - 1] * Sj[l - 1].transpose();
    const Eigen::MatrixXd with_x = fwd.x[l - 1].col(i).dot(fwd.x[l - 1].col(j)) * SS;
    const Eigen::MatrixXd& a_prev = l == 1 ? fwd.x[0] : fwd.a[l - 2];
    const Eigen::MatrixXd printed = a_prev.col(i).dot(a_prev.col(j)) * SS;
    const double scale = direct.norm() > 0 ? direct.norm() : 1.0;
    e.with_x.push_back((with_x - direct).norm() / scale);
    e.printed.push_back((printed - direct).norm() / scale);
    at += n + (net.biases ? net.widths[l] : 0);
  }
  return e;
}

std::vector<Eq9Step> eq9_steps(const nn::PlainMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& train_test,
                               const std::vector<Eigen::MatrixXd>& masks, const Eigen::VectorXd& y, const std::vector<double>& alphas) {
  if (train_test.cols() != 2) throw std::invalid_argument("eq9_steps: need the train and test inputs as two columns");
  const nn::PlainForward fwd = nn::plain_forward(net, theta, train_test, masks);
  const Eigen::VectorXd g = fwd.a.back().col(0) - y;  // ∇_{a_L^train} ½‖a_L − y‖²
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(g.size(), 2);
  G.col(0) = g;
  const Eigen::VectorXd grad = nn::plain_gradient(net, theta, fwd, G, masks);
  const Eigen::VectorXd predicted = -nn::plain_ntk(net, theta, fwd, 1, 0, masks) * g;  // eq. (9), descent sign
  std::vector<Eq9Step> steps;
  for (double alpha : alphas) {
    const nn::PlainForward after = nn::plain_forward(net, theta - alpha * grad, train_test, masks);
    const Eigen::VectorXd delta = (after.a.back().col(1) - fwd.a.back().col(1)) / alpha;
    const double scale = predicted.norm();
    Eq9Step s{alpha, scale > 0 ? (delta - predicted).norm() / scale : std::nan(""), false,
              scale > 0 ? (delta + predicted).norm() / scale : std::nan("")};  // printed: +K g, i.e. delta − (−predicted)
    if (net.f == nn::PlainActivation::relu)
      for (std::size_t l = 0; l + 1 < fwd.a.size(); ++l) {
        const Eigen::ArrayXXd flipped = ((fwd.a[l].array() > 0) != (after.a[l].array() > 0)).cast<double>();
        if ((masks.empty() ? flipped.sum() : (flipped * masks[l].array()).sum()) > 0) s.kink = true;
      }
    steps.push_back(s);
  }
  return steps;
}

}  // namespace sparseact::routing
