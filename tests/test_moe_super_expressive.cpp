// Proposition 4.4's construction (moe/super_expressive) by hand and exhaustively, in exact rationals.
#include <catch2/catch.hpp>

#include <sparseact/moe/super_expressive.hpp>

using namespace sparseact::moe;

TEST_CASE("σ* of eq. (9) at hand points", "[moe][super_expressive]") {
  CHECK(sigma_star(Rational(5, 2)) == Rational(1, 2));   // 2.5 mod 2
  CHECK(sigma_star(Rational(4)) == 0);
  CHECK(sigma_star(Rational(7, 4)) == Rational(7, 4));
  CHECK(sigma_star(Rational(-1)) == Rational(-1, 2));    // x/(|x| + 1)
  CHECK(sigma_star(Rational(-3)) == Rational(-3, 4));
}

TEST_CASE("a = Σ b_i 2^i + ½ realises every labeling of 2^{-i}, k ≤ 10, and long ones", "[moe][super_expressive]") {
  for (int k = 1; k <= 10; ++k)
    for (long bits = 0; bits < (1L << k); ++bits) {
      std::vector<int> b(static_cast<std::size_t>(k));
      for (int j = 0; j < k; ++j) b[std::size_t(j)] = int((bits >> j) & 1);
      REQUIRE(super_expressive_labels(super_expressive_weight(b), k) == b);
    }
  std::vector<int> alternating(64);
  for (int j = 0; j < 64; ++j) alternating[std::size_t(j)] = j % 2;
  CHECK(super_expressive_labels(super_expressive_weight(alternating), 64) == alternating);
  CHECK(to_fraction(super_expressive_weight({1, 0, 1})) == "21/2");  // 2 + 8 + ½
}

TEST_CASE("One PReLU unit shatters 3 points and exactly misses the 3-change labelings of 4", "[moe][super_expressive]") {
  const std::vector<double> x{-1.0, 0.0, 2.0, 5.0};
  for (long bits = 0; bits < 16; ++bits) {
    const std::vector<int> y{int(bits & 1), int((bits >> 1) & 1), int((bits >> 2) & 1), int((bits >> 3) & 1)};
    int changes = 0;
    for (int i = 0; i + 1 < 4; ++i) changes += y[std::size_t(i)] != y[std::size_t(i + 1)];
    CAPTURE(bits);
    CHECK(prelu_unit_fit(x, y).realized == (changes <= 2));
  }
}
