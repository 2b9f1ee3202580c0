// Theorem 5.3 of paper 003 (moe/theorem53): L703's δ, Lemma B.1's depth term and eq. (21)'s ratio against hand
// values and the closed form (2n/(n + 1))^{n/4}; Table 7's width; bad parameters refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <sparseact/moe/theorem53.hpp>

using namespace sparseact::moe;

TEST_CASE("Theorem 5.3: δ and the depth by hand at n = m = 1, r = 1/2, α = L = 1", "[moe][theorem53]") {
  // δ = ε^{−1}/2 · ε/131 = 1/262 for every ε; T(δ) = (2^{3/2} δ / (√2 ε/131))^{1/2} = ε^{−1/2}.
  for (double eps : {0.5, 0.25, 0.01}) {
    const Theorem53 t = theorem53(Domain::cube, 1, 1, 2, eps, 0.5, {1, 1});
    CHECK(t.delta == Approx(1.0 / 262).epsilon(1e-14));
    CHECK(t.depth_term == Approx(1 / std::sqrt(eps)).epsilon(1e-13));
    CHECK(t.eq21_ratio == Approx(1).epsilon(1e-13));
  }
  const Theorem53 t = theorem53(Domain::cube, 1, 1, 2, 0.25, 0.5, {1, 1});
  CHECK(t.depth == 1 * (19 + 2 + 11 * 2));
  CHECK(t.width == 16 * 3 + 1);
  CHECK(t.tree_valid);
  CHECK(t.tree.height == lemma51(Domain::cube, 1, 2, 1.0 / 262).height);
}

TEST_CASE("eq. (21): the depth term over ε^{−r} is (2n/(n + 1))^{n/4} for every ε, r, α, L, m", "[moe][theorem53]") {
  for (int n : {1, 2, 3, 5, 8})
    for (double eps : {0.3, 0.01})
      for (double r : {-0.5, 0.25, 1.0})
        for (const Holder h : {Holder{1, 1}, Holder{2.5, 0.4}})
          for (int m : {1, 3}) {
            CAPTURE(n, eps, r, h.L, h.alpha, m);
            const Theorem53 t = theorem53(Domain::ball, n, m, 3, eps, r, h);
            CHECK(t.eq21_ratio == Approx(std::pow(2.0 * n / (n + 1), n / 4.0)).epsilon(1e-12));
            CHECK(t.delta == Approx(std::pow(eps, -2 * r / n) / 2 * std::pow(eps / (131 * std::sqrt(double(n * m))) / h.L, 1 / h.alpha)).epsilon(1e-13));
          }
}

TEST_CASE("Theorem 5.3: invalid parameters are refused", "[moe][theorem53]") {
  CHECK_THROWS(theorem53(Domain::cube, 0, 1, 2, 0.1, 0.5, {}));
  CHECK_THROWS(theorem53(Domain::cube, 1, 1, 1, 0.1, 0.5, {}));
  CHECK_THROWS(theorem53(Domain::cube, 1, 1, 2, 0.0, 0.5, {}));
  CHECK_THROWS(theorem53(Domain::cube, 1, 1, 2, 0.1, 0.5, {1, 1.5}));
}

// Eq. (21)'s first ≤ at L703's δ, computed here from the printed expressions (not from t.eq21_ratio): the middle
// expression with (2n)^{1/2} equals ε^{−r} (L703's δ solves it), and left ≤ middle ⟺ (n + 1)^{1/2} ≥ (2n)^{1/2} ⟺
// n + 1 ≥ 2n, an integer comparison: it holds only at n = 1. Lemma 5.2 assumes n ≥ 3, so it fails throughout its range.
TEST_CASE("eq. (21)'s first ≤ holds exactly for n ≤ 1; smallest counterexample n = 2, and n = 3 in Lemma 5.2's range",
          "[moe][theorem53][errata]") {
  const double eps = 0.05, r = 0.5, L = 1.5, alpha = 0.7;
  std::vector<int> failing;
  for (int n = 1; n <= 40; ++n)
    for (int m : {1, 2}) {
      CAPTURE(n, m);
      const double w = std::pow(eps / (131 * std::sqrt(double(n) * m)) / L, 1 / alpha);  // ω⁻¹(ε/(131√(nm)))
      const double delta = std::pow(eps, -2 * r / n) / 2 * w;                              // L703
      const double left = std::pow(delta * std::pow(2.0, 1.5) * std::sqrt(double(n)) / (std::sqrt(n + 1.0) * w), n / 2.0);
      const double middle = std::pow(delta * std::pow(2.0, 1.5) * std::sqrt(double(n)) / (std::sqrt(2.0 * n) * w), n / 2.0);
      CHECK(middle == Approx(std::pow(eps, -r)).epsilon(1e-12));
      const bool exact_holds = n + 1 >= 2 * n;  // integers: no rounding
      CHECK((left <= middle * (1 + 1e-12)) == exact_holds);
      if (!exact_holds) CHECK(left / middle > 1 + 1e-3);  // never a rounding call: the ratio is ≥ √(4/3)
      const Theorem53 t = theorem53(Domain::ball, n, m, 2, eps, r, {L, alpha});
      CHECK(t.eq21_ratio == Approx(left / middle).epsilon(1e-12));
      if (m == 1 && !exact_holds) failing.push_back(n);
    }
  CHECK(failing.size() == 39);
  CHECK(failing.front() == 2);
  CHECK(std::pow(2.0 * 2 / 3, 0.5) == Approx(1.1547005383792515).epsilon(1e-15));
  CHECK(std::pow(2.0 * 3 / 4, 0.75) == Approx(1.3554030054147672).epsilon(1e-15));
}

TEST_CASE("Theorem 5.3's table: one row per (K, n, ε, ν), each equal to theorem53", "[moe][theorem53]") {
  const sparseact::Table t = theorem53_table({Domain::cube, Domain::ball}, {1, 3}, {0.5, 0.1}, {2, 4}, 1, 0.5, {1, 1});
  REQUIRE(t.rows.size() == 2 * 2 * 2 * 2);
  CHECK(t.columns.size() == t.rows.front().size());
  // Row 13: the ball (index 1), n = 3 (1), ε = 0.5 (0), ν = 4 (1).
  const Theorem53 ref = theorem53(Domain::ball, 3, 1, 4, 0.5, 0.5, {1, 1});
  const std::vector<double>& row = t.rows[8 + 4 + 0 + 1];
  CHECK(row[0] == 1);
  CHECK(row[1] == 3);
  CHECK(row[2] == 4);
  CHECK(row[3] == 0.5);
  CHECK(row[6] == ref.delta);
  CHECK(row[12] == ref.eq21_ratio);
  CHECK(row[13] == ref.depth);
}
