#include <sparseact/parrots/shortest_path.hpp>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>

namespace sparseact::parrots {

namespace {

/// Every ordered pair (s, t), s ≠ t, with t reachable from s, and its distance.
struct ReachablePair {
  int s, t, dist;
};
std::vector<ReachablePair> reachable_pairs(const Digraph& g) {
  std::vector<ReachablePair> pairs;
  for (int s = 0; s < g.n; ++s) {
    const std::vector<int> d = bfs_distances(g, s);
    for (int t = 0; t < g.n; ++t)
      if (t != s && d[std::size_t(t)] > 0) pairs.push_back({s, t, d[std::size_t(t)]});
  }
  return pairs;
}

}  // namespace

PathInstance sample_path_instance(int n, double p, Rng& rng) {
  if (n < 3 || n > 200) throw InputError(fmt::format("shortest-path graphs need 3 ≤ n ≤ 200 vertices (got {})", n));
  if (!(p > 0 && p <= 1)) throw InputError(fmt::format("the edge probability must lie in (0, 1] (got {})", p));
  for (;;) {
    PathInstance x{directed_erdos_renyi(n, p, rng), 0, 0, {}};
    const std::vector<ReachablePair> pairs = reachable_pairs(x.g);
    if (pairs.empty()) continue;
    const ReachablePair& q = pairs[std::size_t(rng.below(pairs.size()))];
    x.s = q.s, x.t = q.t;
    x.path = first_shortest_path(x.g, q.s, q.t);
    return x;
  }
}

std::vector<PathInstance> sample_path_instances(int n, double p, long count, std::uint64_t seed, std::uint64_t stream) {
  std::vector<PathInstance> xs;
  xs.reserve(std::size_t(std::max(0L, count)));
  for (long i = 0; i < count; ++i) {
    Rng rng(seed, stream_id(stream, std::uint64_t(i)));
    xs.push_back(sample_path_instance(n, p, rng));
  }
  return xs;
}

std::vector<int> path_prompt(const PathInstance& x) {
  const PathVocab v{x.g.n};
  std::vector<int> t{v.bos()};
  for (int u = 0; u < x.g.n; ++u)
    for (int w : x.g.out[std::size_t(u)]) t.insert(t.end(), {v.edge(), u, w});
  t.insert(t.end(), {v.sep(), x.s, x.t, v.slash()});
  return t;
}

std::vector<int> path_answer(const PathInstance& x) {
  std::vector<int> a = x.path;
  a.push_back(PathVocab{x.g.n}.eos());
  return a;
}

std::size_t path_sequence_length(const PathInstance& x) { return 1 + 3 * arc_count(x.g) + 4 + x.path.size() + 1; }

nn::Dataset path_dataset(const std::vector<PathInstance>& xs, Eigen::Index length) {
  if (xs.empty()) throw InputError("a shortest-path data set needs at least one graph");
  Eigen::Index longest = 0;
  for (const PathInstance& x : xs) longest = std::max(longest, Eigen::Index(path_sequence_length(x)));
  if (length == 0) length = longest;
  if (longest > length) throw InputError(fmt::format("a shortest-path sequence of {} tokens exceeds the length {}", longest, length));
  const Eigen::Index T = length - 1, N = Eigen::Index(xs.size());
  nn::Dataset d;
  d.x.setConstant(T, N, PathVocab{xs.front().g.n}.pad());
  d.y.setConstant(T, N, -1.0);
  for (Eigen::Index i = 0; i < N; ++i) {
    const PathInstance& x = xs[std::size_t(i)];
    std::vector<int> seq = path_prompt(x);
    const Eigen::Index answer_from = Eigen::Index(seq.size());  // position of v₀
    const std::vector<int> answer = path_answer(x);
    seq.insert(seq.end(), answer.begin(), answer.end());
    for (Eigen::Index p = 0; p + 1 < Eigen::Index(seq.size()); ++p) {
      d.x(p, i) = seq[std::size_t(p)];
      if (p + 1 >= answer_from) d.y(p, i) = seq[std::size_t(p + 1)];  // predict the answer's tokens only
    }
  }
  d.description = fmt::format("{} shortest-path sequences on {} vertices, length {}", N, xs.front().g.n, length);
  return d;
}

bool is_shortest_path_answer(const PathInstance& x, const std::vector<int>& answer) {
  const std::size_t k = x.path.size();  // dist(s, t) + 1 vertices
  if (answer.size() != k + 1 || answer.back() != PathVocab{x.g.n}.eos()) return false;
  if (answer.front() != x.s || answer[k - 1] != x.t) return false;
  for (std::size_t i = 0; i + 1 < k; ++i) {
    const int u = answer[i], w = answer[i + 1];
    if (u < 0 || u >= x.g.n || w < 0 || w >= x.g.n || !has_arc(x.g, u, w)) return false;
  }
  return true;  // k vertices joined by arcs from s to t: a walk of dist(s, t) arcs, hence a shortest path
}

PathScore score_paths(const nn::DecoderShape& s, const Eigen::VectorXd& theta, const std::vector<PathInstance>& xs) {
  PathScore score;
  long valid = 0, canonical = 0;
  for (const PathInstance& x : xs) {
    const std::vector<int> got = nn::greedy_decode(s, theta, path_prompt(x), PathVocab{x.g.n}.eos(), x.g.n + 1);
    const bool ok = is_shortest_path_answer(x, got);
    valid += ok;
    canonical += got == path_answer(x);
    const std::size_t dist = x.path.size() - 1;
    if (score.count_by_distance.size() <= dist) score.count_by_distance.resize(dist + 1, 0), score.valid_by_distance.resize(dist + 1, 0);
    ++score.count_by_distance[dist], score.valid_by_distance[dist] += ok;
  }
  score.count = long(xs.size());
  if (score.count > 0) score.valid = double(valid) / double(score.count), score.canonical = double(canonical) / double(score.count);
  return score;
}

PathRun train_shortest_path(const nn::DecoderShape& s, const nn::Dataset& train, const std::vector<PathInstance>& test, const nn::DecoderTraining& t,
                            std::uint64_t seed, std::uint64_t stream) {
  Eigen::VectorXd theta = nn::init_decoder(s, seed, stream_id(stream, 0));
  PathRun run;
  run.final_loss = nn::train_decoder(s, theta, train, t, seed, stream_id(stream, 1));
  run.test = score_paths(s, theta, test);
  return run;
}

EdgeProbability path_edge_probability(int n, double target, int graphs, std::uint64_t seed) {
  if (n < 3) throw InputError(fmt::format("shortest-path graphs need n ≥ 3 vertices (got {})", n));
  if (graphs < 1) throw InputError("path_edge_probability needs at least one graph per degree");
  std::vector<double> c_grid, mean;
  for (int step = 10; step <= 160; ++step) {
    const double c = 0.05 * step, p = std::min(1.0, c / double(n - 1));
    double sum = 0;
    int counted = 0;
    for (int gi = 0; gi < graphs; ++gi) {
      Rng rng(seed, std::uint64_t(gi));  // the same uniforms at every c
      const std::vector<ReachablePair> pairs = reachable_pairs(directed_erdos_renyi(n, p, rng));
      if (pairs.empty()) continue;
      double within = 0;
      for (const ReachablePair& q : pairs) within += q.dist;
      sum += within / double(pairs.size()), ++counted;
    }
    c_grid.push_back(c), mean.push_back(counted ? sum / counted : 0.0);
  }
  const std::size_t peak = std::size_t(std::max_element(mean.begin(), mean.end()) - mean.begin());
  std::size_t best = peak;
  for (std::size_t i = peak; i < mean.size(); ++i)
    if (std::abs(mean[i] - target) < std::abs(mean[best] - target)) best = i;
  return {std::min(1.0, c_grid[best] / double(n - 1)), mean[best], mean[peak], std::abs(mean[best] - target) <= 0.05};
}

}  // namespace sparseact::parrots
