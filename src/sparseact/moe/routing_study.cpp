#include <sparseact/moe/routing_study.hpp>

#include <algorithm>
#include <cmath>

#include <boost/multiprecision/cpp_int.hpp>
#include <fmt/format.h>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/moe/routing_tree.hpp>
#include <sparseact/moe/kmeans.hpp>
#include <sparseact/moe/voronoi.hpp>

namespace sparseact::moe {

namespace {

constexpr std::uint64_t kRoutingStream = 0x003'0007;

Eigen::MatrixXd dyadic_points(Eigen::Index n, Eigen::Index m, int bits, Rng& rng) {
  Eigen::MatrixXd X(n, m);
  for (auto& v : X.reshaped()) v = double(rng.below(std::uint64_t(1) << bits)) / double(std::uint64_t(1) << bits);
  return X;
}

/// Eq. (5) by brute force in exact rationals, and how many prototypes share the minimum.
std::pair<Eigen::Index, int> brute_cell(const Eigen::VectorXd& x, const Eigen::MatrixXd& P) {
  using R = boost::multiprecision::cpp_rational;
  Eigen::Index best = 0;
  int ties = 0;
  R best_d = -1;
  for (Eigen::Index i = 0; i < P.cols(); ++i) {
    R d = 0;
    for (Eigen::Index k = 0; k < x.size(); ++k) d += (R(x(k)) - R(P(k, i))) * (R(x(k)) - R(P(k, i)));
    if (best_d < 0 || d < best_d) best_d = d, best = i, ties = 1;
    else if (d == best_d) ++ties;
  }
  return {best, ties};
}

int integer_root(int K, int n) {  // m with m^n = K, or 0
  for (int m = 1;; ++m) {
    double p = std::pow(double(m), n);
    if (p == K) return m;
    if (p > K) return 0;
  }
}

}  // namespace

TieStudy tie_study(std::uint64_t seed) {
  TieStudy t;
  Rng rng(seed, kRoutingStream);
  for (Eigen::Index n : {1, 2, 3}) {
    const Eigen::MatrixXd P = dyadic_points(n, 12, 2, rng), X = dyadic_points(n, 400, 3, rng);
    for (Eigen::Index j = 0; j < X.cols(); ++j) {
      const auto [cell, ties] = brute_cell(X.col(j), P);
      ++t.inputs;
      t.tied += ties > 1;
      t.disagreements += voronoi_cell(X.col(j), P) != cell;
    }
  }
  return t;
}

Example1Study example1_study() {
  Example1Study s;
  Eigen::MatrixXd P(1, 4);
  P << 0.125, 0.375, 0.625, 0.875;
  for (int i = 0; i <= 64; ++i) {
    const double x = i / 64.0;
    const auto [cell, ties] = brute_cell(Eigen::VectorXd::Constant(1, x), P);
    s.x.push_back(x), s.cell_eq5.push_back(int(cell) + 1), s.cell_example1.push_back(example1_cell(x));
    if (ties > 1) s.tie_points.push_back(fmt::format("{}/64", i));
    else s.disagreements_off_ties += s.cell_eq5.back() != s.cell_example1.back();
  }
  return s;
}

std::vector<PrototypeSet> split_sets(const std::string& text) {
  std::vector<PrototypeSet> sets;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string name = text.substr(at, end - at);
    if (name == "grid") sets.push_back(PrototypeSet::grid);
    else if (name == "uniform") sets.push_back(PrototypeSet::uniform);
    else if (name == "kmeans") sets.push_back(PrototypeSet::kmeans);
    else throw InputError("--sets '" + text + "': use grid, uniform and/or kmeans, comma-separated");
    at = end + 1;
  }
  return sets;
}

int RoutingConfig::height() const {
  int h = 0;
  for (long cap = 1; cap < K; cap *= nu) ++h;
  return h;
}

std::string RoutingConfig::key() const {
  static const char* names[] = {"grid", "uniform", "user", "kmeans"};
  return fmt::format("set={} n={} K={} nu={}", names[int(set)], n, K, nu);
}

std::vector<RoutingConfig> routing_configs(const std::vector<PrototypeSet>& sets, const std::vector<double>& ns,
                                           const std::vector<double>& Ks, const std::vector<double>& nus) {
  std::vector<RoutingConfig> out;
  for (PrototypeSet s : sets)
    for (double n : ns)
      for (double K : Ks)
        for (double nu : nus) {
          if (s == PrototypeSet::grid && integer_root(int(K), int(n)) == 0) continue;
          out.push_back({s, int(n), int(K), int(nu), {}, {}});
        }
  if (out.empty()) throw InputError("no configuration to run: the grid needs K to be an n-th power");
  return out;
}

