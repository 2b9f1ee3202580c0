#pragma once
// Brute-force ground truth for the graph tests: every simple path from `from` to `to`, by depth-first search over
// all vertex sequences without repeats, for any graph type with `n` and a predicate adjacent(g, v, w).
#include <functional>
#include <vector>

template <class Graph, class Adjacent>
std::vector<std::vector<int>> all_simple_paths(const Graph& g, int from, int to, Adjacent adjacent) {
  std::vector<std::vector<int>> out;
  std::vector<int> path{from};
  std::vector<bool> used(std::size_t(g.n), false);
  used[std::size_t(from)] = true;
  std::function<void(int)> go = [&](int v) {
    if (v == to) {
      out.push_back(path);
      return;
    }
    for (int w = 0; w < g.n; ++w)
      if (!used[std::size_t(w)] && adjacent(g, v, w)) {
        used[std::size_t(w)] = true, path.push_back(w);
        go(w);
        used[std::size_t(w)] = false, path.pop_back();
      }
  };
  go(from);
  return out;
}
