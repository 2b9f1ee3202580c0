#pragma once
// Graphs for paper 004 ("Mixture of Parrots") §3.2, §4.1 and App. D.1: simple undirected graphs on the vertices
// 0 … |V| − 1, BFS distances, all shortest paths, Erdős–Rényi G(n, p), the length-2 path problem of
// Definition 3.1, set-disjointness (Definition D.1) and Lemma D.2's two reductions.
//
// Conventions (ERRATA 004, Def. 3.1): the source s is the first vertex, 0, and the destination d the last,
// |V| − 1 (L90 prints "the 0 and |V| vertex", one past the end with vertices 0 … |V| − 1).
//
// "A path of length 2 from s to d" (L90) means two edges s–w and w–d through an intermediate vertex w distinct
// from both s and d. In a simple graph (no loops) w ∉ {s, d} is automatic: w ~ s excludes w = s, w ~ d excludes
// w = d. A direct edge s–d does not matter: with it and a common neighbour, dist(s, d) = 1 yet the length-2 path
// exists. So length2_path is NOT "dist(s, d) = 2"; length2_path_by_bfs reads it off two BFS layers
// (∃ w: dist(s, w) = dist(w, d) = 1) and length2_path_brute_force tries every w.
//
// Header is C++17 (notebooks); sources may be C++20.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <sparseact/core/rng.hpp>

