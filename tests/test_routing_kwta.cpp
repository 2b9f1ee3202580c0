// k-WTA (paper 002, eq. (3)) against the definitions written out by brute force: the count
// |{j : v_j ≥ v_i}| for strict, a full sort for inclusive, a stable sort by (−v, index) for exact.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <sparseact/core/rng.hpp>
#include <sparseact/routing/kwta.hpp>

using namespace sparseact;
using namespace sparseact::routing;

namespace {

Eigen::VectorXd brute(const Eigen::VectorXd& v, int k, TieRule rule) {
  const Eigen::Index n = v.size();
  Eigen::VectorXd m = Eigen::VectorXd::Zero(n);
  if (rule == TieRule::strict) {
    for (Eigen::Index i = 0; i < n; ++i) {
      Eigen::Index count = 0;
      for (Eigen::Index j = 0; j < n; ++j) count += v(j) >= v(i);
      m(i) = count <= k;
    }
    return m;
  }
  std::vector<Eigen::Index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) { return v(a) > v(b); });
  const Eigen::Index kk = std::min<Eigen::Index>(k, n);
  if (rule == TieRule::exact) {
    for (Eigen::Index r = 0; r < kk; ++r) m(order[static_cast<std::size_t>(r)]) = 1;
    return m;
  }
  const double t = v(order[static_cast<std::size_t>(kk - 1)]);
  for (Eigen::Index i = 0; i < n; ++i) m(i) = v(i) >= t;
  return m;
}

}  // namespace

TEST_CASE("k-WTA on the tie of ERRATA 002: C_2(3, 2, 2, 1) under each rule", "[routing][kwta]") {
  const Eigen::Vector4d v(3, 2, 2, 1);
  CHECK(kwta(v, 2, TieRule::strict) == Eigen::Vector4d(1, 0, 0, 0));
  CHECK(kwta(v, 2, TieRule::inclusive) == Eigen::Vector4d(1, 1, 1, 0));
  CHECK(kwta(v, 2, TieRule::exact) == Eigen::Vector4d(1, 1, 0, 0));
  CHECK(kwta(v, 2) == kwta(v, 2, TieRule::strict));  // the default is eq. (3) literally
  CHECK(kwta(v, 4, TieRule::strict) == Eigen::Vector4d(1, 1, 1, 1));
  CHECK(kwta(v, 9, TieRule::exact) == Eigen::Vector4d(1, 1, 1, 1));
}

TEST_CASE("k-WTA equals its brute-force definition on vectors full of ties, every k and rule", "[routing][kwta]") {
  Rng rng(21, 2);
  for (int trial = 0; trial < 200; ++trial) {
    const Eigen::Index n = 1 + static_cast<Eigen::Index>(rng.below(12));
    Eigen::VectorXd v(n);
    for (Eigen::Index i = 0; i < n; ++i) v(i) = trial % 2 ? double(rng.below(4)) - 1.5 : rng.normal();  // ties, or none
    for (int k = 1; k <= n + 1; ++k)
      for (TieRule rule : {TieRule::strict, TieRule::inclusive, TieRule::exact}) {
        INFO("trial " << trial << ", k = " << k << ", rule " << to_string(rule));
        REQUIRE(kwta(v, k, rule) == brute(v, k, rule));
      }
    // Without ties the three rules agree and keep exactly min(k, n).
    if (trial % 2 == 0)
      for (int k = 1; k <= n; ++k) CHECK(kwta(v, k, TieRule::strict).sum() == double(k));
  }
}

TEST_CASE("k-WTA by columns is k-WTA of each column", "[routing][kwta]") {
  Rng rng(5, 1);
  Eigen::MatrixXd V(9, 7);
  for (Eigen::Index c = 0; c < V.cols(); ++c)
    for (Eigen::Index r = 0; r < V.rows(); ++r) V(r, c) = double(rng.below(3));
  for (TieRule rule : {TieRule::strict, TieRule::inclusive, TieRule::exact}) {
    const Eigen::MatrixXd M = kwta_columns(V, 3, rule);
    for (Eigen::Index c = 0; c < V.cols(); ++c) CHECK(Eigen::VectorXd(M.col(c)) == kwta(V.col(c), 3, rule));
  }
}

TEST_CASE("k_ℓ = max(1, round(p_k N)), halves away from zero; bad input refused", "[routing][kwta]") {
  CHECK(active_units(0.5, 3) == 2);    // 1.5 → 2
  CHECK(active_units(0.25, 10) == 3);  // 2.5 → 3 (a floor would give 2)
  CHECK(active_units(0.1, 5) == 1);    // 0.5 → 1
  CHECK(active_units(0.01, 10) == 1);  // 0.1 → 0 → at least 1
  CHECK(active_units(1.0, 128) == 128);
  CHECK_THROWS_AS(active_units(0.0, 10), std::invalid_argument);
  CHECK_THROWS_AS(active_units(1.5, 10), std::invalid_argument);
  CHECK_THROWS_AS(active_units(0.5, 0), std::invalid_argument);
  CHECK_THROWS_AS(kwta(Eigen::Vector3d(1, 2, 3), 0), std::invalid_argument);
  CHECK_THROWS_AS(kwta(Eigen::Vector3d(1, std::nan(""), 3), 1), std::invalid_argument);
  CHECK(parse_tie_rule("inclusive") == TieRule::inclusive);
  CHECK_THROWS_AS(parse_tie_rule("loose"), std::invalid_argument);
}
