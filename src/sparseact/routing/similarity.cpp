#include <sparseact/routing/similarity.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace sparseact::routing {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double ratio(double dot, double n1, double n2) { return (n1 > 0 && n2 > 0) ? dot / std::sqrt(n1 * n2) : kNaN; }

/// Column 2p, 2p+1 hold the pair at pks[p]: one routing pass and one backbone pass serve every p_k.
Eigen::MatrixXd repeat_pair(const Eigen::MatrixXd& pair, std::size_t copies, std::vector<double>* column_pk,
                            const std::vector<double>& pks) {
  if (pair.cols() != 2) throw std::invalid_argument("pair similarity: need exactly two input columns");
  Eigen::MatrixXd X(pair.rows(), Eigen::Index(2 * copies));
  for (std::size_t p = 0; p < copies; ++p) {
    X.middleCols(Eigen::Index(2 * p), 2) = pair;
    column_pk->push_back(pks[p]), column_pk->push_back(pks[p]);
  }
  return X;
}

/// The pair at every p_k through the router and the masked backbone in one pass: column 2p, 2p+1 at pks[p].
struct PairPass {
  std::vector<Eigen::MatrixXd> masks;
  nn::PlainForward fwd;
};
PairPass pair_pass(const CometRouter& router, const nn::PlainMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& pair,
                   const std::vector<double>& pks) {
  std::vector<double> column_pk;
  const Eigen::MatrixXd X0 = repeat_pair(pair, pks.size(), &column_pk, pks);
  PairPass pass;
  pass.masks = comet_masks(router, X0, column_pk);
  pass.fwd = nn::plain_forward(net, theta, X0, pass.masks);
  return pass;
}

}  // namespace

double cosine(const Eigen::Ref<const Eigen::VectorXd>& a, const Eigen::Ref<const Eigen::VectorXd>& b) {
  return ratio(a.dot(b), a.squaredNorm(), b.squaredNorm());
}

std::vector<PairSimilarity> pair_similarity(const CometRouter& router, const nn::PlainMlp& net, const Eigen::VectorXd& theta,
                                            const Eigen::MatrixXd& pair, const std::vector<double>& pks) {
  const PairPass pass = pair_pass(router, net, theta, pair, pks);
  const std::vector<Eigen::MatrixXd>& masks = pass.masks;
  const std::vector<Eigen::MatrixXd> hidden(pass.fwd.x.begin() + 1, pass.fwd.x.end());
  std::vector<PairSimilarity> out;
  for (std::size_t p = 0; p < pks.size(); ++p) {
    out.push_back(similarity_of(masks, hidden, Eigen::Index(2 * p), Eigen::Index(2 * p + 1)));
    out.back().p_k = pks[p];
  }
  return out;
}

PairSimilarity similarity_of(const std::vector<Eigen::MatrixXd>& masks, const std::vector<Eigen::MatrixXd>& hidden, Eigen::Index i,
                             Eigen::Index j) {
  PairSimilarity s;
  double m_dot = 0, m_ii = 0, m_jj = 0, x_dot = 0, x_ii = 0, x_jj = 0;
  for (std::size_t l = 0; l < masks.size(); ++l) {
    const auto mi = masks[l].col(i), mj = masks[l].col(j);
    const auto xi = hidden[l].col(i), xj = hidden[l].col(j);
    s.layer_overlap.push_back(ratio(mi.dot(mj), mi.sum(), mj.sum()));
    s.layer_act_cos.push_back(ratio(xi.dot(xj), xi.squaredNorm(), xj.squaredNorm()));
    m_dot += mi.dot(mj), m_ii += mi.sum(), m_jj += mj.sum();
    x_dot += xi.dot(xj), x_ii += xi.squaredNorm(), x_jj += xj.squaredNorm();
  }
  s.mask_cos = ratio(m_dot, m_ii, m_jj);
  s.act_cos = ratio(x_dot, x_ii, x_jj);
  return s;
}

std::vector<PairNtk> pair_ntk(const CometRouter& router, const nn::PlainMlp& net, const Eigen::VectorXd& theta,
                              const Eigen::MatrixXd& pair, const std::vector<double>& pks) {
  const PairPass pass = pair_pass(router, net, theta, pair, pks);
  const std::vector<Eigen::MatrixXd>& masks = pass.masks;
  const nn::PlainForward& fwd = pass.fwd;
  const std::size_t L = net.widths.size() - 1;
  std::vector<PairNtk> out;
  for (std::size_t p = 0; p < pks.size(); ++p) {
    const Eigen::Index i = Eigen::Index(2 * p), j = i + 1;
    const std::vector<Eigen::MatrixXd> Si = nn::plain_signals(net, theta, fwd, i, masks);
    const std::vector<Eigen::MatrixXd> Sj = nn::plain_signals(net, theta, fwd, j, masks);
    PairNtk r;
    r.p_k = pks[p];
    double k_ij = 0, k_ii = 0, k_jj = 0;  // traces of K(x, x′), K(x, x), K(x′, x′)
    for (std::size_t l = 1; l <= L; ++l) {
      const auto xi = fwd.x[l - 1].col(i), xj = fwd.x[l - 1].col(j);
      const Eigen::MatrixXd &A = Si[l - 1], &B = Sj[l - 1];
      const double s_ij = (A.cwiseProduct(B)).sum(), s_ii = A.squaredNorm(), s_jj = B.squaredNorm();
      const double w_ij = xi.dot(xj) * s_ij, w_ii = xi.squaredNorm() * s_ii, w_jj = xj.squaredNorm() * s_jj;  // eq. (11)
      r.block_cos.push_back(ratio(w_ij, w_ii, w_jj));
      k_ij += w_ij, k_ii += w_ii, k_jj += w_jj;
      if (net.biases) k_ij += s_ij, k_ii += s_ii, k_jj += s_jj;
    }
    r.ntk_cos = ratio(k_ij, k_ii, k_jj);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace sparseact::routing
