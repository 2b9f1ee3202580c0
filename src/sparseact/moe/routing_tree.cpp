#include <sparseact/moe/routing_tree.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <sparseact/moe/voronoi.hpp>

namespace sparseact::moe {

namespace {

/// ⌈log_ν m⌉ by integer powers (no floating-point logarithm to round up an exact power).
int ceil_log(long m, int nu) {
  int h = 0;
  for (long cap = 1; cap < m; cap *= nu) ++h;
  return h;
}

struct Builder {
  const Eigen::MatrixXd& P;
  int nu;
  std::vector<Eigen::VectorXd> pts;
  std::vector<std::vector<int>> children;
  std::vector<int> prototype;
  std::vector<double> radius;

  int node(const Eigen::VectorXd& point, int proto) {
    pts.push_back(point), children.emplace_back(), prototype.push_back(proto), radius.push_back(0);
    return int(pts.size()) - 1;
  }

  /// A node over the prototypes `ids`; returns its index.
  int build(std::vector<int> ids) {
    if (ids.size() == 1) return node(P.col(ids[0]), ids[0]);
    Eigen::VectorXd centroid = Eigen::VectorXd::Zero(P.rows());
    for (int i : ids) centroid += P.col(i);
    centroid /= double(ids.size());
    const int self = node(centroid, -1);  // Example 1's inner nodes 1/4 and 3/4 are such centroids
    for (int i : ids) radius[std::size_t(self)] = std::max(radius[std::size_t(self)], (P.col(i) - centroid).norm());
    // Widest coordinate, then consecutive chunks of ν^{h−1} along it (ties by index: a stable order).
    Eigen::Index axis = 0;
    double widest = -1;
    for (Eigen::Index k = 0; k < P.rows(); ++k) {
      double lo = INFINITY, hi = -INFINITY;
      for (int i : ids) lo = std::min(lo, P(k, i)), hi = std::max(hi, P(k, i));
      if (hi - lo > widest) widest = hi - lo, axis = k;
    }
    std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return P(axis, a) < P(axis, b); });
    long chunk = 1;
    for (int h = ceil_log(long(ids.size()), nu); h > 1; --h) chunk *= nu;
    for (std::size_t at = 0; at < ids.size(); at += std::size_t(chunk)) {
      std::vector<int> part(ids.begin() + long(at), ids.begin() + long(std::min(ids.size(), at + std::size_t(chunk))));
      const int child = build(std::move(part));
      children[std::size_t(self)].push_back(child);
    }
    return self;
  }
};

}  // namespace

RoutingTree build_routing_tree(const Eigen::MatrixXd& P, int nu) {
  if (nu < 2) throw std::invalid_argument("routing tree: the valency ν must be at least 2");
  if (P.cols() == 0) throw std::invalid_argument("routing tree: no prototypes");
  Builder b{P, nu, {}, {}, {}, {}};
  std::vector<int> all(std::size_t(P.cols()));
  std::iota(all.begin(), all.end(), 0);
  b.build(all);
  RoutingTree t;
  t.nu = nu;
  t.height = ceil_log(long(P.cols()), nu);
  t.points.resize(P.rows(), Eigen::Index(b.pts.size()));
  for (std::size_t i = 0; i < b.pts.size(); ++i) t.points.col(Eigen::Index(i)) = b.pts[i];
  t.children = std::move(b.children), t.prototype = std::move(b.prototype), t.radius = std::move(b.radius);
  return t;
}

Eigen::Index route_greedy(const RoutingTree& tree, const Eigen::Ref<const Eigen::VectorXd>& x, long* queries) {
  const Eigen::VectorXd xv = x;
  int v = 0;
  while (!tree.children[std::size_t(v)].empty()) {
    const auto& kids = tree.children[std::size_t(v)];
    int best = kids[0];
    for (std::size_t c = 1; c < kids.size(); ++c)
      if (compare_distances(xv.data(), tree.points.col(kids[c]).data(), tree.points.col(best).data(), xv.size()) < 0) best = kids[c];
    if (queries) *queries += long(kids.size());
    v = best;
  }
  return tree.prototype[std::size_t(v)];
}

Eigen::Index route_exact(const RoutingTree& tree, const Eigen::MatrixXd& P, const Eigen::Ref<const Eigen::VectorXd>& x, long* queries) {
  const Eigen::VectorXd xv = x;
  Eigen::Index best = -1;
  double best_dist = INFINITY;
  long q = 0;
  // Depth first, nearer child first; a subtree is skipped when its ball lies wholly beyond the best
  // distance with a relative margin far above rounding (a tie must never be pruned away).
  std::vector<std::pair<int, double>> stack{{0, (xv - tree.points.col(0)).norm()}};
  ++q;
  while (!stack.empty()) {
    const auto [v, d] = stack.back();
    stack.pop_back();
    if (d - tree.radius[std::size_t(v)] > best_dist * (1 + 1e-9) + 1e-300) continue;
    const int proto = tree.prototype[std::size_t(v)];
    if (proto >= 0) {
      if (best < 0 || compare_distances(xv.data(), P.col(proto).data(), P.col(best).data(), xv.size()) < 0 ||
          (compare_distances(xv.data(), P.col(proto).data(), P.col(best).data(), xv.size()) == 0 && proto < best))
        best = proto, best_dist = d;
      continue;
    }
    std::vector<std::pair<int, double>> kids;
    for (int c : tree.children[std::size_t(v)]) kids.push_back({c, (xv - tree.points.col(c)).norm()}), ++q;
    std::sort(kids.begin(), kids.end(), [](const auto& a, const auto& b) { return a.second > b.second; });  // nearest popped first
    for (const auto& k : kids) stack.push_back(k);
  }
  if (queries) *queries += q;
  return best;
}

int example1_cell(double x) {
  const bool q11 = std::abs(x - 0.25) < std::abs(x - 0.75);
  if (q11) return std::abs(x - 0.125) < std::abs(x - 0.375) ? 1 : 2;
  return std::abs(x - 0.625) < std::abs(x - 0.875) ? 3 : 4;
}

}  // namespace sparseact::moe
