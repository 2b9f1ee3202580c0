#include <sparseact/parrots/graphs.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace sparseact::parrots {

namespace {

void require_vertex(const Graph& g, int v) {
  if (v < 0 || v >= g.n) throw std::invalid_argument("vertex " + std::to_string(v) + " outside 0 … " + std::to_string(g.n - 1));
}

void require_length2_instance(const Graph& g) {
  if (g.n < 3) throw std::invalid_argument("the length-2 path problem needs |V| ≥ 3 (s ≠ d and a vertex between them)");
}

void require_vertex(const Digraph& g, int v) {
  if (v < 0 || v >= g.n) throw std::invalid_argument("vertex " + std::to_string(v) + " outside 0 … " + std::to_string(g.n - 1));
}

/// BFS over adjacency lists (undirected neighbours or directed out-lists).
std::vector<int> bfs_over(const std::vector<std::vector<int>>& adj, int source_vertex) {
  std::vector<int> dist(adj.size(), -1);
  std::vector<int> queue;
  queue.reserve(adj.size());
  dist[std::size_t(source_vertex)] = 0;
  queue.push_back(source_vertex);
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const int v = queue[head];
    for (int w : adj[std::size_t(v)])
      if (dist[std::size_t(w)] < 0) {
        dist[std::size_t(w)] = dist[std::size_t(v)] + 1;
        queue.push_back(w);
      }
  }
  return dist;
}

/// Every shortest path from `from` to `to` given each vertex's distance to `to`: a shortest path steps from v to an
/// out-neighbour w with dist_to(w) = dist_to(v) − 1 (the BFS DAG). Depth-first with sorted lists, so the paths come
/// out in lexicographic order.
std::vector<std::vector<int>> shortest_paths_over(const std::vector<std::vector<int>>& out, const std::vector<int>& dist_to, int from, int to,
                                                  std::size_t max_paths) {
  std::vector<std::vector<int>> paths;
  if (dist_to[std::size_t(from)] < 0) return paths;
  std::vector<int> path{from};
  const auto extend = [&](const auto& self, int v) -> void {
    if (v == to) {
      if (paths.size() == max_paths) throw std::length_error("more than max_paths shortest paths");
      paths.push_back(path);
      return;
    }
    for (int w : out[std::size_t(v)])
      if (dist_to[std::size_t(w)] == dist_to[std::size_t(v)] - 1) {
        path.push_back(w);
        self(self, w);
        path.pop_back();
      }
  };
  extend(extend, from);
  return paths;
}

}  // namespace

Graph empty_graph(int n) {
  if (n < 1) throw std::invalid_argument("a graph needs at least one vertex");
  Graph g;
  g.n = n;
  g.adj.assign(std::size_t(n), {});
  return g;
}

void add_edge(Graph& g, int u, int v) {
  require_vertex(g, u);
  require_vertex(g, v);
  if (u == v) throw std::invalid_argument("a simple graph has no loops");
  auto insert = [](std::vector<int>& list, int w) {
    if (list.empty() || list.back() < w) {  // the common case: edges appended in order
      list.push_back(w);
      return;
    }
    const auto at = std::lower_bound(list.begin(), list.end(), w);
    if (at != list.end() && *at == w) throw std::invalid_argument("edge already present");
    list.insert(at, w);
  };
  insert(g.adj[std::size_t(u)], v);
  insert(g.adj[std::size_t(v)], u);
}

bool has_edge(const Graph& g, int u, int v) {
  require_vertex(g, u);
  require_vertex(g, v);
  const std::vector<int>& list = g.adj[std::size_t(u)];
  return std::binary_search(list.begin(), list.end(), v);
}

std::size_t edge_count(const Graph& g) {
  std::size_t degrees = 0;
  for (const auto& list : g.adj) degrees += list.size();
  return degrees / 2;
}

std::vector<std::pair<int, int>> edges(const Graph& g) {
  std::vector<std::pair<int, int>> out;
  out.reserve(edge_count(g));
  for (int u = 0; u < g.n; ++u)
    for (int v : g.adj[std::size_t(u)])
      if (u < v) out.emplace_back(u, v);
  return out;
}

