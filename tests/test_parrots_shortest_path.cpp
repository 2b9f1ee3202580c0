// Paper 004 §4.1's shortest-path task (parrots/shortest_path, directed graphs in parrots/graphs): directed BFS and
// all shortest paths against brute-force enumeration of simple directed paths, the token layout and loss mask, the
// answer checker on a hand graph with two shortest paths, and the edge-probability scan.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/parrots/shortest_path.hpp>

#include "simple_paths.hpp"

using namespace sparseact;
using namespace sparseact::parrots;

namespace {

std::vector<std::vector<int>> all_simple_directed_paths(const Digraph& g, int from, int to) {
  return all_simple_paths(g, from, to, [](const Digraph& h, int v, int w) { return has_arc(h, v, w); });
}

/// 0 → 1 → 3, 0 → 2 → 3, 3 → 4, 4 → 0: two shortest paths from 0 to 3, and 3 → 4 → 0 back.
Digraph hand_graph() {
  Digraph g{5, {{1, 2}, {3}, {3}, {4}, {0}}};
  return g;
}

}  // namespace

TEST_CASE("directed BFS and all shortest paths match brute-force enumeration of simple paths", "[parrots]") {
  for (int trial = 0; trial < 40; ++trial) {
    Rng rng(11, stream_id(0x004'D16A, std::uint64_t(trial)));
    const int n = 2 + trial % 6;
    const Digraph g = directed_erdos_renyi(n, 0.15 + 0.1 * (trial % 5), rng);
    for (int from = 0; from < n; ++from) {
      const std::vector<int> dist = bfs_distances(g, from);
      for (int to = 0; to < n; ++to) {
        CAPTURE(trial, n, from, to);
        const std::vector<std::vector<int>> simple = all_simple_directed_paths(g, from, to);
        if (simple.empty()) {
          CHECK(dist[std::size_t(to)] == -1);
          CHECK(all_shortest_paths(g, from, to).empty());
          CHECK(first_shortest_path(g, from, to).empty());
          continue;
        }
        std::size_t shortest = simple.front().size();
        for (const auto& p : simple) shortest = std::min(shortest, p.size());
        CHECK(dist[std::size_t(to)] == int(shortest) - 1);
        std::vector<std::vector<int>> expected;
        for (const auto& p : simple)
          if (p.size() == shortest) expected.push_back(p);
        std::sort(expected.begin(), expected.end());
        CHECK(all_shortest_paths(g, from, to) == expected);
        CHECK(first_shortest_path(g, from, to) == expected.front());
      }
    }
  }
  // Arcs are one-way: 3 reaches 0 through 4, 0 reaches 3 in two arcs, 1 never reaches 2.
  const Digraph g = hand_graph();
  CHECK(bfs_distances(g, 3)[0] == 2);
  CHECK(bfs_distances(g, 1)[2] == 4);  // 1 → 3 → 4 → 0 → 2
  CHECK(all_shortest_paths(g, 0, 3) == std::vector<std::vector<int>>{{0, 1, 3}, {0, 2, 3}});
}

TEST_CASE("directed G(n, p): no loops, sorted lists, the arc count's mean, nested in p", "[parrots]") {
  const int n = 20;
  double arcs = 0;
  const int draws = 400;
  for (int i = 0; i < draws; ++i) {
    Rng a(3, std::uint64_t(i)), b(3, std::uint64_t(i));
    const Digraph lo = directed_erdos_renyi(n, 0.1, a), hi = directed_erdos_renyi(n, 0.3, b);
    arcs += double(arc_count(lo));
    for (int u = 0; u < n; ++u) {
      const auto& out = lo.out[std::size_t(u)];
      CHECK(std::is_sorted(out.begin(), out.end()));
      CHECK(std::find(out.begin(), out.end(), u) == out.end());
      for (int v : out) CHECK(has_arc(hi, u, v));  // common random numbers: p = 0.1's arcs are among p = 0.3's
    }
  }
  // E = p n(n − 1) = 38, sd of the mean over 400 draws √(380 · 0.1 · 0.9)/20 ≈ 0.29: ±1.5 is over 5 sd
  CHECK(std::abs(arcs / draws - 38.0) < 1.5);
}

TEST_CASE("shortest-path sequences: §4.1's tokens, the loss mask on the answer only, padding", "[parrots]") {
  PathInstance x{hand_graph(), 0, 3, {0, 1, 3}};
  const PathVocab v{5};
  CHECK(v.size() == 11);  // n + 6 (§4.1)
  const std::vector<int> prompt = path_prompt(x);
  const std::vector<int> want{v.bos(), v.edge(), 0, 1, v.edge(), 0, 2, v.edge(), 1, 3, v.edge(), 2, 3, v.edge(), 3, 4, v.edge(), 4, 0,
                              v.sep(), 0, 3, v.slash()};
  CHECK(prompt == want);
  CHECK(path_answer(x) == std::vector<int>{0, 1, 3, v.eos()});
  CHECK(path_sequence_length(x) == prompt.size() + 4);

  const nn::Dataset d = path_dataset({x}, 30);
  REQUIRE(d.x.rows() == 29);
  // inputs: the sequence without its last token, then PAD; targets: the answer's tokens at the positions before them
  for (Eigen::Index p = 0; p < 29; ++p) {
    CAPTURE(p);
    if (p < Eigen::Index(prompt.size())) CHECK(d.x(p, 0) == prompt[std::size_t(p)]);
    const Eigen::Index from = Eigen::Index(prompt.size()) - 1;  // "/" predicts v₀
    if (p >= from && p < from + 4)
      CHECK(d.y(p, 0) == path_answer(x)[std::size_t(p - from)]);
    else
      CHECK(d.y(p, 0) == -1);
  }
  CHECK(d.x(27, 0) == v.pad());
  CHECK_THROWS_AS(path_dataset({x}, 20), InputError);
}

TEST_CASE("an answer counts when it is any shortest path followed by EOS", "[parrots]") {
  const PathInstance x{hand_graph(), 0, 3, {0, 1, 3}};
  const int eos = PathVocab{5}.eos();
  CHECK(is_shortest_path_answer(x, {0, 1, 3, eos}));
  CHECK(is_shortest_path_answer(x, {0, 2, 3, eos}));   // the other shortest path
  CHECK_FALSE(is_shortest_path_answer(x, {0, 1, 3}));  // no EOS
  CHECK_FALSE(is_shortest_path_answer(x, {0, 1, 2, eos}));  // 1 → 2 is no arc, and it ends at 2
  CHECK_FALSE(is_shortest_path_answer(x, {0, 3, 3, eos}));  // 0 → 3 is no arc
  CHECK_FALSE(is_shortest_path_answer(x, {0, 1, 3, 4, eos}));
  CHECK_FALSE(is_shortest_path_answer(x, {0, 1, eos + 1, eos}));  // a special token inside the path
}

TEST_CASE("sampled instances: reachable queries with their canonical path; the edge-probability scan", "[parrots]") {
  const std::vector<PathInstance> xs = sample_path_instances(12, 2.0 / 11, 200, 5, 9);
  for (const PathInstance& x : xs) {
    CHECK(x.s != x.t);
    CHECK(x.path == all_shortest_paths(x.g, x.s, x.t).front());
    CHECK(is_shortest_path_answer(x, path_answer(x)));
  }
  CHECK(sample_path_instances(12, 2.0 / 11, 3, 5, 9)[2].path == xs[2].path);  // instance i has its own stream
  CHECK_THROWS_AS(sample_path_instances(2, 0.5, 1, 5, 9), InputError);

  // §4.1's mean length 3.5 is out of reach on 12 vertices (the mean peaks below 3), within reach on 40
  const EdgeProbability small = path_edge_probability(12, 3.5, 100, 1);
  CHECK_FALSE(small.reached);
  CHECK(small.mean_length == small.peak_length);
  CHECK(small.peak_length > 2.0);
  CHECK(small.peak_length < 3.0);
  const EdgeProbability large = path_edge_probability(40, 3.5, 40, 1);
  CHECK(large.reached);
  CHECK(std::abs(large.mean_length - 3.5) <= 0.05);
}
