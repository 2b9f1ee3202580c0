// Paper 004 graphs (parrots/graphs): BFS distances and all shortest paths against brute-force enumeration of simple
// paths, the length-2 path problem of Definition 3.1 (s, d the first and last vertex, ERRATA 004), G(n, p), and
// Lemma D.2's two reductions with their round trip.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include <sparseact/core/rng.hpp>
#include <sparseact/parrots/graphs.hpp>

#include "simple_paths.hpp"

using namespace sparseact;
using namespace sparseact::parrots;

namespace {

std::vector<std::vector<int>> all_simple_paths(const Graph& g, int from, int to) {
  return ::all_simple_paths(g, from, to, [](const Graph& h, int v, int w) { return has_edge(h, v, w); });
}

}  // namespace

TEST_CASE("BFS distances and all shortest paths match brute-force path enumeration", "[parrots]") {
  for (int trial = 0; trial < 60; ++trial) {
    Rng rng(7, stream_id(0x004'7E57, std::uint64_t(trial)));
    const int n = 2 + trial % 6;
    const Graph g = erdos_renyi(n, 0.15 + 0.1 * (trial % 5), rng);
    for (int from = 0; from < n; ++from) {
      const std::vector<int> dist = bfs_distances(g, from);
      for (int to = 0; to < n; ++to) {
        CAPTURE(trial, n, from, to);
        std::vector<std::vector<int>> simple = all_simple_paths(g, from, to);
        if (simple.empty()) {
          CHECK(dist[std::size_t(to)] == -1);
          CHECK(all_shortest_paths(g, from, to).empty());
          continue;
        }
        std::size_t shortest = simple.front().size();
        for (const auto& p : simple) shortest = std::min(shortest, p.size());
        CHECK(dist[std::size_t(to)] == int(shortest) - 1);
        std::vector<std::vector<int>> expected;
        for (const auto& p : simple)
          if (p.size() == shortest) expected.push_back(p);
        std::sort(expected.begin(), expected.end());
        CHECK(all_shortest_paths(g, from, to) == expected);  // lexicographic order
      }
    }
  }
}

TEST_CASE("length-2 path: BFS layers, brute force and hand cases agree (Definition 3.1)", "[parrots]") {
  for (int n = 3; n <= 5; ++n)
    for (std::uint64_t mask = 0; mask < (std::uint64_t(1) << (n * (n - 1) / 2)); ++mask) {
      const Graph g = graph_from_mask(n, mask);
      CHECK(length2_path_by_bfs(g) == length2_path_brute_force(g));
    }
  // s = 0, d = 3. A direct edge s–d and a common neighbour 1: dist(s, d) = 1 but the path 0–1–3 has length 2.
  Graph g = empty_graph(4);
  add_edge(g, 0, 3);
  add_edge(g, 0, 1);
  add_edge(g, 1, 3);
  CHECK(bfs_distances(g, 0)[3] == 1);
  CHECK(length2_path_by_bfs(g));
  // Only the direct edge: no length-2 path. A path of length 3 (0–1–2–3): none either.
  Graph direct = empty_graph(4);
  add_edge(direct, 0, 3);
  CHECK_FALSE(length2_path_by_bfs(direct));
  Graph three = empty_graph(4);
  add_edge(three, 0, 1), add_edge(three, 1, 2), add_edge(three, 2, 3);
  CHECK_FALSE(length2_path_by_bfs(three));
  CHECK(source(three) == 0);
  CHECK(destination(three) == 3);
  CHECK_THROWS(length2_path_by_bfs(empty_graph(2)));
}

TEST_CASE("graph bookkeeping: pair_index, masks, edges, bad edges", "[parrots]") {
  CHECK(pair_index(4, 0, 1) == 0);
  CHECK(pair_index(4, 0, 3) == 2);
  CHECK(pair_index(4, 2, 1) == 3);
  CHECK(pair_index(4, 2, 3) == 5);
  const Graph g = graph_from_mask(4, 0b100101);  // pairs 0, 2, 5: {0,1}, {0,3}, {2,3}
  CHECK(edges(g) == std::vector<std::pair<int, int>>{{0, 1}, {0, 3}, {2, 3}});
  CHECK(edge_count(g) == 3);
  Graph h = empty_graph(3);
  add_edge(h, 0, 1);
  CHECK_THROWS(add_edge(h, 1, 0));
  CHECK_THROWS(add_edge(h, 2, 2));
  CHECK_THROWS(add_edge(h, 0, 3));
  CHECK_THROWS(graph_from_mask(3, 0b1000));
}

TEST_CASE("G(n, p): reproducible, the edge count's mean, p = 0 and 1", "[parrots]") {
  Rng r1(3, 11), r2(3, 11);
  CHECK(erdos_renyi(50, 0.1, r1).adj == erdos_renyi(50, 0.1, r2).adj);
  Rng rng(5, 1);
  const int n = 40, reps = 400;
  const double p = 0.2, pairs = n * (n - 1) / 2.0;
  double total = 0;
  for (int t = 0; t < reps; ++t) total += double(edge_count(erdos_renyi(n, p, rng)));
  // mean p·C(n, 2) = 156; the mean of 400 graphs has standard error √(C(n,2) p(1−p)/400) ≈ 0.56
  CHECK(std::abs(total / reps - p * pairs) < 5 * std::sqrt(pairs * p * (1 - p) / reps));
  CHECK(edge_count(erdos_renyi(9, 0.0, rng)) == 0);
  CHECK(edge_count(erdos_renyi(9, 1.0, rng)) == 36);
  CHECK_THROWS(erdos_renyi(9, 1.5, rng));
}

TEST_CASE("half_probability_edge solves 1 − (1 − p²)^{|V|−2} = 1/2", "[parrots]") {
  for (int V : {3, 4, 16, 1024}) {
    const double p = half_probability_edge(V);
    CHECK(1 - std::pow(1 - p * p, V - 2) == Approx(0.5).epsilon(1e-12));
  }
  CHECK(half_probability_edge(3) == Approx(std::sqrt(0.5)));
}

TEST_CASE("Lemma D.2: both reductions and the round trip on every pair of subsets of [n], n ≤ 5", "[parrots]") {
  // Hand case: A = {0, 2}, B = {2}, r = 3. Vertices: Alice 0, items 1, 2, 3, Bob 4. Edges 0–1, 0–3, 4–3: the path
  // 0–3–4 runs through item 2 (vertex 3), and max_i A_i B_i = A_2 B_2 = 1.
  const Graph g = graph_from_sets({1, 0, 1}, {0, 0, 1});
  CHECK(edges(g) == std::vector<std::pair<int, int>>{{0, 1}, {0, 3}, {3, 4}});
  CHECK(length2_path_brute_force(g));
  CHECK(disj({1, 0, 1}, {0, 0, 1}) == 1);
  CHECK(disj({1, 0, 1}, {0, 1, 0}) == 0);
  const SetPair back = sets_from_graph(g);
  CHECK(back.a == Bits{0, 1, 0, 1, 0});
  CHECK(back.b == Bits{0, 0, 0, 1, 0});

  Rng rng(1, 2);
  LemmaD2Tally t;
  for (int n = 1; n <= 5; ++n)
    for (std::uint64_t k = 0; k < (std::uint64_t(1) << (2 * n)); ++k) {
      Bits A(static_cast<std::size_t>(n), 0), B(static_cast<std::size_t>(n), 0);
      for (int e = 0; e < n; ++e) A[std::size_t(e)] = (k >> e) & 1, B[std::size_t(e)] = (k >> (n + e)) & 1;
      tally_lemma_d2(A, B, rng, t);
    }
  CHECK(t.instances == 4 + 16 + 64 + 256 + 1024);
  CHECK(t.intersecting == (4 - 3) + (16 - 9) + (64 - 27) + (256 - 81) + (1024 - 243));  // 4^n − 3^n pairs meet
  CHECK(t.forward_wrong == 0);
  CHECK(t.backward_wrong == 0);
  CHECK(t.round_trip_wrong == 0);
  CHECK_THROWS(disj({1}, {1, 0}));
  CHECK_THROWS(graph_from_sets({}, {}));
}

TEST_CASE("Lemma D.2 (⟸) on every graph with |V| ≤ 6", "[parrots]") {
  LemmaD2Tally t;
  for (int n = 3; n <= 6; ++n)
    for (std::uint64_t mask = 0; mask < (std::uint64_t(1) << (n * (n - 1) / 2)); ++mask) tally_lemma_d2_backward(graph_from_mask(n, mask), t);
  CHECK(t.instances == 8 + 64 + 1024 + 32768);
  CHECK(t.backward_wrong == 0);
}
