// Exact shattering by fixed-feature classes (moe/shatter): each class's textbook VC dimension, Cover's
// counts, glp_exact on every labeling of small sets, tampered certificates rejected.
#include <catch2/catch.hpp>

#include <sparseact/moe/shatter.hpp>

using namespace sparseact::moe;

TEST_CASE("Cover's count by hand", "[moe][shatter]") {
  CHECK(cover_count(0, 2) == 1);
  CHECK(cover_count(1, 2) == 2);
  CHECK(cover_count(3, 2) == 8);   // 3 points in R²: all labelings
  CHECK(cover_count(4, 2) == 14);  // 2(1 + 3 + 3)
  CHECK(cover_count(5, 3) == 30);  // 2(1 + 4 + 6 + 4)
  CHECK(cover_count(4, 2, true) == 8);  // homogeneous in R²: 2(1 + 3)
}

TEST_CASE("Each fixed class shatters exactly its textbook VC dimension; halfspaces follow Cover", "[moe][shatter]") {
  for (FixedClass kind : {FixedClass::halfspace, FixedClass::homhalfspace, FixedClass::interval, FixedClass::poly, FixedClass::ball,
                          FixedClass::pwaffine})
    for (int n : {1, 2, 3}) {
      FeatureClass c;
      c.kind = kind;
      c.n = (kind == FixedClass::interval || kind == FixedClass::poly) ? 1 : n;
      c.k = n + 1;
      if (kind == FixedClass::pwaffine) {
        if (n == 3) continue;  // L(n + 1) = 8 plus two: kept small here
        c.prototypes = pwaffine_prototypes(n, 2, 5);
      }
      CAPTURE(to_string(kind), n);
      const int m = known_vc(c) + 2;
      const Growth g = growth(c, class_points(c, m, 7), m);
      CHECK(g.vc_found == known_vc(c));
      CHECK(g.unverified == 0);
      if (kind == FixedClass::halfspace || kind == FixedClass::homhalfspace)
        for (int mm = 1; mm <= m; ++mm) CHECK(g.realized[std::size_t(mm - 1)] == cover_count(mm, c.n, kind == FixedClass::homhalfspace));
      CHECK(g.shattered.size() == (std::size_t(1) << g.vc_found));
      CHECK(g.inherited > 0);  // parents' certificates settle children without LPs
    }
}

TEST_CASE("glp_exact agrees with the floating LP on every labeling of small integer sets; tampered certificates fail", "[moe][shatter]") {
  FeatureClass c;
  c.kind = FixedClass::halfspace, c.n = 2;
  Eigen::MatrixXd X(2, 5);
  X << 0, 1, 0, 1, 2,  //
      0, 0, 1, 1, 3;
  for (unsigned bits = 0; bits < 32; ++bits) {
    std::vector<int> labels(5);
    for (int i = 0; i < 5; ++i) labels[std::size_t(i)] = int((bits >> i) & 1u);
    const Decision f = decide(c, X, labels, false), e = decide(c, X, labels, true);
    CHECK(f.realized == e.realized);
    if (f.realized) {
      CHECK(verify(c, X, labels, f.certificate));
      Certificate bad = f.certificate;
      bad.b[0] = -bad.b[0] - 1e3;  // everything negative now
      std::vector<int> all_zero(5, 0);
      if (labels != all_zero) CHECK_FALSE(verify(c, X, labels, bad));
    }
  }
  // XOR on the unit square is not a halfspace labeling.
  CHECK_FALSE(decide(c, X.leftCols(4), {0, 1, 1, 0}, true).realized);
}

TEST_CASE("verify: a score that doubles round to 0 is decided in rationals", "[moe][shatter]") {
  // w = (1, 1), b = −1 at x = (1, 1e−17): in doubles 1 + 1e−17 − 1 = 0, exactly it is 1e−17 > 0 (label 1);
  // at x = (1, −1e−17) it is −1e−17 (label 0). The double filter must hand both to the rational path.
  const FeatureClass c{.kind = FixedClass::halfspace, .n = 2};
  Eigen::MatrixXd X(2, 2);
  X << 1, 1, 1e-17, -1e-17;
  Certificate cert;
  cert.w = {Eigen::Vector2d(1, 1)};
  cert.b = {-1};
  CHECK(verify(c, X, {1, 0}, cert));
  CHECK_FALSE(verify(c, X, {0, 0}, cert));
  CHECK_FALSE(verify(c, X, {1, 1}, cert));
}
