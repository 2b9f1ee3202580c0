#include <sparseact/routing/comet.hpp>

#include <cmath>
#include <stdexcept>

#include <sparseact/core/rng.hpp>

namespace sparseact::routing {

CometRouter make_comet_router(const std::vector<int>& widths, double p_k, std::uint64_t seed, std::uint64_t stream, TieRule rule) {
  if (widths.size() < 2) throw std::invalid_argument("make_comet_router: need an input width and at least one layer");
  for (int w : widths)
    if (w < 1) throw std::invalid_argument("make_comet_router: every width must be at least 1");
  if (!(p_k > 0 && p_k <= 1)) throw std::invalid_argument("make_comet_router: p_k must lie in (0, 1]");
  CometRouter r;
  r.widths = widths;
  r.rule = rule;
  for (std::size_t l = 1; l + 1 < widths.size(); ++l) {
    const double bound = 1.0 / std::sqrt(double(widths[l - 1]));
    Rng rng(seed, stream_id(stream, l));
    Eigen::MatrixXd V(widths[l], widths[l - 1]);
    for (Eigen::Index j = 0; j < V.cols(); ++j)  // column-major draw order, fixed
      for (Eigen::Index i = 0; i < V.rows(); ++i) V(i, j) = rng.uniform(-bound, bound);
    r.V.push_back(std::move(V));
    r.k.push_back(active_units(p_k, widths[l]));
  }
  return r;
}

std::vector<Eigen::MatrixXd> comet_masks(const CometRouter& router, const Eigen::MatrixXd& X0) {
  if (X0.rows() != router.widths.front()) throw std::invalid_argument("comet_masks: inputs have the wrong dimension");
  std::vector<Eigen::MatrixXd> masks;
  Eigen::MatrixXd z = X0;
  for (std::size_t l = 0; l < router.V.size(); ++l) {
    const Eigen::MatrixXd c = router.V[l] * z;                        // (4)
    masks.push_back(kwta_columns(c, router.k[l], router.rule));      // (5)
    z = masks.back().cwiseProduct(c);                                 // (6), g = identity
  }
  return masks;
}

std::vector<Eigen::MatrixXd> comet_masks(const CometRouter& router, const Eigen::MatrixXd& X0, const std::vector<double>& column_pk) {
  if (X0.rows() != router.widths.front()) throw std::invalid_argument("comet_masks: inputs have the wrong dimension");
  if (column_pk.size() != std::size_t(X0.cols())) throw std::invalid_argument("comet_masks: need one p_k per input column");
  std::vector<Eigen::MatrixXd> masks;
  Eigen::MatrixXd z = X0;
  for (std::size_t l = 0; l < router.V.size(); ++l) {
    const Eigen::MatrixXd c = router.V[l] * z;  // (4)
    Eigen::MatrixXd m(c.rows(), c.cols());
    for (Eigen::Index j = 0; j < c.cols(); ++j)  // (5), each column at its own k
      m.col(j) = kwta(c.col(j), active_units(column_pk[std::size_t(j)], router.widths[l + 1]), router.rule);
    z = m.cwiseProduct(c);  // (6)
    masks.push_back(std::move(m));
  }
  return masks;
}

}  // namespace sparseact::routing
