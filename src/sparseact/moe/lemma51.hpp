#pragma once
// Lemma 5.1 of paper 003 (eqs. (11)–(14), Example 2): a ν-ary tree whose leaves form a δ-net of a compact
// K ⊂ Rⁿ. With C the doubling number of K (≤ 2^{n+1}, Example 2) a δ-net has N_δ ≤ C^{⌈log₂(diam K/δ)⌉}
// points (L500), and the complete ν-ary tree of height
//
//   h = ⌈log_ν(C) · (1 + log₂(diam K / δ))⌉                                     (14), Lemma 5.1 (ii)
//
// has ν^h ≥ N_δ leaves (i) and (ν^{h+1} − 1)/(ν − 1) nodes (iii; printed with h − 1, ERRATA 003). Where
// the argument is an exact integer (ν a power of 2 and diam/δ a power of 2) h is computed in integers, so
// it never rounds up past the exact value.
//
// K ∈ {[0, 1]ⁿ, B̄ₙ(0, 1)}; δ-nets from a grid of cell centres (projected into the ball) or by greedy
// farthest-point insertion on a grid sample of K; covering radii measured on uniform samples of K.
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/record.hpp>

namespace sparseact::moe {

enum class Domain { cube, ball };
/// "cube" or "ball"; throws std::invalid_argument otherwise.
Domain parse_domain(const std::string& name);
const char* to_string(Domain d) noexcept;
double domain_diameter(Domain d, int n);  ///< √n for [0, 1]ⁿ, 2 for the ball
double domain_radius(Domain d, int n);    ///< √n/2, 1 (the smallest enclosing ball's radius, "rad K")

struct Lemma51 {
  double log2_C = 0;  ///< log₂ C = n + 1 (Example 2)
  int height = 0;     ///< (ii), eq. (14)
  double leaves = 0;  ///< (i): ν^h
  double nodes = 0;   ///< (iii): (ν^{h+1} − 1)/(ν − 1)
  double net_bound = 0;  ///< C^{⌈log₂(diam/δ)⌉} (L500)
};
/// Throws std::invalid_argument unless ν ≥ 2, n ≥ 1 and 0 < δ ≤ rad K.
Lemma51 lemma51(Domain d, int n, int nu, double delta);

/// Eq. (13) as printed: V = (ν^{h+1} − 1)/(h − 1) nodes (the denominator should be ν − 1, ERRATA 003); +∞ at h = 1.
/// It equals the complete tree's count exactly when h = ν.
double eq13_printed_nodes(int nu, int h);

/// The grid δ-net: m = ⌊√n/(2δ)⌋ + 1 cells per unit length, their centres (projected into the ball for the
/// ball, whose cells cover [−1, 1]ⁿ), covering radius < δ by construction. Columns; throws
/// std::length_error above `max_points`.
Eigen::MatrixXd grid_net(Domain d, int n, double delta, long max_points = 2'000'000);
/// Greedy farthest-point insertion on a grid sample of K of covering radius ρ (spacing chosen so that
/// ρ ≤ δ/4): points are added until every sample point lies within δ − ρ, so the covering radius over K
/// is < δ. Deterministic (the first farthest point wins).
Eigen::MatrixXd greedy_net(Domain d, int n, double delta, long max_sample = 400'000);
/// max over `probes` uniform points of K (Rng(seed, stream)) of the distance to the nearest net point.
double covering_radius(Domain d, const Eigen::MatrixXd& net, int probes, std::uint64_t seed, std::uint64_t stream);

/// A complete ν-ary tree of height h built node by node (leaves: the net's points, then repeats of its
/// last point), its counts taken by traversal. Not built (built = false) when it would exceed `max_nodes`.
struct BuiltTree {
  bool built = false;
  long height = 0, leaves = 0, nodes = 0;
  bool leaves_contain_net = false;
};
BuiltTree build_complete_tree(int nu, int height, const Eigen::MatrixXd& net, long max_nodes = 5'000'000);

/// One (K, n, δ) cell of momlp_trees: for the grid and the greedy δ-net, `<net>_size` (−1: too large to build
/// here), `<net>_cover` (covering_radius over up to `probes` points, fewer for large nets, Rng(seed, stream))
/// and `<net>_trees`, per ν of `nus` the five numbers built, height, leaves, nodes, leaves_contain_net of the
/// complete ν-ary tree at eq. (14)'s height.
Record measure_nets(Domain d, int n, double delta, const std::vector<int>& nus, int probes, std::uint64_t seed, std::uint64_t stream);

}  // namespace sparseact::moe