std::size_t pair_index(int n, int u, int v) {
  if (u == v || u < 0 || v < 0 || u >= n || v >= n) throw std::invalid_argument("pair_index needs two distinct vertices of 0 … n − 1");
  if (u > v) std::swap(u, v);
  // pairs before row u: (n − 1) + (n − 2) + … + (n − u) = u n − u(u + 1)/2; then v − u − 1 within row u
  return std::size_t(u) * std::size_t(n) - std::size_t(u) * std::size_t(u + 1) / 2 + std::size_t(v - u - 1);
}

Graph graph_from_mask(int n, std::uint64_t mask) {
  if (n < 2 || n > 11) throw std::invalid_argument("graph_from_mask needs 2 ≤ n ≤ 11 (C(n, 2) ≤ 64 pair bits)");
  const int pairs = n * (n - 1) / 2;
  if (pairs < 64 && (mask >> pairs) != 0) throw std::invalid_argument("mask has bits beyond the C(n, 2) pairs");
  Graph g = empty_graph(n);
  int k = 0;
  for (int u = 0; u < n; ++u)
    for (int v = u + 1; v < n; ++v, ++k)
      if ((mask >> k) & 1u) add_edge(g, u, v);
  return g;
}

std::vector<int> bfs_distances(const Graph& g, int source_vertex) {
  require_vertex(g, source_vertex);
  return bfs_over(g.adj, source_vertex);
}

std::vector<std::vector<int>> all_shortest_paths(const Graph& g, int from, int to, std::size_t max_paths) {
  require_vertex(g, from);
  require_vertex(g, to);
  return shortest_paths_over(g.adj, bfs_over(g.adj, to), from, to, max_paths);  // undirected: dist to `to` = dist from it
}

Graph erdos_renyi(int n, double p, Rng& rng) {
  if (!(p >= 0 && p <= 1)) throw std::invalid_argument("G(n, p) needs p ∈ [0, 1]");
  Graph g = empty_graph(n);
  if (p == 0) return g;
  if (p == 1) {
    for (int v = 1; v < n; ++v)
      for (int w = 0; w < v; ++w) add_edge(g, w, v);
    return g;
  }
  // Batagelj & Brandes (2005), "Efficient generation of large random networks", algorithm G(n, p): walk the pairs
  // (w, v), w < v, in the order v = 1, 2, …, w = 0 … v − 1, jumping over a Geometric(p) number of non-edges.
  const double log_q = std::log1p(-p);
  long long v = 1, w = -1;
  while (v < n) {
    const double r = rng.uniform();  // in [0, 1): log1p(−r) is finite
    const double skip = std::floor(std::log1p(-r) / log_q);
    if (skip >= double(n) * double(n)) break;  // past the last pair (and no overflow below)
    w += 1 + static_cast<long long>(skip);
    while (w >= v && v < n) {
      w -= v;
      ++v;
    }
    if (v < n) add_edge(g, int(w), int(v));  // larger ends arrive in increasing order: O(1) appends
  }
  return g;
}

Digraph directed_erdos_renyi(int n, double p, Rng& rng) {
  if (n < 1) throw std::invalid_argument("a graph needs at least one vertex");
  if (!(p >= 0 && p <= 1)) throw std::invalid_argument("directed G(n, p) needs p ∈ [0, 1]");
  Digraph g{n, std::vector<std::vector<int>>(std::size_t(n))};
  for (int u = 0; u < n; ++u)
    for (int v = 0; v < n; ++v)
      if (v != u && rng.uniform() < p) g.out[std::size_t(u)].push_back(v);
  return g;
}

std::size_t arc_count(const Digraph& g) {
  std::size_t arcs = 0;
  for (const auto& list : g.out) arcs += list.size();
  return arcs;
}

