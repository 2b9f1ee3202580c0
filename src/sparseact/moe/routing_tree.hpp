#pragma once
// Routing trees of paper 003 (§3, eq. (7), Example 1, L198): a ν-ary tree whose nodes are points and whose
// leaves are the prototypes p_1 … p_K, and the routers that descend it, each counting the distance
// queries ‖x − v‖ it makes:
//
//   scan    eq. (5) directly: K queries (moe/voronoi.hpp)
//   greedy  at each node, go to the nearest child: ν queries per level, ν⌈log_ν K⌉ in all (the paper's
//           count, L198). Fast, but the nearest child need not hold the nearest prototype: it may misroute.
//   exact   branch and bound on the same tree: a subtree is skipped only when its covering ball is farther
//           than the best prototype so far; returns eq. (5)'s cell, ties included.
//
// build_routing_tree splits the prototypes recursively along their widest coordinate into ≤ ν groups of
// ≤ ν^{h−1} (h = ⌈log_ν(group size)⌉), so the height is exactly ⌈log_ν K⌉; an inner node's point is its
// group's centroid (nodes are points, §3; on Example 1's prototypes this gives its tree, 1/4 and 3/4 inside);
// leaves are the prototypes themselves.
#include <vector>

#include <Eigen/Core>

namespace sparseact::moe {

struct RoutingTree {
  int nu = 2;
  int height = 0;
  Eigen::MatrixXd points;                  ///< node points as columns; node 0 is the root
  std::vector<std::vector<int>> children;  ///< per node
  std::vector<int> prototype;              ///< per node: the prototype a leaf stands for, −1 inside
  std::vector<double> radius;              ///< per node: max ‖v − p‖ over the prototypes p below it
};

/// Throws std::invalid_argument for ν < 2 or no prototypes.
RoutingTree build_routing_tree(const Eigen::MatrixXd& P, int nu);

/// The cell greedy descent gives x (a prototype index), adding its distance queries to *queries.
Eigen::Index route_greedy(const RoutingTree& tree, const Eigen::Ref<const Eigen::VectorXd>& x, long* queries = nullptr);
/// Eq. (5)'s cell (lowest index on exact ties) by branch and bound on the tree.
Eigen::Index route_exact(const RoutingTree& tree, const Eigen::MatrixXd& P, const Eigen::Ref<const Eigen::VectorXd>& x,
                         long* queries = nullptr);

/// Example 1 / Algorithm 1 literally: prototypes 1/8, 3/8, 5/8, 7/8 on R; q₁₁ = I(|x − 1/4| < |x − 3/4|),
/// q₂₁ = I(|x − 1/8| < |x − 3/8|), q₂₂ = I(|x − 5/8| < |x − 7/8|), true → the first child. Returns the
/// 1-based cell. Off the cell boundaries it equals eq. (5); at a tie the strict < sends x right, eq. (5) left.
int example1_cell(double x);

}  // namespace sparseact::moe
