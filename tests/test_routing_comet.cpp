// COMET's routing network (paper 002, eqs. (4)–(6)) against a hand computation, its invariances and
// the law of its weights.
#include <catch2/catch.hpp>

#include <cmath>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/routing/comet.hpp>

using namespace sparseact;
using namespace sparseact::routing;

TEST_CASE("COMET masks of a hand-set two-hidden-layer router", "[routing][comet]") {
  CometRouter r;
  r.widths = {2, 3, 2, 1};
  r.V = {(Eigen::MatrixXd(3, 2) << 1, 0, 0, 1, -1, 1).finished(), (Eigen::MatrixXd(2, 3) << 1, 1, 0, 0, 0, 1).finished()};
  r.k = {1, 1};
  const Eigen::Vector2d x(2, 1);
  // c_1 = (2, 1, −1) → m_1 = (1, 0, 0), z_1 = (2, 0, 0); c_2 = (2, 0) → m_2 = (1, 0).
  const auto m = comet_masks(r, x);
  REQUIRE(m.size() == 2);
  CHECK(Eigen::VectorXd(m[0].col(0)) == Eigen::Vector3d(1, 0, 0));
  CHECK(Eigen::VectorXd(m[1].col(0)) == Eigen::Vector2d(1, 0));
}

TEST_CASE("COMET masks keep k_ℓ units, ignore the input's scale, and match per-input routing", "[routing][comet]") {
  const CometRouter r = make_comet_router({20, 64, 48, 10}, 0.25, 3, 7);
  REQUIRE(r.V.size() == 2);
  CHECK(r.k == std::vector<int>{16, 12});
  Eigen::MatrixXd X(20, 30);
  Rng rng(4, 4);
  for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = rng.normal();
  const auto m = comet_masks(r, X);
  for (std::size_t l = 0; l < m.size(); ++l)
    for (Eigen::Index c = 0; c < X.cols(); ++c) CHECK(m[l].col(c).sum() == r.k[l]);  // continuous inputs: no ties
  // Linear layers, identity g and C_k(αc) = C_k(c) for α > 0: the masks do not see the input's scale.
  const auto scaled = comet_masks(r, 3.5 * X);
  for (std::size_t l = 0; l < m.size(); ++l) CHECK(scaled[l] == m[l]);
  // A batch routes each input on its own.
  for (Eigen::Index c = 0; c < X.cols(); c += 7) {
    const auto one = comet_masks(r, X.col(c));
    for (std::size_t l = 0; l < m.size(); ++l) CHECK(Eigen::VectorXd(one[l].col(0)) == Eigen::VectorXd(m[l].col(c)));
  }
  // p_k = 1: nothing is masked.
  for (const auto& all : comet_masks(make_comet_router({20, 64, 48, 10}, 1.0, 3, 7), X)) CHECK(all.minCoeff() == 1.0);
}

TEST_CASE("COMET's V_ℓ follow U(−N^{−1/2}, N^{−1/2}) and depend only on (seed, stream)", "[routing][comet]") {
  const CometRouter r = make_comet_router({400, 300, 10}, 0.5, 11, 2);
  const Eigen::MatrixXd& V = r.V[0];
  const double a = 1 / std::sqrt(400.0);
  CHECK(V.cwiseAbs().maxCoeff() <= a);
  // E v² = a²/3: the sample mean of v² within a 99.9% normal interval of its standard error.
  stats::RunningMean sq;
  for (Eigen::Index i = 0; i < V.size(); ++i) sq.push(V.data()[i] * V.data()[i]);
  CHECK(std::abs(sq.mean() - a * a / 3) <= stats::normal_quantile(0.9995) * sq.std_error());
  CHECK(make_comet_router({400, 300, 10}, 0.5, 11, 2).V[0] == V);
  CHECK(make_comet_router({400, 300, 10}, 0.5, 12, 2).V[0] != V);
  CHECK_THROWS_AS(make_comet_router({400}, 0.5, 1, 1), std::invalid_argument);
  CHECK_THROWS_AS(make_comet_router({400, 0, 10}, 0.5, 1, 1), std::invalid_argument);
  CHECK_THROWS_AS(make_comet_router({4, 3, 2}, 0.0, 1, 1), std::invalid_argument);
  CHECK_THROWS_AS(comet_masks(r, Eigen::MatrixXd::Zero(3, 2)), std::invalid_argument);
}