bool has_arc(const Digraph& g, int u, int v) {
  require_vertex(g, u);
  require_vertex(g, v);
  const std::vector<int>& list = g.out[std::size_t(u)];
  return std::binary_search(list.begin(), list.end(), v);
}

std::vector<int> bfs_distances(const Digraph& g, int source_vertex) {
  require_vertex(g, source_vertex);
  return bfs_over(g.out, source_vertex);
}

namespace {

/// Each vertex's distance to `to` along the arcs: BFS from `to` over the reversed arcs.
std::vector<int> distances_to(const Digraph& g, int to) {
  std::vector<std::vector<int>> in(std::size_t(g.n));  // sorted, since u ascends
  for (int u = 0; u < g.n; ++u)
    for (int v : g.out[std::size_t(u)]) in[std::size_t(v)].push_back(u);
  return bfs_over(in, to);
}

}  // namespace

std::vector<std::vector<int>> all_shortest_paths(const Digraph& g, int from, int to, std::size_t max_paths) {
  require_vertex(g, from);
  require_vertex(g, to);
  return shortest_paths_over(g.out, distances_to(g, to), from, to, max_paths);
}

std::vector<int> first_shortest_path(const Digraph& g, int from, int to) {
  require_vertex(g, from);
  require_vertex(g, to);
  const std::vector<int> dist = distances_to(g, to);
  if (dist[std::size_t(from)] < 0) return {};
  std::vector<int> path{from};
  while (path.back() != to) {
    const int v = path.back();
    for (int w : g.out[std::size_t(v)])  // sorted: the first one closer is the smallest
      if (dist[std::size_t(w)] == dist[std::size_t(v)] - 1) {
        path.push_back(w);
        break;
      }
  }
  return path;
}

int source(const Graph& g) {
  require_length2_instance(g);
  return 0;
}

int destination(const Graph& g) {
  require_length2_instance(g);
  return g.n - 1;
}

bool length2_path_by_bfs(const Graph& g) {
  const int s = source(g), d = destination(g);
  const std::vector<int> from_s = bfs_distances(g, s), from_d = bfs_distances(g, d);
  // dist(s, s) = 0 and dist(d, d) = 0, so a vertex at distance 1 from both is neither s nor d.
  for (int w = 0; w < g.n; ++w)
    if (from_s[std::size_t(w)] == 1 && from_d[std::size_t(w)] == 1) return true;
  return false;
}

bool length2_path_brute_force(const Graph& g) {
  const int s = source(g), d = destination(g);
  for (int w = 0; w < g.n; ++w)
    if (w != s && w != d && has_edge(g, s, w) && has_edge(g, w, d)) return true;
  return false;
}

double half_probability_edge(int V) {
  if (V < 3) throw std::invalid_argument("half_probability_edge needs |V| ≥ 3");
  // 1 − 2^{−1/(V−2)} = −expm1(−ln 2/(V − 2)), accurate for large V
  return std::sqrt(-std::expm1(-std::log(2.0) / double(V - 2)));
}

int disj(const Bits& a, const Bits& b) {
  if (a.size() != b.size()) throw std::invalid_argument("set-disjointness needs A, B ∈ {0, 1}^r of the same r");
  int out = 0;
  for (std::size_t i = 0; i < a.size(); ++i) out = std::max(out, int(a[i] != 0) * int(b[i] != 0));
  return out;
}

Graph graph_from_sets(const Bits& a, const Bits& b) {
  if (a.size() != b.size()) throw std::invalid_argument("Lemma D.2 (⟹) needs A, B ∈ {0, 1}^r of the same r");
  if (a.empty()) throw std::invalid_argument("Lemma D.2 (⟹) needs r ≥ 1 items");
  const int r = int(a.size());
  Graph g = empty_graph(r + 2);
  const int alice = 0, bob = r + 1;  // s and d (ERRATA 004: first and last vertex)
  for (int i = 0; i < r; ++i) {
    if (a[std::size_t(i)]) add_edge(g, alice, i + 1);  // L598: "for every element i that Alice has, draw an edge between A and i"
    if (b[std::size_t(i)]) add_edge(g, bob, i + 1);    // L598: "… between B to i"
  }
  return g;
}