std::vector<RoutingConfig> user_configs(const Eigen::MatrixXd& prototypes, const Eigen::MatrixXd& inputs, const std::vector<double>& nus) {
  if (prototypes.rows() < 1 || inputs.rows() < 1 || prototypes.cols() != inputs.cols())
    throw InputError(fmt::format("--prototypes ({}×{}) and --inputs ({}×{}) need at least one row each and the same columns n",
                                 prototypes.rows(), prototypes.cols(), inputs.rows(), inputs.cols()));
  if (!prototypes.allFinite() || !inputs.allFinite()) throw InputError("--prototypes, --inputs: NaN or infinite entries");
  const Eigen::MatrixXd P = prototypes.transpose(), X = inputs.transpose();
  for (Eigen::Index i = 0; i < P.cols(); ++i)
    for (Eigen::Index j = 0; j < i; ++j)
      if (P.col(i) == P.col(j)) throw InputError(fmt::format("--prototypes: rows {} and {} are equal (eq. (5) needs distinct prototypes)", j, i));
  std::vector<RoutingConfig> out;
  for (double nu : nus) out.push_back({PrototypeSet::user, int(P.rows()), int(P.cols()), int(nu), P, X});
  return out;
}

RoutingResult run_routing(const RoutingConfig& c, int inputs, std::uint64_t seed, std::uint64_t index) {
  Rng rng(seed, stream_id(kRoutingStream, index));
  Eigen::MatrixXd P, X;
  if (c.set == PrototypeSet::user) {
    P = c.user_prototypes, X = c.user_inputs;
  } else {
    P.resize(c.n, c.K);
    if (c.set == PrototypeSet::grid) {
      const int m = integer_root(c.K, c.n);
      for (int k = 0; k < c.K; ++k)
        for (int d = 0, rest = k; d < c.n; ++d, rest /= m) P(d, k) = (rest % m + 0.5) / m;  // cell centres
    } else if (c.set == PrototypeSet::kmeans) {  // §6.2's prototypes: centroids of the data (here uniform in [0,1]^n)
      Eigen::MatrixXd sample(c.n, std::max(4 * c.K, 2000));
      for (auto& v : sample.reshaped()) v = rng.uniform();
      P = kmeans(sample, c.K, seed, stream_id(kRoutingStream, index + (std::uint64_t(1) << 40)), {.max_iter = 10}).centroids;
    } else {
      for (auto& v : P.reshaped()) v = rng.uniform();
    }
    X.resize(c.n, inputs);
    for (auto& v : X.reshaped()) v = rng.uniform();
  }
  const RoutingTree tree = build_routing_tree(P, c.nu);
  const Eigen::Index M = X.cols();
  const std::size_t count = static_cast<std::size_t>(M);
  std::vector<Eigen::Index> truth(count), greedy(count), exact(count);
  std::vector<long> qs(count, 0), qg(count, 0), qe(count, 0);
  RoutingResult r;
  for (Eigen::Index j = 0; j < M; ++j) {
    const std::size_t s = std::size_t(j);
    truth[s] = voronoi_cell(X.col(j), P, &qs[s]);
    greedy[s] = route_greedy(tree, X.col(j), &qg[s]);
    exact[s] = route_exact(tree, P, X.col(j), &qe[s]);
    r.covering_radius = std::max(r.covering_radius, (X.col(j) - P.col(truth[s])).norm());
  }
  const auto stats = [&](const std::vector<Eigen::Index>& cell, const std::vector<long>& q) {
    RouterStats st;
    long total = 0, wrong = 0, far = 0;
    for (Eigen::Index j = 0; j < M; ++j) {
      const std::size_t s = std::size_t(j);
      total += q[s];
      st.queries_max = std::max(st.queries_max, double(q[s]));
      wrong += cell[s] != truth[s];
      far += (X.col(j) - P.col(cell[s])).norm() > r.covering_radius;
    }
    st.queries_mean = double(total) / double(M), st.misroute_rate = double(wrong) / double(M), st.far_rate = double(far) / double(M);
    return st;
  };
  r.scan = stats(truth, qs), r.greedy = stats(greedy, qg), r.exact = stats(exact, qe);
  return r;
}

Record to_record(const RoutingResult& r) {
  Record rec;
  const auto put = [&](const std::string& name, const RouterStats& s) {
    rec.set(name, std::vector<double>{s.queries_mean, s.queries_max, s.misroute_rate, s.far_rate});
  };
  put("scan", r.scan), put("greedy", r.greedy), put("exact", r.exact);
  rec.set("covering_radius", r.covering_radius);
  return rec;
}

RoutingResult routing_result_from(const Record& rec) {
  const auto get = [&](const std::string& name) {
    const auto& v = rec.arr(name);
    return RouterStats{v.at(0), v.at(1), v.at(2), v.at(3)};
  };
  return {get("scan"), get("greedy"), get("exact"), rec.num("covering_radius")};
}

}  // namespace sparseact::moe
