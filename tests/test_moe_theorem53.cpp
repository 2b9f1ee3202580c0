// Theorem 5.3 of paper 003 (moe/theorem53): L703's δ, Lemma B.1's depth term and eq. (21)'s ratio against hand
// values and the closed form (2n/(n + 1))^{n/4}; Table 7's width; bad parameters refused.
#include <catch2/catch.hpp>

#include <cmath>

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