SetPair sets_from_graph(const Graph& g) {
  const int s = source(g), d = destination(g);
  SetPair out{Bits(std::size_t(g.n), 0), Bits(std::size_t(g.n), 0)};  // r = |V| (L600)
  for (int v : g.adj[std::size_t(s)]) out.a[std::size_t(v)] = 1;       // "all vertices with an edge with s" → Alice
  for (int v : g.adj[std::size_t(d)]) out.b[std::size_t(v)] = 1;       // "all vertices with an edge with d" → Bob
  return out;
}

void tally_lemma_d2(const Bits& a, const Bits& b, Rng& rng, LemmaD2Tally& t) {
  const int r = int(a.size());
  const int answer = disj(a, b);  // Definition D.1 by its formula: the brute force for set-disjointness
  ++t.instances;
  t.intersecting += answer;
  Graph g = graph_from_sets(a, b);
  t.forward_wrong += int(length2_path_brute_force(g)) != answer;
  const SetPair back = sets_from_graph(g);
  Bits a0(std::size_t(r) + 2, 0), b0(std::size_t(r) + 2, 0);
  std::copy(a.begin(), a.end(), a0.begin() + 1);
  std::copy(b.begin(), b.end(), b0.begin() + 1);
  t.round_trip_wrong += !(back.a == a0 && back.b == b0);
  // Noise for ⟸: the same s and d neighbourhoods, other edges added. Pairs in increasing order of the larger end.
  Graph noisy = empty_graph(g.n);
  for (int v = 1; v < g.n; ++v)
    for (int w = 0; w < v; ++w) {
      const bool in_g = has_edge(g, w, v);
      const bool item_pair = w >= 1 && v <= r;               // both ends items: never on a path s–i–d
      const bool s_to_d = w == 0 && v == r + 1;              // the direct edge: not a length-2 path
      if (in_g || ((item_pair || s_to_d) && (rng.next_u64() >> 63))) add_edge(noisy, w, v);
    }
  const SetPair sets = sets_from_graph(noisy);
  t.backward_wrong += disj(sets.a, sets.b) != int(length2_path_brute_force(noisy));
}

void tally_lemma_d2_backward(const Graph& g, LemmaD2Tally& t) {
  const SetPair sets = sets_from_graph(g);
  const int answer = disj(sets.a, sets.b);
  ++t.instances;
  t.intersecting += answer;
  t.backward_wrong += answer != int(length2_path_brute_force(g));
}

LemmaD2Tally lemma_d2_every_pair(int n, Rng& rng) {
  if (n < 1 || n > 15) throw std::invalid_argument("lemma_d2_every_pair needs 1 ≤ n ≤ 15");
  LemmaD2Tally t;
  Bits a(static_cast<std::size_t>(n), 0), b(static_cast<std::size_t>(n), 0);
  for (std::uint64_t k = 0; k < (std::uint64_t(1) << (2 * n)); ++k) {  // A: bits 0 … n − 1 of k, B: bits n … 2n − 1
    for (int i = 0; i < n; ++i) a[std::size_t(i)] = (k >> i) & 1u, b[std::size_t(i)] = (k >> (n + i)) & 1u;
    tally_lemma_d2(a, b, rng, t);
  }
  return t;
}

LemmaD2Tally lemma_d2_random(int n, long long count, Rng& rng) {
  if (n < 1) throw std::invalid_argument("lemma_d2_random needs n ≥ 1");
  const double q = half_probability_edge(n + 2);
  LemmaD2Tally t;
  Bits a(static_cast<std::size_t>(n), 0), b(static_cast<std::size_t>(n), 0);
  for (long long k = 0; k < count; ++k) {
    for (int i = 0; i < n; ++i) a[std::size_t(i)] = rng.uniform() < q, b[std::size_t(i)] = rng.uniform() < q;
    tally_lemma_d2(a, b, rng, t);
  }
  return t;
}

}  // namespace sparseact::parrots