namespace sparseact::parrots {

/// A simple undirected graph on 0 … n − 1: each vertex's neighbours in increasing order, no loops, no
/// repeated edges.
struct Graph {
  int n = 0;                            ///< |V|
  std::vector<std::vector<int>> adj;    ///< adj[v]: the neighbours of v, sorted
};

/// The graph on n ≥ 1 vertices with no edges; throws std::invalid_argument for n < 1.
Graph empty_graph(int n);
/// Adds the edge {u, v}; throws std::invalid_argument for a loop (u = v), a vertex outside 0 … n − 1 or an edge
/// already present. Appending edges in increasing order of their larger end (as erdos_renyi does) costs O(1).
void add_edge(Graph& g, int u, int v);
bool has_edge(const Graph& g, int u, int v);
std::size_t edge_count(const Graph& g);
/// Every edge once as (u, v) with u < v, in lexicographic order.
std::vector<std::pair<int, int>> edges(const Graph& g);

/// The position of {u, v} (u ≠ v) among the C(n, 2) pairs in lexicographic order (0,1), (0,2), …, (0,n−1), (1,2), …
std::size_t pair_index(int n, int u, int v);
/// The graph whose edge set is the bit mask `mask` over pair_index (bit k set: the k-th pair is an edge). Needs
/// C(n, 2) ≤ 64, i.e. 2 ≤ n ≤ 11; enumerating mask = 0 … 2^{C(n,2)} − 1 gives every graph on n labelled vertices.
Graph graph_from_mask(int n, std::uint64_t mask);

/// BFS distances from `source`: the number of edges of a shortest path, −1 where unreachable.
std::vector<int> bfs_distances(const Graph& g, int source);
/// Every shortest path from `from` to `to` as a vertex list (from first), in lexicographic order; empty when
/// unreachable, {{from}} when from = to. Throws std::length_error when there are more than max_paths.
std::vector<std::vector<int>> all_shortest_paths(const Graph& g, int from, int to, std::size_t max_paths = 100000);

/// Erdős–Rényi G(n, p): each of the C(n, 2) pairs is an edge independently with probability p ∈ [0, 1].
/// Geometric skipping over the pairs (Batagelj & Brandes 2005), so the cost is O(n + |E|); one stream per graph.
Graph erdos_renyi(int n, double p, Rng& rng);

// --- Directed graphs (§4.1's shortest-path task: "All the graphs are directed") -------------------------------

/// A simple directed graph on 0 … n − 1: out[v] holds the heads of v's arcs in increasing order, no loops.
struct Digraph {
  int n = 0;
  std::vector<std::vector<int>> out;
};

/// Directed Erdős–Rényi: each of the n(n − 1) ordered pairs (u, v), u ≠ v, is an arc independently with probability
/// p ∈ [0, 1], one uniform per pair in the order u = 0 … n − 1, v = 0 … n − 1 (so a draw at a larger p, from the same
/// stream, holds every arc of one at a smaller p). Needs n ≥ 1.
Digraph directed_erdos_renyi(int n, double p, Rng& rng);
std::size_t arc_count(const Digraph& g);
bool has_arc(const Digraph& g, int u, int v);
/// BFS distances along the arcs from `source`, −1 where unreachable.
std::vector<int> bfs_distances(const Digraph& g, int source);
/// Every shortest directed path from `from` to `to`, in lexicographic order (the first is the canonical one); empty
/// when unreachable. Throws std::length_error when there are more than max_paths.
std::vector<std::vector<int>> all_shortest_paths(const Digraph& g, int from, int to, std::size_t max_paths = 100000);
/// The lexicographically first shortest directed path (all_shortest_paths(…).front(), without enumerating the others):
/// from `from`, step to the smallest out-neighbour one arc closer to `to`. Empty when unreachable.
std::vector<int> first_shortest_path(const Digraph& g, int from, int to);

// --- Definition 3.1: the length-2 path problem ----------------------------------------------------------------

int source(const Graph& g);       ///< s = 0 (ERRATA 004)
int destination(const Graph& g);  ///< d = |V| − 1 (ERRATA 004)

/// Is there a path s–w–d with w ∉ {s, d}? From the BFS layers: ∃ w with dist(s, w) = 1 and dist(d, w) = 1.
/// Needs |V| ≥ 3 (s ≠ d and room for w); throws std::invalid_argument otherwise.
bool length2_path_by_bfs(const Graph& g);
/// The same question by trying every w ∉ {s, d}.
bool length2_path_brute_force(const Graph& g);
/// The edge probability at which P(length-2 path) = 1/2 in G(|V|, p): 1 − (1 − p²)^{|V|−2} = 1/2, so
/// p = (1 − 2^{−1/(|V|−2)})^{1/2} (each of the |V| − 2 candidates w is a common neighbour with probability p²,
/// independently). Needs |V| ≥ 3.
double half_probability_edge(int V);

// --- Definition D.1 and Lemma D.2 --------------------------------------------------------------------------------

/// A set A ⊆ [r] as its indicator vector in {0, 1}^r (Definition D.1, L588).
using Bits = std::vector<std::uint8_t>;

/// Definition D.1's output, max_i A_i B_i: 1 when A and B share an element (not disjoint), 0 when disjoint.
/// Throws std::invalid_argument unless |A| = |B| (the same r).
int disj(const Bits& a, const Bits& b);

/// Lemma D.2 (⟹, L598): the vertices are the r items and two extra vertices for Alice and Bob, an edge Alice–i for
/// every i ∈ A and Bob–i for every i ∈ B. Labels: Alice = 0 = s, item i = vertex i + 1, Bob = r + 1 = d, so
/// |V| = r + 2 (L598: the items are the vertices other than Alice's and Bob's). Needs r ≥ 1.
Graph graph_from_sets(const Bits& a, const Bits& b);

/// Lemma D.2 (⟸, L600): Alice's set is every vertex with an edge to s, Bob's every vertex with an edge to d;
/// r = |V| (L600: "r is the number of vertices"). Needs |V| ≥ 3.
struct SetPair {
  Bits a, b;
};
SetPair sets_from_graph(const Graph& g);

/// Lemma D.2 on instances, against brute force (the work of the analysis's part (a)).
struct LemmaD2Tally {
  long long instances = 0;
  long long intersecting = 0;      ///< disj(A, B) = 1
  long long forward_wrong = 0;     ///< length-2 path in graph_from_sets(A, B) ≠ disj(A, B)
  long long backward_wrong = 0;    ///< disj(sets_from_graph(G)) ≠ length-2 path in G
  long long round_trip_wrong = 0;  ///< sets_from_graph(graph_from_sets(A, B)) ≠ (0, A, 0), (0, B, 0)
};
/// One instance (A, B): ⟹ against the brute-force length-2 path; ⟸ on graph_from_sets(A, B) with noise added
/// (each edge between two items and the edge s–d with probability 1/2, from `rng`: edges that do not change the
/// answer but do change the graph), against brute force; and the round trip.
void tally_lemma_d2(const Bits& a, const Bits& b, Rng& rng, LemmaD2Tally& t);
/// ⟸ alone on a graph (|V| ≥ 3), one instance: adds 1 to backward_wrong when disj(sets_from_graph(g)) ≠ the brute-force answer.
void tally_lemma_d2_backward(const Graph& g, LemmaD2Tally& t);
/// tally_lemma_d2 on every pair (A, B) of subsets of [n] (4^n instances; 1 ≤ n ≤ 15), noise from `rng`.
LemmaD2Tally lemma_d2_every_pair(int n, Rng& rng);
/// tally_lemma_d2 on `count` random pairs of subsets of [n], each element in A (and in B) independently with
/// probability q = half_probability_edge(n + 2), so that P(A ∩ B ≠ ∅) = 1 − (1 − q²)^n = 1/2.
LemmaD2Tally lemma_d2_random(int n, long long count, Rng& rng);

}  // namespace sparseact::parrots
