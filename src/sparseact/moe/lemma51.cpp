#include <sparseact/moe/lemma51.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <sparseact/core/rng.hpp>

namespace sparseact::moe {

Domain parse_domain(const std::string& name) {
  if (name == "cube") return Domain::cube;
  if (name == "ball") return Domain::ball;
  throw std::invalid_argument("domain '" + name + "': use cube or ball");
}

const char* to_string(Domain d) noexcept { return d == Domain::cube ? "cube" : "ball"; }
double domain_diameter(Domain d, int n) { return d == Domain::cube ? std::sqrt(double(n)) : 2.0; }
double domain_radius(Domain d, int n) { return d == Domain::cube ? std::sqrt(double(n)) / 2 : 1.0; }

namespace {

/// log₂ x when x is an exact power of two (x = 2^k, k integer), else NaN.
double exact_log2(double x) {
  int e = 0;
  const double m = std::frexp(x, &e);
  return m == 0.5 ? double(e - 1) : std::nan("");
}

}  // namespace

Lemma51 lemma51(Domain d, int n, int nu, double delta) {
  if (nu < 2) throw std::invalid_argument("Lemma 5.1: the valency ν must be at least 2");
  if (n < 1) throw std::invalid_argument("Lemma 5.1: n must be at least 1");
  if (!(delta > 0 && delta <= domain_radius(d, n))) throw std::invalid_argument("Lemma 5.1: δ must lie in (0, rad K]");
  Lemma51 L;
  L.log2_C = n + 1.0;
  const double ratio = domain_diameter(d, n) / delta;
  const double t = exact_log2(ratio), b = exact_log2(double(nu));
  if (!std::isnan(t) && !std::isnan(b)) {  // h = ⌈(n + 1)(1 + t)/b⌉ in integers
    const long num = long(n + 1) * long(1 + t), den = long(b);
    L.height = int((num + den - 1) / den);
  } else {
    const double x = L.log2_C / std::log2(double(nu)) * (1 + std::log2(ratio));
    L.height = int(std::ceil(x - 1e-12 * std::max(1.0, x)));  // an irrational product is never within 1e-12 of an integer here
  }
  L.leaves = std::pow(double(nu), L.height);
  L.nodes = (std::pow(double(nu), L.height + 1) - 1) / (nu - 1);
  const double steps = std::isnan(t) ? std::ceil(std::log2(ratio)) : t;
  L.net_bound = std::pow(2.0, L.log2_C * steps);
  return L;
}

Eigen::MatrixXd grid_net(Domain d, int n, double delta, long max_points) {
  // Cells of side s = 1/m (cube) or 2/m (ball over [−1, 1]ⁿ); half-diagonal √n s/2 < δ.
  const double span = d == Domain::cube ? 1.0 : 2.0, lo = d == Domain::cube ? 0.0 : -1.0;
  const long m = long(std::floor(span * std::sqrt(double(n)) / (2 * delta))) + 1;
  if (std::pow(double(m), n) > double(max_points)) throw std::length_error("grid δ-net too large");
  long total = 1;
  for (int k = 0; k < n; ++k) total *= m;
  const double s = span / double(m);
  std::vector<Eigen::VectorXd> pts;
  for (long idx = 0; idx < total; ++idx) {
    Eigen::VectorXd c(n);
    long rest = idx;
    for (int k = 0; k < n; ++k, rest /= m) c(k) = lo + (double(rest % m) + 0.5) * s;
    if (d == Domain::ball) {
      // Keep cells that meet the ball (their nearest point to 0 within 1), centres projected into it.
      Eigen::VectorXd nearest = c;
      for (int k = 0; k < n; ++k) nearest(k) = std::clamp(0.0, c(k) - s / 2, c(k) + s / 2);
      if (nearest.norm() > 1) continue;
      if (c.norm() > 1) c /= c.norm();
    }
    pts.push_back(c);
  }
  Eigen::MatrixXd net(n, Eigen::Index(pts.size()));
  for (std::size_t i = 0; i < pts.size(); ++i) net.col(Eigen::Index(i)) = pts[i];
  return net;
}

Eigen::MatrixXd greedy_net(Domain d, int n, double delta, long max_sample) {
  const Eigen::MatrixXd sample = grid_net(d, n, delta / 4, max_sample);  // covering radius ρ < δ/4
  const double target = delta - delta / 4;
  std::vector<double> dist(std::size_t(sample.cols()), INFINITY);
  std::vector<Eigen::Index> chosen;
  Eigen::Index next = 0;
  for (;;) {
    chosen.push_back(next);
    double far = -1;
    Eigen::Index far_at = 0;
    for (Eigen::Index j = 0; j < sample.cols(); ++j) {
      dist[std::size_t(j)] = std::min(dist[std::size_t(j)], (sample.col(j) - sample.col(next)).norm());
      if (dist[std::size_t(j)] > far) far = dist[std::size_t(j)], far_at = j;
    }
    if (far < target) break;
    next = far_at;
  }
  Eigen::MatrixXd net(n, Eigen::Index(chosen.size()));
  for (std::size_t i = 0; i < chosen.size(); ++i) net.col(Eigen::Index(i)) = sample.col(chosen[i]);
  return net;
}

double covering_radius(Domain d, const Eigen::MatrixXd& net, int probes, std::uint64_t seed, std::uint64_t stream) {
  Rng rng(seed, stream);
  const Eigen::Index n = net.rows();
  double worst = 0;
  Eigen::VectorXd x(n);
  for (int p = 0; p < probes; ++p) {
    if (d == Domain::cube) {
      for (auto& v : x) v = rng.uniform();
    } else {  // uniform in the ball: a Gaussian direction, radius U^{1/n}
      for (auto& v : x) v = rng.normal();
      x *= std::pow(rng.uniform(), 1.0 / double(n)) / x.norm();
    }
    worst = std::max(worst, std::sqrt((net.colwise() - x).colwise().squaredNorm().minCoeff()));
  }
  return worst;
}

BuiltTree build_complete_tree(int nu, int height, const Eigen::MatrixXd& net, long max_nodes) {
  BuiltTree t;
  double nodes = 0, level = 1;
  for (int l = 0; l <= height; ++l, level *= nu) nodes += level;
  if (nodes > double(max_nodes) || nu < 2 || height < 0) return t;
  // Level by level: every node of level l < h gets ν children; the leaves take the net's points in order.
  std::vector<std::vector<long>> children(1);
  std::vector<long> frontier{0};
  for (int l = 0; l < height; ++l) {
    std::vector<long> next;
    for (long v : frontier)
      for (int c = 0; c < nu; ++c) {
        const long child = long(children.size());
        children.emplace_back();
        children[std::size_t(v)].push_back(child);
        next.push_back(child);
      }
    frontier = std::move(next);
  }
  // Traverse: count nodes, leaves and depth.
  std::vector<std::pair<long, long>> stack{{0, 0}};
  while (!stack.empty()) {
    const auto [v, depth] = stack.back();
    stack.pop_back();
    ++t.nodes;
    t.height = std::max(t.height, depth);
    if (children[std::size_t(v)].empty()) ++t.leaves;
    for (long c : children[std::size_t(v)]) stack.push_back({c, depth + 1});
  }
  t.built = true;
  t.leaves_contain_net = t.leaves >= net.cols();  // leaf i holds net point min(i, N − 1)
  return t;
}

double eq13_printed_nodes(int nu, int h) {
  if (h == 1) return std::numeric_limits<double>::infinity();
  return (std::pow(double(nu), h + 1) - 1) / (h - 1);
}

Record measure_nets(Domain d, int n, double delta, const std::vector<int>& nus, int probes, std::uint64_t seed, std::uint64_t stream) {
  Record rec;
  const auto measure = [&](const std::string& name, auto&& make) {
    try {
      const Eigen::MatrixXd net = make();
      // The probes' distance computations grow with the net: at most 4e8 point pairs, at least 100 probes.
      const int p = int(std::max<double>(100, std::min<double>(probes, 4e8 / double(std::max<Eigen::Index>(1, net.cols())))));
      rec.set(name + "_size", double(net.cols()));
      rec.set(name + "_cover", covering_radius(d, net, p, seed, stream));
      std::vector<double> trees;
      for (int nu : nus) {
        const BuiltTree t = build_complete_tree(nu, lemma51(d, n, nu, delta).height, net);
        trees.insert(trees.end(), {double(t.built), double(t.height), double(t.leaves), double(t.nodes), double(t.leaves_contain_net)});
      }
      rec.set(name + "_trees", trees);
    } catch (const std::length_error&) {
      rec.set(name + "_size", -1.0);
    }
  };
  measure("grid", [&] { return grid_net(d, n, delta); });
  measure("greedy", [&] { return greedy_net(d, n, delta); });
  return rec;
}

}  // namespace sparseact::moe
