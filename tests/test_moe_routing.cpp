// Paper 003's Voronoi cells and routing trees (moe/voronoi, moe/routing_tree): exact ties, the exact
// router against the scan, the greedy router's query count, Example 1.
#include <catch2/catch.hpp>

#include <boost/multiprecision/cpp_int.hpp>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/moe/routing_study.hpp>
#include <sparseact/moe/routing_tree.hpp>
#include <sparseact/moe/voronoi.hpp>

using namespace sparseact;
using namespace sparseact::moe;

namespace {

/// Eq. (5) by brute force in exact rationals.
Eigen::Index brute_cell(const Eigen::VectorXd& x, const Eigen::MatrixXd& P) {
  using R = boost::multiprecision::cpp_rational;
  Eigen::Index best = 0;
  R best_d = -1;
  for (Eigen::Index i = 0; i < P.cols(); ++i) {
    R d = 0;
    for (Eigen::Index k = 0; k < x.size(); ++k) d += (R(x(k)) - R(P(k, i))) * (R(x(k)) - R(P(k, i)));
    if (best_d < 0 || d < best_d) best_d = d, best = i;
  }
  return best;
}

Eigen::MatrixXd dyadic(Eigen::Index n, Eigen::Index m, int bits, std::uint64_t seed) {
  Rng rng(seed, 1);
  Eigen::MatrixXd X(n, m);
  for (auto& v : X.reshaped()) v = double(rng.below(std::uint64_t(1) << bits)) / double(std::uint64_t(1) << bits);
  return X;
}

}  // namespace

TEST_CASE("Squared distances compare exactly, where doubles would round to a tie", "[moe][voronoi]") {
  const double x[] = {0.0}, a[] = {1e-170}, b[] = {2e-170}, c[] = {-1e-170};
  CHECK(compare_distances(x, a, b, 1) == -1);  // both squares underflow to 0 in double
  CHECK(compare_distances(x, b, a, 1) == 1);
  CHECK(compare_distances(x, a, c, 1) == 0);
  const double y[] = {0.25, 0.75}, p[] = {0.5, 1.0}, q[] = {0.0, 0.5};  // dyadic: an exact tie at distance² 1/8
  CHECK(compare_distances(y, p, q, 2) == 0);
}

TEST_CASE("Eq. (5) gives ties to the lowest index and equals exact brute force on dyadic grids", "[moe][voronoi]") {
  Eigen::MatrixXd P(1, 3);
  P << 0.0, 1.0, 1.0;
  CHECK(voronoi_cell(Eigen::VectorXd::Constant(1, 1.0), P) == 1);
  CHECK(voronoi_cell(Eigen::VectorXd::Constant(1, 0.5), P) == 0);
  long q = 0;
  voronoi_cell(Eigen::VectorXd::Constant(1, 0.2), P, &q);
  CHECK(q == 3);
  for (Eigen::Index n : {1, 2, 3}) {
    const Eigen::MatrixXd protos = dyadic(n, 9, 2, 3 + std::uint64_t(n)), X = dyadic(n, 300, 3, 9);
    for (Eigen::Index j = 0; j < X.cols(); ++j) CHECK(voronoi_cell(X.col(j), protos) == brute_cell(X.col(j), protos));
  }
}

TEST_CASE("The exact router equals the scan, ties included; greedy makes ν⌈log_ν K⌉ queries", "[moe][routing_tree]") {
  for (int nu : {2, 3, 4})
    for (Eigen::Index K : {1, 5, 16, 27, 64}) {
      for (Eigen::Index n : {1, 2, 5}) {
        CAPTURE(nu, K, n);
        const Eigen::MatrixXd P = dyadic(n, K, 3, 11), X = dyadic(n, 200, 4, 12);
        const RoutingTree t = build_routing_tree(P, nu);
        int h = 0;
        for (long cap = 1; cap < K; cap *= nu) ++h;
        CHECK(t.height == h);
        for (Eigen::Index j = 0; j < X.cols(); ++j) {
          long qe = 0, qg = 0;
          CHECK(route_exact(t, P, X.col(j), &qe) == voronoi_cell(X.col(j), P));
          const Eigen::Index g = route_greedy(t, X.col(j), &qg);
          CHECK((g >= 0 && g < K));
          CHECK(qg <= long(nu) * h);
          bool full = true;  // K = ν^h: every level has ν children
          long cap = 1;
          for (int i = 0; i < h; ++i) cap *= nu;
          full = cap == K;
          if (full) CHECK(qg == long(nu) * h);
        }
      }
    }
  CHECK_THROWS_AS(build_routing_tree(Eigen::MatrixXd(2, 0), 2), std::invalid_argument);
  CHECK_THROWS_AS(build_routing_tree(Eigen::MatrixXd::Zero(2, 3), 1), std::invalid_argument);
}

TEST_CASE("Example 1 equals eq. (5) off the cell boundaries; at the ties 1/4, 1/2, 3/4 its strict < goes right", "[moe][routing_tree]") {
  Eigen::MatrixXd P(1, 4);
  P << 0.125, 0.375, 0.625, 0.875;
  for (int i = 0; i <= 64; ++i) {
    const double x = i / 64.0;
    const int eq5 = int(voronoi_cell(Eigen::VectorXd::Constant(1, x), P)) + 1;
    if (i == 16 || i == 32 || i == 48) CHECK(example1_cell(x) == eq5 + 1);
    else CHECK(example1_cell(x) == eq5);
  }
}

TEST_CASE("On Example 1's prototypes the built binary tree is Example 1's, and greedy descent never misroutes on grids", "[moe][routing_tree]") {
  Eigen::MatrixXd P(1, 4);
  P << 0.125, 0.375, 0.625, 0.875;
  const RoutingTree t = build_routing_tree(P, 2);
  REQUIRE(t.children[0].size() == 2);
  CHECK(t.points(0, t.children[0][0]) == 0.25);
  CHECK(t.points(0, t.children[0][1]) == 0.75);
  for (int i = 0; i <= 64; ++i) {
    const double x = i / 64.0;
    if (i == 16 || i == 32 || i == 48) continue;  // ties: greedy keeps the first child, Algorithm 1 the second
    CHECK(route_greedy(t, Eigen::VectorXd::Constant(1, x)) + 1 == example1_cell(x));
  }
  // A 2-D grid of 8 × 8 cell centres: the centroid bisectors are the Voronoi boundaries.
  Eigen::MatrixXd G(2, 64);
  for (int k = 0; k < 64; ++k) G(0, k) = (k % 8 + 0.5) / 8, G(1, k) = (k / 8 + 0.5) / 8;
  const RoutingTree g = build_routing_tree(G, 4);
  Rng rng(4, 4);
  for (int j = 0; j < 500; ++j) {
    const Eigen::Vector2d x(rng.uniform(), rng.uniform());
    CHECK(route_greedy(g, x) == voronoi_cell(x, G));
  }
}

TEST_CASE("Every prototype set, k-means centroids included: the exact router never misroutes, greedy keeps its query count", "[moe][routing_tree]") {
  const auto sets = split_sets("grid,uniform,kmeans");
  REQUIRE(sets.size() == 3);
  CHECK_THROWS_AS(split_sets("grid,voronoi"), sparseact::InputError);
  for (const RoutingConfig& c : routing_configs(sets, {2}, {16, 64}, {2, 4})) {
    CAPTURE(c.key());
    const RoutingResult r = run_routing(c, 300, 3, 1);
    CHECK(r.exact.misroute_rate == 0);
    CHECK(r.scan.queries_max == c.K);
    CHECK(r.greedy.queries_max <= c.nu * c.height());
  }
}
