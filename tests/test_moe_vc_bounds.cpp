// Paper 003 Theorem 4.2's terms (moe/vc_bounds) against values computed independently with Python's math
// module (log2, e), and the L at which the proof's step (28) ≤ (29) starts to hold.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

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

// Independent of moe/vc_bounds: (28) ≤ (29) ⟺ log 6 · log(3L) ≤ (log max{2, L})² after M > 0 cancels. Every term
// is a product of two logarithms of one base b, so dividing by (ln b)² shows the base cancels; we compare in
// base e, 2 and 10 (long double) and against the closed-form root of x² − ln 6·x − ln 6·ln 3 (x = ln L).
TEST_CASE("Theorem 4.2 step (28) ≤ (29): false exactly for L ∈ {1, …, 12} in every base; smallest counterexample L = 2",
          "[moe][vc_bounds][errata]") {
  using R = long double;
  const auto holds_in_base = [](int L, R base) {
    const auto lg = [base](R v) { return std::log(v) / std::log(base); };
    const R m = lg(std::max<R>(2, L));
    return lg(6) * lg(R(3) * L) <= m * m;
  };
  const R l6 = std::log(R(6)), l3 = std::log(R(3));
  const R L_star = std::exp((l6 + std::sqrt(l6 * l6 + 4 * l6 * l3)) / 2);
  CHECK(L_star > 12);
  CHECK(L_star < 13);
  CHECK(double(L_star) == Approx(12.942632213678575).epsilon(1e-12));
  std::vector<int> failing;
  for (int L = 1; L <= 100000; ++L) {
    const bool e = holds_in_base(L, std::exp(R(1))), two = holds_in_base(L, 2), ten = holds_in_base(L, 10);
    CAPTURE(L);
    REQUIRE(e == two);
    REQUIRE(e == ten);
    if (!e) failing.push_back(L);
    if (L >= 2) REQUIRE(e == (R(L) >= L_star));  // the closed form, where max{2, L} = L
  }
  CHECK(failing == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  // The comparisons are not decided by rounding: the margins at the threshold are far above 1e-15.
  const auto gap = [&](int L) { const R m = std::log(std::max<R>(2, L)); return m * m - l6 * std::log(R(3) * L); };
  CHECK(double(gap(12)) == Approx(-0.246042932976178).epsilon(1e-9));
  CHECK(double(gap(13)) == Approx(0.0147439357888359).epsilon(1e-9));
  // L = 2, every term defined (log(3L − 3) = log 3): (28) = 2·4 log₂6·M·2 log₂6 = 16 (log₂6)² M, (29) = 8·2·1·M = 16 M.
  const double lg6 = std::log2(6.0);
  for (const double d : {1.0, 61.75, 1e4}) {
    const double M = std::max(d, 2.0 * (1 + 1) * 1 * std::log2(3.0));
    CHECK(eq28(d, 1, 2) == Approx(16 * lg6 * lg6 * M).epsilon(1e-13));
    CHECK(eq29(d, 1, 2) == Approx(16 * M).epsilon(1e-13));
    CHECK(eq28(d, 1, 2) / eq29(d, 1, 2) == Approx(lg6 * lg6).epsilon(1e-13));  // 6.68
  }
  // The library's comparison agrees with the independent one.
  for (int L = 1; L <= 2000; ++L) CHECK((eq28(3.0, 4, L) <= eq29(3.0, 4, L)) == (L >= 13));
}
