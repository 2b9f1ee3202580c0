// The GPU's k-WTA by selection (cuda/kwta_select.hpp), run on the CPU: its key order, its radix select
// and its tie decisions against routing::kwta, the CPU's reference, on columns full of ties.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/rng.hpp>
#include <sparseact/cuda/kwta_select.hpp>
#include <sparseact/routing/kwta.hpp>

using namespace sparseact;
namespace ks = sparseact::cuda::kwta_select;

TEST_CASE("kwta_select keys keep the order of doubles, and ±0 tie", "[kwta_select]") {
  const double inf = std::numeric_limits<double>::infinity(), tiny = std::numeric_limits<double>::denorm_min();
  const std::vector<double> ascending = {-inf, -1e308, -2.5, -1.0, -tiny, 0.0, tiny, 1e-300, 1.0, 1.0000000000000002, 3e10, 1e308, inf};
  for (std::size_t i = 0; i + 1 < ascending.size(); ++i) {
    CAPTURE(ascending[i], ascending[i + 1]);
    CHECK(ks::key(ascending[i]) < ks::key(ascending[i + 1]));
  }
  for (double v : ascending) CHECK(ks::from_key(ks::key(v)) == v);
  CHECK(ks::key(-0.0) == ks::key(0.0));
  CHECK_FALSE(std::signbit(ks::from_key(ks::key(-0.0))));
}

TEST_CASE("pick_digit keeps the byte that holds the rank-th largest and the rank within it", "[kwta_select]") {
  unsigned hist[256] = {};
  hist[255] = 2, hist[7] = 3, hist[0] = 4;
  int rank = 2;
  CHECK(ks::pick_digit(hist, rank) == 255);
  CHECK(rank == 2);
  rank = 4;
  CHECK(ks::pick_digit(hist, rank) == 7);
  CHECK(rank == 2);
  rank = 9;
  CHECK(ks::pick_digit(hist, rank) == 0);
  CHECK(rank == 4);
}

TEST_CASE("k-WTA by radix select equals routing::kwta under all three tie rules", "[kwta_select][routing]") {
  Rng rng(11, 0);
  const routing::TieRule rules[] = {routing::TieRule::strict, routing::TieRule::inclusive, routing::TieRule::exact};
  long columns = 0;
  for (int n : {1, 2, 3, 7, 64, 257, 1000}) {
    for (int trial = 0; trial < 40; ++trial) {
      // Values from a few levels (many ties, ±0 among them), or from a continuum, or all equal.
      Eigen::VectorXd v(n);
      const int levels = trial % 4 == 0 ? 1 : trial % 4 == 1 ? 3 : trial % 4 == 2 ? 17 : 0;
      for (int i = 0; i < n; ++i) {
        if (levels == 0) v(i) = rng.normal();
        else {
          const double level = std::floor(rng.uniform(0.0, double(levels))) - levels / 2;
          v(i) = level == 0 && rng.uniform(0.0, 1.0) < 0.5 ? -0.0 : level * 0.25;
        }
      }
      for (int k : {1, 2, n / 3 + 1, n / 2 + 1, n - 1, n, n + 3}) {
        if (k < 1) continue;
        for (int r = 0; r < 3; ++r) {
          CAPTURE(n, trial, k, r);
          const Eigen::VectorXd expected = routing::kwta(v, k, rules[r]);
          Eigen::VectorXd got(n);
          REQUIRE(ks::select_column(v.data(), n, k, r, got.data()));
          CHECK(got == expected);
          ++columns;
        }
      }
    }
  }
  CHECK(columns > 1000);
}

TEST_CASE("k-WTA by radix select refuses a NaN, as routing::kwta does", "[kwta_select]") {
  const double v[] = {1.0, std::nan(""), 0.5};
  double mask[3];
  CHECK_FALSE(ks::select_column(v, 3, 1, 0, mask));
  CHECK_THROWS_AS(routing::kwta(Eigen::Map<const Eigen::VectorXd>(v, 3), 1), std::invalid_argument);
}
