// Paper 003 Theorem 4.2's terms (moe/vc_bounds) against values computed independently with Python's math
// module (log2, e), and the L at which the proof's step (28) ≤ (29) starts to hold.
#include <catch2/catch.hpp>

#include <sparseact/moe/vc_bounds.hpp>

using namespace sparseact::moe;

TEST_CASE("D*, the Voronoi term and eqs. (28)–(29) at hand-computed points", "[moe][vc_bounds]") {
  struct Case {
    int J, W, L, n;
    double d, vor, e28, e29;
  };
  const Case cases[] = {{1, 2, 1, 1, 61.75304123984963, 0.0, 2024.0515842772872, 494.02432991879704},
                        {2, 4, 4, 2, 463.7242397536212, 57.05865002596162, 137514.54644064713, 59356.70268846351},
                        {3, 16, 13, 8, 12823.888211725036, 1116.7038003115395, 18221551.499380365, 18262479.032777965},
                        {1, 1, 2, 3, 13.452466862714767, 12.679700005769249, 1438.2368376602215, 215.23946980343626}};
  for (const Case& c : cases) {
    CAPTURE(c.J, c.W, c.L, c.n);
    CHECK(d_star(c.J, c.W) == Approx(c.d).epsilon(1e-13));
    CHECK(voronoi_term(c.n, c.L) == Approx(c.vor).epsilon(1e-13));
    CHECK(eq28(c.d, c.n, c.L) == Approx(c.e28).epsilon(1e-13));
    CHECK(eq29(c.d, c.n, c.L) == Approx(c.e29).epsilon(1e-13));
    CHECK(theorem42_bound(c.J, c.W, c.L, c.n) == Approx(c.e28).epsilon(1e-13));
  }
  CHECK(voronoi_term(5, 1) == 0.0);  // one cell has no boundary; log₂(0) never evaluated
  CHECK_THROWS_AS(d_star(0, 3), std::invalid_argument);
  CHECK_THROWS_AS(voronoi_term(1, 0), std::invalid_argument);
}

TEST_CASE("The proof's step (28) ≤ (29) fails exactly for L ≤ 12", "[moe][vc_bounds]") {
  for (int L = 1; L <= 200; ++L) {
    CAPTURE(L);
    CHECK((eq28(7.0, 2, L) <= eq29(7.0, 2, L)) == (L >= 13));
  }
}
