// Lemma 5.1 of paper 003 (moe/lemma51): eq. (14)'s height at hand-computed points (exact powers of two must
// not round up), (i)–(iii) against a built tree, δ-nets' covering radii and sizes.
#include <catch2/catch.hpp>

#include <cmath>

#include <sparseact/moe/lemma51.hpp>

using namespace sparseact::moe;

TEST_CASE("Eq. (14)'s height, leaves and nodes at hand-computed points", "[moe][lemma51]") {
  // [0,1]: diam 1, δ = 1/2 → log₂(diam/δ) = 1, log₂ C = 2: h = 2·2/log₂ν.
  Lemma51 L = lemma51(Domain::cube, 1, 2, 0.5);
  CHECK(L.height == 4);
  CHECK(L.leaves == 16);
  CHECK(L.nodes == 31);
  CHECK(L.net_bound == 4);  // C^{⌈log₂ 2⌉} = 4
  CHECK(lemma51(Domain::cube, 1, 4, 0.5).height == 2);   // exactly 2, not 3
  CHECK(lemma51(Domain::ball, 1, 2, 0.5).height == 6);   // diam 2: log₂ 4 = 2, 2·3
  CHECK(lemma51(Domain::ball, 3, 16, 0.25).height == 4);  // log₂ C = 4, log₂(2/0.25) = 3, log₂ 16 = 4: 4·(1 + 3)/4 exactly
  CHECK(lemma51(Domain::cube, 2, 3, 0.25).height == 7);   // 3/log₂3 · (1 + log₂(4√2)) = 6.62…
}

TEST_CASE("The built complete tree matches (i)–(iii) and holds the net; nets cover K within δ", "[moe][lemma51]") {
  for (Domain d : {Domain::cube, Domain::ball})
    for (int n : {1, 2})
      for (double delta : {0.5, 0.25}) {
        CAPTURE(to_string(d), n, delta);
        const Eigen::MatrixXd grid = grid_net(d, n, delta), greedy = greedy_net(d, n, delta);
        CHECK(covering_radius(d, grid, 3000, 1, 2) < delta);
        CHECK(covering_radius(d, greedy, 3000, 1, 3) < delta);
        const Lemma51 L = lemma51(d, n, 3, delta);
        CHECK(double(greedy.cols()) <= L.net_bound);
        const BuiltTree t = build_complete_tree(3, L.height, greedy);
        REQUIRE(t.built);
        CHECK(t.height == L.height);
        CHECK(double(t.leaves) == L.leaves);
        CHECK(double(t.nodes) == L.nodes);
        CHECK(t.leaves_contain_net);
      }
  CHECK_FALSE(build_complete_tree(2, 40, Eigen::MatrixXd::Zero(1, 1)).built);  // 2^41 nodes: counted, not built
  CHECK_THROWS_AS(lemma51(Domain::cube, 1, 2, 0.6), std::invalid_argument);  // δ > rad [0,1] = 1/2
  CHECK_THROWS_AS(lemma51(Domain::cube, 1, 1, 0.25), std::invalid_argument);
}

TEST_CASE("Eq. (13) as printed: (ν^{h+1} − 1)/(h − 1), right exactly where h = ν", "[moe][lemma51]") {
  using sparseact::moe::eq13_printed_nodes;
  CHECK(eq13_printed_nodes(2, 2) == 7);    // 1 + 2 + 4: h = ν
  CHECK(eq13_printed_nodes(3, 3) == 40);   // 1 + 3 + 9 + 27
  CHECK(eq13_printed_nodes(4, 2) == 63);   // the complete 4-ary tree of height 2 has 21
  CHECK(eq13_printed_nodes(2, 4) == Approx(31.0 / 3));  // it has 31
  CHECK(std::isinf(eq13_printed_nodes(5, 1)));
}

TEST_CASE("Lemma 5.1: one cell's nets measured, trees at eq. (14)'s height, and the nets too large to build", "[moe][lemma51]") {
  // The unit interval at δ = 0.25: the grid net has ⌊1/(2·0.25)⌋ + 1 = 3 cells; every tree holds its net.
  const sparseact::Record rec = measure_nets(Domain::cube, 1, 0.25, {2, 3}, 1000, 1, 2);
  CHECK(rec.num("grid_size") == grid_net(Domain::cube, 1, 0.25).cols());
  CHECK(rec.num("greedy_size") == greedy_net(Domain::cube, 1, 0.25).cols());
  CHECK(rec.num("grid_cover") < 0.25);
  CHECK(rec.num("greedy_cover") < 0.25);
  const std::vector<double>& t = rec.arr("greedy_trees");
  REQUIRE(t.size() == 10);
  for (int v = 0; v < 2; ++v) {
    const Lemma51 L = lemma51(Domain::cube, 1, v == 0 ? 2 : 3, 0.25);
    CHECK(t[5 * v] == 1);
    CHECK(t[5 * v + 1] == L.height);
    CHECK(t[5 * v + 2] == L.leaves);
    CHECK(t[5 * v + 3] == L.nodes);
    CHECK(t[5 * v + 4] == 1);
  }
  // n = 12 at δ = 0.05 needs far more than grid_net's 2·10⁶ points: recorded as −1, nothing else.
  const sparseact::Record big = measure_nets(Domain::cube, 12, 0.05, {2}, 1000, 1, 2);
  CHECK(big.num("grid_size") == -1);
  CHECK_FALSE(big.has("grid_cover"));
}
